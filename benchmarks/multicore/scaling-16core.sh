#!/usr/bin/env bash
# Issue 36's measurements on a larger machine: builds a bundle here (a jlinked JDK 25 with JFR and a class path
# without the Flight SQL JDBC driver, Flight or gRPC, by ../shared/tools/multicore/bundle.sh), then, on the bare
# 16-core machine, runs the scaling benchmark's full plan and, separately, a profiling run (JFR) at K = 16 over shm.
# See benchmarks/multicore/README.md.
#
# Usage (from the repository root):
#   benchmarks/multicore/scaling-16core.sh bundle            # here: build, pack into benchmarks/target/multicore-bundle
#   benchmarks/multicore/scaling-16core.sh scaling [plan]    # there: ScalingBench --plan full (or the plan given)
#   benchmarks/multicore/scaling-16core.sh profile [plan]    # there: the same plan at K = 16 over shm, read, under JFR
#   benchmarks/multicore/scaling-16core.sh split             # there: one 10M x 8 query as 1..16 parallel streams
#   benchmarks/multicore/scaling-16core.sh ingest [plan]     # there: ingest only, K = 1 and 16 over shm and cma, with
#                                                            #   8 and then 32 credits per client (how far receiving
#                                                            #   must run ahead of DuckDB's workers)
#   benchmarks/multicore/scaling-16core.sh shard             # there: issue 38's sharded Q1, three `thallus serve`
#                                                            #   processes pinned to 4 cores each vs one pinned to 4
#   benchmarks/multicore/scaling-16core.sh all [plan]        # there: scaling, then profile
# Results go under $OUT (the device machine's folder that comes back), else benchmarks/target/multicore-out.
# Environment: SCALING_LIMIT_S and PROFILE_LIMIT_S (seconds, default 480 and 150) bound each run; PROFILE_CLIENTS
# (default 16) and PROFILE_ONLY (read or ingest, default read) narrow the profiling run; SPLIT_LIMIT_S (default
# 240) bounds the split run; INGEST_LIMIT_S (default 130) bounds each of the ingest step's two runs; SHARD_LIMIT_S
# (default 480) bounds the shard step, SHARD_SF (default 10), SHARD_CORES (4), SHARD_RUNS (5), SHARD_PINS (taskset
# lists of the three servers, ';' between; default consecutive blocks of SHARD_CORES from core 0), SHARD_ONE_PIN
# (default the first block) and SHARD_COORDINATOR_PIN (the measuring JVM; default the fourth block when the machine
# has it) shape it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
# MULTICORE_BUNDLE: another folder (a copy, to try the bundle here without unpacking into what is carried).
bundle="${MULTICORE_BUNDLE:-$root/benchmarks/target/multicore-bundle}"
out="${OUT:-$root/benchmarks/target/multicore-out}"
step="${1:-}"
plan="${2:-full}"

# Jars the scaling benchmark never loads (checked with -Xlog:class+load, see the README): the Flight SQL JDBC driver
# (45 MB), Flight, gRPC, protobuf and Netty's HTTP codecs, the Flight SQL and JDBC modules, JMH, the plotting
# library and the test fixtures. Everything else of the benchmarks module's runtime class path stays.
unused='/(flight-sql-jdbc-driver|flight-core|flight-sql|grpc-[a-z-]*|protobuf-[a-z-]*|proto-google-[a-z-]*|thallus-flightsql|thallus-jdbc|thallus-testsuite|junit-[a-z-]*|opentest4j|apiguardian-api|assertj-core|xchart|pdfbox[a-z-]*|fontbox|graphics2d|VectorGraphics2D|animated-gif-lib|jmh-core|jopt-simple|commons-math3|perfmark-api|gson|animal-sniffer-annotations|annotations|guava|failureaccess|listenablefuture|j2objc-annotations|jsr305|error_prone_annotations|javax.annotation-api|netty-codec-http2?|netty-codec-socks|netty-handler-proxy)-[^/]*\.jar$'

make_bundle() {
  local packer="${THALLUS_BUNDLE_SH:-$root/../shared/tools/multicore/bundle.sh}"
  [[ -x "$packer" ]] || packer=/work/shared/tools/multicore/bundle.sh
  [[ -x "$packer" ]] || { echo "scaling-16core: bundle.sh not found (set THALLUS_BUNDLE_SH)" >&2; exit 1; }
  ./mvnw -q -o -pl benchmarks -am package dependency:build-classpath -DskipTests \
    -Dmdep.outputFile=target/runtime-classpath.txt -Dmdep.includeScope=runtime
  local classpath
  classpath="$root/benchmarks/target/classes:$(tr ':' '\n' < benchmarks/target/runtime-classpath.txt \
    | grep -Ev "$unused" | paste -sd: -)"
  "$packer" "$bundle" "$classpath"
  # The commit the bundle was built from, for machine.txt on the other side.
  echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD 2>/dev/null || echo -dirty)" > "$bundle/commit"
  echo "bundle in $bundle: carry benchmarks/target/multicore-bundle to the device machine"
}

