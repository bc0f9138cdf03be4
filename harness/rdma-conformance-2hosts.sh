#!/bin/bash
# The rdma conformance suite across two hosts: two Soft-RoCE guests on a private link (harness/rxe-2hosts.sh).
#   harness/rdma-conformance-2hosts.sh [--nic]      (from the repository root; builds what it needs first)
# Guest A serves (`thallus serve --transports rdma --metrics-port 9100`); guest B runs RdmaConformanceTest against it
# with JUnit's ConsoleLauncher in the suite's remote mode (-Dthallus.conformance.server, -Dthallus.conformance.metrics):
# every test talks to A's server over rdma and reads what A holds from A's metrics. At the end B stops A's server
# (SIGTERM), whose close fails on memory still outstanding, and prints its exit status. The suite runs twice: against
# a server with the defaults (its batches, all under 16 MiB, copied into registered memory), then against one that
# exposes every out-of-line batch in place (-Dthallus.rdma.inPlaceBytes=0: a registration per buffer, a READ each).
# --nic: a 9000-byte link (path MTU 4096) and rxe's ICRC off in both guests. About three minutes once built (the
# suite itself takes about a minute, twice). CONFORMANCE_CLASSPATH: a class path that has thallus-cli, thallus-rdma's tests and
# JUnit's ConsoleLauncher (the test command passes its own); without it the script builds them.
# Exit status: 0 when every test of the suite was successful, 125 when the guests could not be set up.
set -euo pipefail
mtu=1500; icrc=1
if [[ "${1:-}" == --nic ]]; then mtu=9000; icrc=0; shift; fi
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [[ -n "${CONFORMANCE_CLASSPATH:-}" ]]; then
  server_classpath=$CONFORMANCE_CLASSPATH; suite_classpath=$CONFORMANCE_CLASSPATH
else
  # One reactor build: the CLI for A, thallus-rdma's tests for B, and each module's test class path written beside
  # it (target/test-classpath.txt), which names this tree's jars rather than whatever the local repository holds.
  ./mvnw -q -DskipTests -pl thallus-cli,thallus-rdma -am package dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt >/tmp/rdma-conformance-2hosts-build.log 2>&1 \
    || { cat /tmp/rdma-conformance-2hosts-build.log; exit 1; }
  server_classpath="$root/thallus-cli/target/classes:$(cat "$root/thallus-cli/target/test-classpath.txt")"
  suite_classpath="$root/thallus-rdma/target/test-classes:$root/thallus-rdma/target/classes"
  suite_classpath="$suite_classpath:$(cat "$root/thallus-rdma/target/test-classpath.txt")"
