#!/bin/bash
# Thallus transports inside one Soft-RoCE guest run, next to perftest at the same message sizes:
#   harness/transport-bench.sh [--nic]   (from the repository root; builds what it needs first)
# --nic: the NIC-like guest (rxe-vm.sh's RXE_VM_NIC=1: a 9000-byte link, so path MTU 4096, and rxe's software ICRC
# off), perftest at MTU 4096 too; without it, the test command's guest (1500-byte link, MTU 1024, ICRC on).
# 10M rows x 8 BIGINT at 64K-row (4 MiB) and 1M-row (64 MiB) batches, a 1-row result, ib_read_bw at 4 and 64 MiB,
# and what registering a batch in place costs next to copying it into pre-registered memory. rdma runs three ways
# at 4, 16 and 64 MiB: every batch copied into the pool, every batch exposed in place, and the default
# (thallus.rdma.inPlaceBytes: in place from its threshold up), so the crossover is measured in one run.
set -euo pipefail
mtu=1024
if [[ "${1:-}" == --nic ]]; then
  export RXE_VM_NIC=1
  mtu=4096
  shift
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
./mvnw -q -DskipTests -pl thallus-cli -am install >/tmp/transport-bench-build.log 2>&1 || { cat /tmp/transport-bench-build.log; exit 1; }
source "$root/harness/classpath.sh"
classpath="$(harness_classpath "$root")" || exit 1
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' "$root/pom.xml")"
export RXE_VM_TIMEOUT="${RXE_VM_TIMEOUT:-3600}"
# 1M-row batches of 64 MiB over three transports take more than the default 4 GiB guest.
export RXE_VM_MEM="${RXE_VM_MEM:-8G}"
# Every program in the guest reads the clock from the TSC, as on a host (see harness/tsc-time.c).
export RXE_VM_TSC_CLOCK=1
exec "$root/harness/rxe-vm.sh" bash -c '
  set -u
  root=$1; classpath=$2; mtu=$3; shift 3; flags=("$@")
  cd "$root"
  echo "link: netdev MTU $(cat /sys/class/net/rxenet0/mtu), rxe active MTU code $(ibv_devinfo -d rxe0 | awk "/active_mtu/{print \$2}"), ICRC $(cat /sys/module/rdma_rxe/parameters/icrc 2>/dev/null || echo "on (no switch)")"
  # A first pull of each kind, untimed: a fresh guest pays for its first page faults and pins, which made the first
  # point of a run up to a third slower than the same point later.
  ./thallus demo --rows 10000000 --batch-rows 65536 --runs 1 --transports rdma,tcp >/dev/null 2>&1
  for batch in 65536 262144 1048576; do
    echo "== rdma, every batch copied into pre-registered memory (-Dthallus.rdma.inPlaceBytes=9223372036854775807)"
    JDK_JAVA_OPTIONS=-Dthallus.rdma.inPlaceBytes=9223372036854775807 \
      ./thallus demo --rows 10000000 --batch-rows $batch --runs 5 --transports rdma 2>/dev/null
    echo "== rdma, every batch exposed in place (-Dthallus.rdma.inPlaceBytes=0)"
    JDK_JAVA_OPTIONS=-Dthallus.rdma.inPlaceBytes=0 \
      ./thallus demo --rows 10000000 --batch-rows $batch --runs 5 --transports rdma 2>/dev/null
    echo "== the defaults"
    if [ $batch = 262144 ]; then transports=rdma,tcp; else transports=rdma,tcp,ipc; fi
    ./thallus demo --rows 10000000 --batch-rows $batch --runs 5 --transports $transports 2>/dev/null
  done
  ./thallus demo --rows 1 --batch-rows 1 --runs 201 --warmups 2000 --transports rdma,tcp,ipc 2>/dev/null
  source "$root/harness/jdk.sh"; java="$(find_jdk)/bin/java"
  "$java" "${flags[@]}" -cp "$classpath" io.thallus.harness.RegistrationCostMain
  for size in 4194304:200 16777216:50 67108864:20; do
    ib_read_bw -d rxe0 -x 1 -m $mtu -F -s ${size%:*} -n ${size#*:} > /tmp/srv.log 2>&1 & server=$!
    sleep 1
    timeout 300 ib_read_bw -d rxe0 -x 1 -m $mtu -F -s ${size%:*} -n ${size#*:} 127.0.0.1 > /tmp/cli.log 2>&1 || cat /tmp/cli.log
    wait $server || true
    echo "perftest ib_read_bw -s ${size%:*} (MB/sec = MiB/s):"; sed -n "/#bytes/,/^---/p" /tmp/cli.log | grep -v "^-*$"
  done
' transport-bench "$root" "$classpath" "$mtu" "${flags[@]}"
