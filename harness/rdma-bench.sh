#!/bin/bash
# Java RDMA READ next to perftest, in one Soft-RoCE guest run:  harness/rdma-bench.sh  (from the repository root;
# builds what it needs first). Builds the classpath on the host, then runs everything inside the guest.
# perftest's "MB/sec" is MiB/s (its message rate times the size says so); the Java lines print MiB/s too.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source "$root/harness/classpath.sh"
classpath="$(harness_classpath "$root")" || exit 1
source "$root/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "rdma-bench: needs a JDK 25 or newer (JAVA_HOME, PATH or /usr/lib/jvm)" >&2; exit 1; }
java_bin="$jdk/bin/java"
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' "$root/pom.xml")"
# Every program in the guest reads the clock from the TSC, as on a host (see harness/tsc-time.c).
export RXE_VM_TSC_CLOCK=1
exec "$root/harness/rxe-vm.sh" bash -c '
  set -u
  java_cmd=("$@")
  gidx=1
  perf() {
    local tool=$1; shift
    $tool -d rxe0 -x $gidx -F "$@" > /tmp/srv.log 2>&1 & local server=$!
    sleep 1
    timeout 120 $tool -d rxe0 -x $gidx -F "$@" 127.0.0.1 > /tmp/cli.log 2>&1 || cat /tmp/cli.log
    wait $server || true
    echo "perftest $tool $*:"; sed -n "/#bytes/,/^---/p" /tmp/cli.log | grep -v "^-*$"
  }
  for round in 1 2; do
    echo "== round $round"
    perf ib_read_bw -s 65536 -n 2000
    "${java_cmd[@]}" bw 65536 2000
    "${java_cmd[@]}" bwspin 65536 2000
    perf ib_read_bw -s 1048576 -n 500
    "${java_cmd[@]}" bw 1048576 500
    "${java_cmd[@]}" bwspin 1048576 500
    perf ib_read_lat -s 64 -n 2000
    "${java_cmd[@]}" lat 64 2000
  done
' rdma-bench "$java_bin" "${flags[@]}" -cp "$classpath" io.thallus.harness.ReadBenchmarkMain