# Runs java from the bundle for at most $1 seconds (then TERM: the JVM's shutdown hooks run, JFR dumps).
java_in_bundle() {
  local limit=$1
  shift
  [[ -f "$bundle/run.sh" ]] || { echo "scaling-16core: no bundle at $bundle (run the bundle step first)" >&2; exit 1; }
  # Heap for the batches held in client memory; direct memory for K clients' and the server's batches at once.
  # JAVA_PIN: a taskset cpu list to run the JVM on (the shard step's measuring JVM).
  ${JAVA_PIN:+taskset -c "$JAVA_PIN"} timeout "$limit" bash "$bundle/run.sh" -Xmx16g -XX:MaxDirectMemorySize=64g \
    -Dthallus.commit="$(cat "$bundle/commit")" "$@"
}

facts() {
  mkdir -p "$out"
  { date -u; nproc; lscpu 2>/dev/null || cat /proc/cpuinfo | head -30; free -g 2>/dev/null || head -3 /proc/meminfo
    df -h /dev/shm 2>/dev/null || true; uname -a; } > "$out/machine-facts.txt" 2>&1
}

scaling() {
  facts
  echo "scaling benchmark, plan $plan, at most ${SCALING_LIMIT_S:-480} s ..."
  java_in_bundle "${SCALING_LIMIT_S:-480}" io.thallus.benchmarks.ScalingBench --plan "$plan" --out "$out/scaling" \
    2>&1 | tee "$out/scaling.log" \
    || echo "scaling run stopped (time limit or failure): what it measured is in $out/scaling" | tee -a "$out/scaling.log"
}

