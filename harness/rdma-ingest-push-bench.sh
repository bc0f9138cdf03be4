#!/bin/bash
# rdma's ingest by READ (the server pulls each body) against by WRITE (the client pushes it into the server's ring),
# side by side in one Soft-RoCE guest run:
#   harness/rdma-ingest-push-bench.sh [--nic]     (from the repository root; builds what it needs first)
# Runs thallus-rdma's IngestTransferBenchmarkMain (a test-scope main; server and client in one JVM on rxe0): 8 BIGINT
# columns, batches of 256 KiB, 1 MiB and 4 MiB with the default ring (8 MiB), then 4 MiB and 16 MiB with a 64 MiB
# ring; three timed rounds per point, the transfers alternating. --nic: the NIC-like guest (MTU 4096, rxe's
# software ICRC off). One guest, one vCPU: the figures compare the two transfers with each other, not with a NIC.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[[ "${1:-}" == --nic ]] && export RXE_VM_NIC=1
source "$root/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "rdma-ingest-push-bench: needs a JDK 25 or newer" >&2; exit 1; }
cp_file="$(mktemp)"
trap 'rm -f "$cp_file"' EXIT
# Test classes and the module's test class path, built in place (nothing installed).
JAVA_HOME="$jdk" ./mvnw -q -pl thallus-rdma -am test-compile dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile="$cp_file" >&2
classpath="$root/thallus-rdma/target/test-classes:$root/thallus-rdma/target/classes:$(cat "$cp_file")"
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' "$root/pom.xml")"
export RXE_VM_TSC_CLOCK=1 RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-1800}
# Points (batch rows) and volume may be narrowed for a quick look: BENCH_SMALL, BENCH_LARGE, BENCH_ROWS, BENCH_ROUNDS.
points="${BENCH_ROWS:-4194304} ${BENCH_ROUNDS:-3}"
exec "$root/harness/rxe-vm.sh" bash -c '
  points=$1; small=$2; large=$3; java=$4; shift 4
  echo "link: netdev MTU $(cat /sys/class/net/rxenet0/mtu), ICRC $(cat /sys/module/rdma_rxe/parameters/icrc 2>/dev/null || echo "on (no switch)")"
  if [ -n "$small" ]; then
    "$java" "$@" -Dthallus.rdma.pushRingBytes=8388608 io.thallus.rdma.transport.IngestTransferBenchmarkMain \
      $points $small || exit $?
  fi
  if [ -n "$large" ]; then
    "$java" "$@" -Dthallus.rdma.pushRingBytes=67108864 io.thallus.rdma.transport.IngestTransferBenchmarkMain \
      $points $large || exit $?
  fi' rdma-ingest-push-bench "$points" "${BENCH_SMALL-4096 16384 65536}" "${BENCH_LARGE-65536 262144}" \
  "$jdk/bin/java" "${flags[@]}" --enable-native-access=ALL-UNNAMED -Xmx1g \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$classpath"
