#!/bin/bash
# RDMA READ against RDMA WRITE with immediate and the push channel, in one Soft-RoCE guest run:
#   harness/verbs-push-bench.sh [--nic]     (from the repository root; builds what it needs first)
# Runs thallus-rdma's PushBenchmarkMain (a test-scope main) for 64 KiB, 1 MiB and 4 MiB messages, three rounds each,
# modes alternating. --nic: the NIC-like guest (MTU 4096, rxe's software ICRC off, 64 KiB kernel stacks).
# One guest, one vCPU: the figures compare the verbs with each other; they are not a NIC's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[[ "${1:-}" == --nic ]] && export RXE_VM_NIC=1
source "$root/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "verbs-push-bench: needs a JDK 25 or newer" >&2; exit 1; }
cp_file="$(mktemp)"
trap 'rm -f "$cp_file"' EXIT
# Test classes and the module's test class path, built in place (nothing installed): the reactor's last module,
# thallus-rdma, writes the file last.
JAVA_HOME="$jdk" ./mvnw -q -pl thallus-rdma -am test-compile dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile="$cp_file" >&2
classpath="$root/thallus-rdma/target/test-classes:$root/thallus-rdma/target/classes:$(cat "$cp_file")"
# Every program in the guest reads the clock from the TSC, as on a host (see harness/tsc-time.c).
export RXE_VM_TSC_CLOCK=1 RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-900}
exec "$root/harness/rxe-vm.sh" bash -c '
  for point in "65536 10000" "1048576 2000" "4194304 500"; do
    "$@" $point 3 || exit $?
  done' verbs-push-bench "$jdk/bin/java" --enable-native-access=ALL-UNNAMED -Xmx2g -cp "$classpath" \
  io.thallus.rdma.push.PushBenchmarkMain