# Every thread's CPU (user + system clock ticks) of a process, by name: Java's threads and DuckDB's own workers,
# which JFR does not see. Sampled at the start and the end of the profiled run; the difference says where the cores
# went.
thread_ticks() {
  local pid=$1
  for task in /proc/"$pid"/task/*; do
    [[ -r "$task/stat" ]] || continue
    # Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
    awk -v name="$(cat "$task/comm" 2>/dev/null)" '{ sub(/^.*\) /, ""); print name "\t" $12 + $13 }' "$task/stat"
  done
}

profile() {
  facts
  local folder="$out/profile"
  mkdir -p "$folder"
  local clients="${PROFILE_CLIENTS:-16}"
  local only="${PROFILE_ONLY:-read}"
  echo "profiling run: plan $plan at K = $clients over shm ($only), JFR, at most ${PROFILE_LIMIT_S:-150} s ..."
  java_in_bundle "${PROFILE_LIMIT_S:-150}" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints \
    "-XX:StartFlightRecording=filename=$folder/k$clients-shm.jfr,settings=profile,dumponexit=true" \
    io.thallus.benchmarks.ScalingBench --plan "$plan" --clients "$clients" --rounds 2 --transports shm \
    --only "$only" --out "$folder" > "$folder/profile.log" 2>&1 &
  local limiter=$! pid=""
  # The JVM: the process named java whose command line names this run's recording (under timeout and run.sh).
  for _ in $(seq 1 50); do
    for proc in /proc/[0-9]*; do
      if [[ "$(cat "$proc/comm" 2>/dev/null)" == java ]] \
          && tr '\0' ' ' < "$proc/cmdline" 2>/dev/null | grep -q "$folder/k$clients-shm.jfr"; then
        pid=${proc#/proc/}
      fi
    done
    [[ -n "$pid" ]] && break
    sleep 0.2
  done
  if [[ -n "$pid" ]]; then
    thread_ticks "$pid" > "$folder/threads-start.tsv" || true
    while kill -0 "$pid" 2>/dev/null; do
      thread_ticks "$pid" > "$folder/threads-end.tsv.new" 2>/dev/null \
        && mv "$folder/threads-end.tsv.new" "$folder/threads-end.tsv" || true
      sleep 2
    done
  fi
  wait "$limiter" || echo "profiling run ended with status $? (124: its time limit)" | tee -a "$folder/profile.log"
  # CPU seconds per thread name over the run (ticks are 1/100 s on Linux x86-64), threads named alike summed.
  awk -F'\t' 'NR == FNR { start[$1] += $2; next } { end[$1] += $2 }
    END { for (n in end) printf "%10.1f  %s\n", (end[n] - start[n]) / 100, n }' \
    "$folder/threads-start.tsv" "$folder/threads-end.tsv" 2>/dev/null | sort -rn > "$folder/threads-cpu.txt" || true
  local jfr="$folder/k$clients-shm.jfr"
  if [[ -s "$jfr" ]]; then
    for view in hot-methods thread-cpu-load contention-by-site native-methods allocation-by-site cpu-load gc \
        safepoints; do
      "$bundle/jre/bin/jfr" view --width 200 "$view" "$jfr" > "$folder/jfr-$view.txt" 2>&1 || true
    done
    "$bundle/jre/bin/jfr" summary "$jfr" > "$folder/jfr-summary.txt" 2>&1 || true
  fi
  cat "$folder/profile.log"
  head -25 "$folder/threads-cpu.txt" 2>/dev/null || true
}

# Issue 36's one-query target: one 10M x 8 query split into parallel streams against DuckDB's plain single-stream
# export in the same run (SplitBench needs neither Flight nor the suite's fixture, so it runs from the bundle).
split() {
  facts
  mkdir -p "$out/split"
  echo "split streams, 10M x 8, 1..16 streams over shm, tcp and cma, at most ${SPLIT_LIMIT_S:-240} s ..."
  java_in_bundle "${SPLIT_LIMIT_S:-240}" io.thallus.benchmarks.SplitBench 10000000 65536 1,2,4,8,16 shm,tcp,cma \
    2>&1 | tee "$out/split/split-streams.md" \
    || echo "split run stopped (time limit or failure)" | tee -a "$out/split/split-streams.md"
}

# Ingest on many cores: DuckDB converts and inserts one ingest's batches on all its workers, taking them one at a time
# from the server's queue (docs/decisions/ingest-on-many-cores.md); whether 8 credits keep that queue ahead of 16
# workers is what the two runs tell (same plan, ingest sections only, K = 1 and 16, shm and cma).
ingest() {
  facts
  for credits in 8 32; do
    local folder="$out/ingest-credits$credits"
    mkdir -p "$folder"
    echo "ingest, plan $plan, K = 1 and 16 over shm and cma, $credits credits, at most ${INGEST_LIMIT_S:-130} s ..."
    java_in_bundle "${INGEST_LIMIT_S:-130}" io.thallus.benchmarks.ScalingBench --plan "$plan" --only ingest \
      --clients 1,16 --transports shm,cma --ingest-credits "$credits" --out "$folder" 2>&1 | tee "$folder.log" \
      || echo "ingest run stopped (time limit or failure): what it measured is in $folder" | tee -a "$folder.log"
  done
}

# Issue 38's 16-core target, server side (Spark's jars cannot be carried): TPC-H Q1 as Spark's plan runs it over a
# sharded lineitem (each shard's partial aggregate on its own server at once, merged by the measuring JVM), three
# `thallus serve` processes pinned with taskset to SHARD_CORES cores each against one pinned to SHARD_CORES holding
# every part (the same partials, and Q1 whole). Data made on the machine by DuckDB (ShardScalingBench says how).
shard() {
  facts
  command -v taskset > /dev/null || { echo "scaling-16core: the shard step needs taskset (util-linux)" >&2; exit 1; }
  local cores="${SHARD_CORES:-4}"
  local coordinator="${SHARD_COORDINATOR_PIN:-}"
  if [[ -z "$coordinator" && "$(nproc --all)" -ge $((4 * cores)) ]]; then
    coordinator="$((3 * cores))-$((4 * cores - 1))"
  fi
  local options=(--sf "${SHARD_SF:-10}" --shards 3 --cores "$cores" --runs "${SHARD_RUNS:-5}"
    --work "${SHARD_WORK:-/tmp/shard-scaling}" --out "$out/shard")
  [[ -n "${SHARD_PINS:-}" ]] && options+=(--pins "$SHARD_PINS")
  [[ -n "${SHARD_ONE_PIN:-}" ]] && options+=(--one-pin "$SHARD_ONE_PIN")
  mkdir -p "$out/shard"
  echo "sharded Q1: 3 servers of $cores cores vs one, sf ${SHARD_SF:-10}, measuring JVM on cpus ${coordinator:-any}," \
    "at most ${SHARD_LIMIT_S:-480} s ..."
  JAVA_PIN="$coordinator" java_in_bundle "${SHARD_LIMIT_S:-480}" io.thallus.benchmarks.ShardScalingBench \
    "${options[@]}" 2>&1 | tee "$out/shard.log" \
    || echo "shard run stopped (time limit or failure): see $out/shard.log" | tee -a "$out/shard.log"
}

case "$step" in
  bundle) make_bundle ;;
  scaling) scaling ;;
  profile) profile ;;
  split) split ;;
  ingest) ingest ;;
  shard) shard ;;
  all) scaling; profile ;;
  *) sed -n '2,25p' "$0" >&2; exit 2 ;;
esac
