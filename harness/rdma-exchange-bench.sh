#!/bin/bash
# The exchange's pull against its push over rdma, and the same over tcp, side by side in one Soft-RoCE guest run:
#   harness/rdma-exchange-bench.sh [--nic] [out-folder]     (from the repository root; builds benchmarks.jar first)
# Runs benchmarks' ExchangeBench (a coordinator and two worker JVMs, each an exchange endpoint; push and pull
# alternate within each round) inside the guest: first with rdma's ingests (the pushes) by READ, the default, then
# by size (RDMA WRITE with immediate for bodies up to half the reducer's ring, READ above), rdma alone (the setting
# does not touch tcp). Each ExchangeBench run
# has a watchdog: past BENCH_LIMIT seconds it prints the workers' stacks (jstack), "STALLED", and the guest goes on
# to the next run. One guest, one vCPU, three JVMs on it: the figures compare pull with push and rdma with tcp in
# the same run, not with a NIC.
# Sizes (environment): BENCH_ROWS (default 33554432 longs: 256 MiB of map output, 8 maps x 16 partitions, 2 MiB
# each), BENCH_MAPS (8), BENCH_PARTITIONS (16), BENCH_RUNS (3), BENCH_TRANSFERS ("read by-size"), BENCH_LIMIT (1200),
# BENCH_RING (the reducers' rdma push ring in bytes; default the transport's 8 MiB).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
guest=default
if [[ "${1:-}" == --nic ]]; then
  export RXE_VM_NIC=1
  guest=nic
  shift
fi
out="${1:-benchmarks/results/$(date -u +%F)-rdma-exchange}"
mkdir -p "$out"
source "$root/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "rdma-exchange-bench: needs a JDK 25 or newer" >&2; exit 1; }
JAVA_HOME="$jdk" ./mvnw -q -pl benchmarks -am package -DskipTests >&2
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' "$root/pom.xml")"
# The reducers' push ring (rdma's default 8 MiB: by-size then writes bodies up to 4 MiB, and the exchange's 4 MiB
# chunks end just above that, so most go by READ; 16 MiB writes them all).
[[ -n "${BENCH_RING:-}" ]] && flags+=("-Dthallus.rdma.pushRingBytes=$BENCH_RING")
stamp="$guest-$(date -u +%H%M)"
{ date -u; uptime; nproc; } > "$out/machine-$stamp.txt"
export RXE_VM_TSC_CLOCK=1 RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-3000}
"$root/harness/rxe-vm.sh" bash -c '
  java=$1; rows=$2; maps=$3; partitions=$4; runs=$5; transfers=$6; limit=$7; shift 7
  echo "guest: $(nproc) vCPU, $(awk "/MemTotal/ {print int(\$2/1024)}" /proc/meminfo) MiB,"\
    "netdev MTU $(cat /sys/class/net/rxenet0/mtu), ICRC $(cat /sys/module/rdma_rxe/parameters/icrc 2>/dev/null || echo on)"
  status=0
  # tcp with the first transfer only: the setting is rdma'"'"'s alone.
  transports=rdma,tcp
  for transfer in $transfers; do
    echo "== rdma ingests (the pushes) by $transfer; transports $transports"
    "$java" "$@" -Dthallus.rdma.ingestTransfer=$transfer -cp benchmarks/target/benchmarks.jar \
      io.thallus.benchmarks.exchange.ExchangeBench --rows $rows --maps $maps --partitions $partitions --workers 2 \
      --transports $transports --runs $runs --warmups 1 &
    bench=$!
    waited=0
    while kill -0 $bench 2>/dev/null && [ $waited -lt $limit ]; do
      sleep 5
      waited=$((waited + 5))
    done
    if kill -0 $bench 2>/dev/null; then
      echo "STALLED: ExchangeBench (ingests by $transfer) still running after $limit s; the stacks:"
      for pid in $(pgrep -P $bench) $bench; do
        timeout 120 "$(dirname "$java")/jstack" $pid || echo "jstack $pid failed"
      done
      pkill -KILL -P $bench || true
      kill -KILL $bench || true
      status=124
    fi
    wait $bench || status=$?
    transports=rdma
  done
  exit $status' rdma-exchange-bench "$jdk/bin/java" "${BENCH_ROWS:-33554432}" "${BENCH_MAPS:-8}" \
  "${BENCH_PARTITIONS:-16}" "${BENCH_RUNS:-3}" "${BENCH_TRANSFERS:-read by-size}" "${BENCH_LIMIT:-1200}" \
  "${flags[@]}" -Xmx1g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn 2>&1 | tee "$out/guest-$stamp.txt"
exit "${PIPESTATUS[0]}"
