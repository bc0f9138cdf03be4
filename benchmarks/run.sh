#!/usr/bin/env bash
# The full benchmark suite (issue 8) in one command: builds benchmarks/target/benchmarks.jar, runs the paper's
# experiments with every peer side by side (Suite: results.json, summary.md, machine.txt, PNG plots), the JDBC
# session work (JdbcSessionBench: jdbc-session.md), ingest (IngestBench: ingest.md), Flight SQL (FlightSqlBench:
# flight-sql.md), then the JMH benchmarks
# (jmh.json), all into benchmarks/results/<UTC date>/; the clients as users run them (clients.py: clients.md); many
# clients at once (ScalingBench: scaling/scaling.md, scaling/scaling.csv, scaling.log). About 16 minutes on a 2-core
# machine (Suite 2, ingest 4, scaling 2, clients 3, Flight SQL 2, JMH 2, the build).
# Usage: benchmarks/run.sh [--plan full|tiny] [--scaling-plan full|small|tiny] [--out folder] [--no-jmh] [--no-build]
#   [--jar benchmarks.jar]
# The scaling plan is small by default (it fits 2 cores), tiny with --plan tiny; its full plan is for a 16-core
# machine (benchmarks/multicore/).
# --jar runs another build's benchmarks.jar (say, of the commit before a change, with its short commit id in a file
# named commit next to it) for a before/after comparison.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
plan=full
scaling_plan=""
out="benchmarks/results/$(date -u +%F)"
jmh=yes
build=yes
jar="$root/benchmarks/target/benchmarks.jar"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --plan) plan="$2"; shift 2 ;;
    --scaling-plan) scaling_plan="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-jmh) jmh=no; shift ;;
    --no-build) build=no; shift ;;
    --jar) jar="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; build=no; shift 2 ;;
    *) echo "usage: benchmarks/run.sh [--plan full|tiny] [--scaling-plan full|small|tiny] [--out folder] [--no-jmh]" \
         "[--no-build] [--jar benchmarks.jar]" >&2
       exit 2 ;;
  esac
done
if [[ "$build" == yes ]]; then
  ./mvnw -q -pl benchmarks -am package -DskipTests
fi
source "$root/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "benchmarks: needs a JDK 25 or newer (JAVA_HOME, PATH or /usr/lib/jvm)" >&2; exit 1; }
java_bin="$jdk/bin/java"
# The JVM flags Arrow needs, from their one place in the root pom.
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' pom.xml)"
mkdir -p "$out"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo -dirty)"
if [[ "$jar" != "$root/benchmarks/target/benchmarks.jar" ]]; then
  # Another build's jar: its commit, if a file named commit lies next to it.
  commit="$(cat "$(dirname "$jar")/commit" 2>/dev/null || basename "$jar")"
fi
"$java_bin" "${flags[@]}" -Xmx8g -XX:MaxDirectMemorySize=12g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -Dthallus.commit="$commit" -cp "$jar" io.thallus.benchmarks.Suite --plan "$plan" --out "$out" \
  2>&1 | tee "$out/suite.log"
# JDBC with a session, side by side with DuckDB's own driver: executeBatch, a point query, a commit loop.
session_args=(100000 5 2000 1000)
[[ "$plan" == tiny ]] && session_args=(10000 2 200 100)
"$java_bin" "${flags[@]}" -Xmx6g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar" \
  io.thallus.benchmarks.JdbcSessionBench "${session_args[@]}" 2> "$out/jdbc-session.log" | tee "$out/jdbc-session.md"
# Ingest side by side: Thallus per transport, Arrow Flight DoPut and DuckDB in process into the same engine.
ingest_args=(10000000 3 131072 20000)
[[ "$plan" == tiny ]] && ingest_args=(200000 1 65536 2000)
"$java_bin" "${flags[@]}" -Xmx10g -XX:MaxDirectMemorySize=12g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$jar" io.thallus.benchmarks.IngestBench "${ingest_args[@]}" 2> "$out/ingest.log" | tee "$out/ingest.md"
# Many clients at once (issue 36): K clients per transport, read and ingest, end to end and transport only, next to K
# in-process readers or writers of plain DuckDB and of the engine. (A jar of a build before it has no ScalingBench:
# that step fails alone, said so.)
[[ -z "$scaling_plan" ]] && { scaling_plan=small; [[ "$plan" == tiny ]] && scaling_plan=tiny; }
"$java_bin" "${flags[@]}" -Xmx10g -XX:MaxDirectMemorySize=12g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -Dthallus.commit="$commit" -cp "$jar" io.thallus.benchmarks.ScalingBench --plan "$scaling_plan" \
  --out "$out/scaling" 2>&1 | tee "$out/scaling.log" || echo "ScalingBench failed; see $out/scaling.log" >&2
# Clients as users run them (issue 35), against one thallus serve: ADBC's SELECT 1 beside pyarrow.flight's, a wide read
# and an ingest through ADBC beside DuckDB in process (Python, a pinned venv under benchmarks/target), and a wide read
# through jdbc:thallus beside DuckDB's JDBC driver and Arrow's Flight SQL JDBC driver (clients.md).
# (A jar of a build before the script has no ClientJdbcBench: that step fails alone, said so.)
python3 benchmarks/clients.py --plan "$plan" --out "$out" --java "$java_bin" --jar "$jar" 2> "$out/clients.log" \
  || echo "clients.py failed; see $out/clients.log" >&2
# Flight SQL side by side: this server's Flight SQL door, a Thallus client on its fast lane, a plain Flight SQL server
# over DuckDB; one-row latency through each JDBC driver.
flight_args=(10000000 5 2000)
[[ "$plan" == tiny ]] && flight_args=(200000 1 200)
"$java_bin" "${flags[@]}" -Xmx10g -XX:MaxDirectMemorySize=12g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$jar" io.thallus.benchmarks.FlightSqlBench "${flight_args[@]}" 2> "$out/flight-sql.log" | tee "$out/flight-sql.md"
if [[ "$jmh" == yes ]]; then
  # JMH forks inherit these flags; short iterations on purpose (the sweeps above are the main measurement).
  jmh_args=(-f 1 -wi 2 -w 1s -i 3 -r 1s -rf json -rff "$out/jmh.json")
  [[ "$plan" == tiny ]] && jmh_args=(-f 1 -wi 0 -i 1 -r 200ms -rf json -rff "$out/jmh.json")
  "$java_bin" "${flags[@]}" -Xmx6g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -jar "$jar" "${jmh_args[@]}" \
    2>&1 | tee "$out/jmh.log"
fi
echo "results in $out"
