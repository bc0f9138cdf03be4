#!/bin/bash
# The rdma transport across two hosts: two Soft-RoCE guests on a private link (harness/rxe-2hosts.sh).
#   harness/rdma-2hosts.sh [--nic]      (from the repository root; builds what it needs first)
# Guest A serves (`thallus serve --transports rdma,tcp`); guest B, in order:
#   1. pulls 10M x 8 BIGINT in 64K-row batches over rdma and over tcp (checksums checked), then ib_read_bw at 4 MiB
#      against A, the figures side by side;
#   2. reads a large result slowly while A takes its link down: B's client must fail within its deadline (20 s),
#      and A's server, its link back, must hold no batch memory for the stream (its metrics say);
#   3. starts a read and SIGKILLs its own client midway: A's metrics must show the stream and its batch memory
#      freed within 60 s;
#   4. reads again while A's host goes away (A powers its guest off): B must fail within its deadline.
# --nic: a 9000-byte link (path MTU 4096) and rxe's ICRC off in both guests. Exit status: 0 when every check held.
set -euo pipefail
mtu=1500; icrc=1
if [[ "${1:-}" == --nic ]]; then mtu=9000; icrc=0; shift; fi
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
./mvnw -q -DskipTests -pl thallus-cli -am install >/tmp/rdma-2hosts-build.log 2>&1 || { cat /tmp/rdma-2hosts-build.log; exit 1; }
source "$root/harness/classpath.sh"
classpath="$(harness_classpath "$root")" || exit 1
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' "$root/pom.xml")"
source "$root/harness/jdk.sh"; java="$(find_jdk)/bin/java"
# The two guests meet in a folder of the (shared, read-write) working tree.
meet="$root/harness/target/2hosts-$$"
rm -rf "$meet"; mkdir -p "$meet/data"
trap 'rm -rf "$meet"' EXIT
q() { printf '%q ' "$@"; }
client="$(q "$java" "${flags[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$classpath" io.thallus.harness.RemotePullMain)"

server_cmd="
  meet=$(q "$meet")
  ./thallus serve --data-root \$meet/data --host \$SELF --port 47470 --transports rdma,tcp --metrics-port 9100 \
    > \$meet/serve.log 2>&1 &
  until [ -e \$meet/pulls-done ]; do sleep 0.2; done
  ib_read_bw -d rxe0 -x 1 -F -s 4194304 -n 200 > /dev/null 2>&1
  until [ -e \$meet/cut-next ]; do sleep 0.2; done
  sleep 6; echo \"A: link down\"; ip link set vec0 down; sleep 40; ip link set vec0 up; echo \"A: link up\"
  sleep 30
  held=\$(curl -s http://\$SELF:9100/metrics | awk '/^thallus_batch_memory_held/{print \$2}')
  streams=\$(curl -s http://\$SELF:9100/metrics | awk '/^thallus_streams_open/{print \$2}')
  echo \"A: after the cut, batch memory held \$held bytes, streams open \$streams\"
  echo \"\$held \$streams\" > \$meet/after-cut
  until [ -e \$meet/kill-next ]; do sleep 0.2; done
  sleep 6; echo \"A: powering off\"; echo o > /proc/sysrq-trigger; sleep 30"

client_cmd="
  set -e
  meet=$(q "$meet"); client=$(q "$client")
  echo \"B: link \$(cat /sys/class/net/vec0/mtu) bytes, rxe active MTU code \$(ibv_devinfo -d rxe0 | awk '/active_mtu/{print \$2}'),\
 ICRC \$(cat /sys/module/rdma_rxe/parameters/icrc)\"
  \$client pull thallus+rdma://\$PEER:47470 10000000 65536 3
  \$client pull thallus+tcp://\$PEER:47470 10000000 65536 3
  touch \$meet/pulls-done
  for i in \$(seq 40); do ib_read_bw -d rxe0 -x 1 -F -s 4194304 -n 200 \$PEER > /tmp/ib.log 2>&1 && break; sleep 0.5; done
  echo 'B: perftest ib_read_bw -s 4194304 (MB/sec = MiB/s):'; sed -n '/#bytes/,/^---/p' /tmp/ib.log | grep -v '^-*\$'
  touch \$meet/cut-next
  \$client fail thallus+rdma://\$PEER:47470 200000000 65536 20
  for i in \$(seq 200); do [ -e \$meet/after-cut ] && break; sleep 0.5; done
  read held streams < \$meet/after-cut
  if [ \"\${held%.*}\" != 0 ] || [ \"\${streams%.*}\" != 0 ]; then echo \"FAILED: A holds \$held bytes in \$streams streams\"; exit 1; fi
  echo 'B: the server freed the cut stream'
  \$client fail thallus+rdma://\$PEER:47470 200000000 65536 20 > /tmp/killed.log 2>&1 &
  victim=\$!
  sleep 8
  before=\$(curl -s http://\$PEER:9100/metrics | awk '/^thallus_streams_open/{print \$2}')
  if [ \"\${before%.*}\" != 1 ]; then echo \"FAILED: the read to kill was not running (A has \$before streams)\"; cat /tmp/killed.log; exit 1; fi
  kill -9 \$victim; echo 'B: a client killed (SIGKILL) in the middle of a read (A had 1 stream open)'
  freed=no
  for i in \$(seq 120); do
    metrics=\$(curl -s http://\$PEER:9100/metrics)
    held=\$(echo \"\$metrics\" | awk '/^thallus_batch_memory_held/{print \$2}')
    streams=\$(echo \"\$metrics\" | awk '/^thallus_streams_open/{print \$2}')
    if [ \"\${held%.*}\" = 0 ] && [ \"\${streams%.*}\" = 0 ]; then freed=yes; break; fi
    sleep 0.5
  done
  if [ \$freed != yes ]; then echo \"FAILED: A still holds \$held bytes in \$streams streams after the kill\"; exit 1; fi
  echo \"B: A freed the killed client's stream and its batch memory within \$(( (i + 1) / 2 )) s\"
  touch \$meet/kill-next
  \$client fail thallus+rdma://\$PEER:47470 200000000 65536 20
  echo 'ALL CHECKS HELD'"
set +e
TWO_MTU=$mtu TWO_ICRC=$icrc TWO_TIMEOUT="${TWO_TIMEOUT:-1500}" "$root/harness/rxe-2hosts.sh" "$server_cmd" "$client_cmd"
status=$?
echo "server log:"; sed "s/^/  /" "$meet/serve.log" 2>/dev/null | grep -v "^  WARNING" | tail -20
exit $status