fi
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' "$root/pom.xml")"
source "$root/harness/jdk.sh"; java="$(find_jdk)/bin/java"
# The two guests meet in a folder of the (shared, read-write) working tree.
meet="$root/harness/target/conformance-2hosts-$$"
rm -rf "$meet"; mkdir -p "$meet/data-copy" "$meet/data-in-place"
trap 'rm -rf "$meet"' EXIT
q() { printf '%q ' "$@"; }
# `thallus serve` as ./thallus runs it, from a class path rather than the CLI's jar: nothing is built in a guest.
serve_copy="$(q "$java" "${flags[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$server_classpath" \
  io.thallus.cli.ThallusCli serve)"
serve_in_place="$(q "$java" "${flags[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -Dthallus.rdma.inPlaceBytes=0 -cp "$server_classpath" io.thallus.cli.ThallusCli serve)"
jvm="$(q "$java" "${flags[@]}" -Xmx1536m -XX:MaxDirectMemorySize=4g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$suite_classpath")"
launcher="$(q org.junit.platform.console.ConsoleLauncher execute \
  --select-class=io.thallus.rdma.transport.RdmaConformanceTest --include-tag=rdma-device \
  --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests)"

# For each way of serving, A serves until B says it is done, then stops its server the way a service manager would.
server_cmd="
  meet=$(q "$meet"); serve_copy=$(q "$serve_copy"); serve_in_place=$(q "$serve_in_place")
  for mode in copy in-place; do
    if [ \$mode = copy ]; then serve=\$serve_copy; else serve=\$serve_in_place; fi
    \$serve --data-root \$meet/data-\$mode --host \$SELF --port 47470 --transports rdma --metrics-port 9100 \
      > \$meet/serve-\$mode.log 2>&1 &
    server=\$!
    for i in \$(seq 3000); do [ -e \$meet/done-\$mode ] && break; sleep 1; done
    kill -TERM \$server; wait \$server; echo \$? > \$meet/serve-exited-\$mode
  done"

client_cmd="
  meet=$(q "$meet"); jvm=$(q "$jvm"); launcher=$(q "$launcher")
  echo \"B: link \$(cat /sys/class/net/vec0/mtu) bytes, rxe active MTU code \$(ibv_devinfo -d rxe0 | awk '/active_mtu/{print \$2}'),\
 ICRC \$(cat /sys/module/rdma_rxe/parameters/icrc)\"
  metrics=http://\$PEER:9100/metrics
  count() { sed -n \"s/^\[ *\([0-9]*\) \$1 *\]\$/\1/p\" \$meet/suite-\$mode.log; }
  all=yes
  for mode in copy in-place; do
    for i in \$(seq 240); do curl -sf http://\$PEER:9100/health > /dev/null && break; sleep 0.5; done
    if ! curl -sf http://\$PEER:9100/health > /dev/null; then echo 'FAILED: A is not serving after 2 minutes'; touch \$meet/done-\$mode; exit 1; fi
    echo \"B: A serves (\$mode) at \$PEER:47470; the suite starts \$(date -u +%H:%M:%S) UTC\"
    start=\$(date +%s)
    \$jvm -Dthallus.conformance.server=\$PEER:47470 -Dthallus.conformance.metrics=\$metrics \
      \$launcher --reports-dir=\$meet/reports-\$mode 2>&1 | grep -v '^SLF4J' | tee \$meet/suite-\$mode.log
    rc=\${PIPESTATUS[0]}
    seconds=\$(( \$(date +%s) - start ))
    echo \"B: seconds per test (\$mode):\"
    sed -n 's/.*<testcase name=\"\([^\"]*\)\".* time=\"\([^\"]*\)\".*/  \2  \1/p' \$meet/reports-\$mode/*.xml 2>/dev/null | sort -rn
    echo \"B: A's gauges after the suite: \$(curl -s \$metrics | grep -E '^thallus_(batch_memory_held_bytes|streams_open|clients) ' | tr '\n' ' ')\"
    touch \$meet/done-\$mode
    for i in \$(seq 200); do [ -s \$meet/serve-exited-\$mode ] && break; sleep 0.2; done
    # 143 is the signal's status, after the server has closed; a close that failed prints its error in the server log.
    echo \"B: A's server (\$mode), stopped with SIGTERM, exited \$(cat \$meet/serve-exited-\$mode 2>/dev/null || echo '(not within 40 s)')\"
    found=\$(count 'tests found'); ok=\$(count 'tests successful'); failed=\$(count 'tests failed')
    echo \"B: \$mode: \${ok:-0} of \${found:-0} tests successful, \${failed:-?} failed, \$(count 'tests skipped') skipped, in \$seconds s\"
    if [ \$rc = 0 ] && [ \"\$failed\" = 0 ] && [ \"\$(count 'containers failed')\" = 0 ] && [ \"\${found:-0}\" -gt 0 ] \
        && [ \"\$ok\" = \"\$found\" ]; then
      echo \"B: \$mode: every test successful\"
    else
      echo \"B: \$mode: FAILED (ConsoleLauncher exited \$rc)\"; all=no
    fi
  done
  if [ \$all = yes ]; then echo 'ALL TESTS SUCCESSFUL'; else echo FAILED; exit 1; fi"
set +e
TWO_MTU=$mtu TWO_ICRC=$icrc TWO_TIMEOUT="${TWO_TIMEOUT:-2400}" \
  "$root/harness/rxe-2hosts.sh" "$server_cmd" "$client_cmd"
status=$?
for mode in copy in-place; do
  echo "server log ($mode):"; sed "s/^/  /" "$meet/serve-$mode.log" 2>/dev/null | grep -v "^  WARNING" | tail -20
done
exit $status
