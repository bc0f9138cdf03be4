#!/bin/bash
# The rdma push channel across two hosts: two Soft-RoCE guests on a private link (harness/rxe-2hosts.sh).
#   harness/push-2hosts.sh [--nic] [COUNT]     (from the repository root; builds what it needs first)
# Guest A runs a PushSender, guest B a PushReceiver (thallus-rdma's PushTwoHostsMain, a test-scope main); they meet
# through files in a folder of the shared working tree, connect their queue pairs across the link, and A pushes COUNT
# (default 2000) messages of 1 to 50,000 bytes through B's 256 KiB ring of 16 messages; B checks every byte and the
# order. --nic: a 9000-byte link (path MTU 4096) and rxe's ICRC off in both guests. Exit status: B's, 0 when every
# message arrived whole and in order. Between guests every packet crosses UML's signal-driven network path: a
# behaviour check, not a throughput figure.
set -euo pipefail
mtu=1500; icrc=1
if [[ "${1:-}" == --nic ]]; then mtu=9000; icrc=0; shift; fi
count=${1:-2000}
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source "$root/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "push-2hosts: needs a JDK 25 or newer" >&2; exit 1; }
cp_file="$(mktemp)"
meet="$root/thallus-rdma/target/push-2hosts-$$"
rm -rf "$meet"; mkdir -p "$meet"
trap 'rm -rf "$cp_file" "$meet"' EXIT
# Test classes and the module's test class path, built in place (nothing installed): the reactor's last module,
# thallus-rdma, writes the file last.
JAVA_HOME="$jdk" ./mvnw -q -pl thallus-rdma -am test-compile dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile="$cp_file" >&2
classpath="$root/thallus-rdma/target/test-classes:$root/thallus-rdma/target/classes:$(cat "$cp_file")"
q() { printf '%q ' "$@"; }
main="$(q "$jdk/bin/java" --enable-native-access=ALL-UNNAMED -Xmx1g -cp "$classpath" \
  io.thallus.rdma.push.PushTwoHostsMain)"
TWO_MTU=$mtu TWO_ICRC=$icrc exec "$root/harness/rxe-2hosts.sh" \
  "$main sender $(q "$meet") $count" \
  "$main receiver $(q "$meet") $count"
