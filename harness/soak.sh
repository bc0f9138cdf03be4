#!/usr/bin/env bash
# The hardening soak (not part of the test command): a `thallus serve` with a token, a users file, a --database, a
# Flight SQL port and a metrics port, attacked on loopback for a bounded time by idle strangers on the control port,
# the tcp data port and the Flight port, greedy clients (the most credits allowed, never reading), native and Flight
# session hoarders, corrupt batches on every transport and over Flight DoPut, unread DoGets, huge messages and a
# metrics-port slowloris, and checked by honest clients: queries on every transport and over Flight SQL, a /health
# probe and a writer committing one row at a time to the database. Attackers hold the token (the native hoarder a
# login of its own) and come from loopback addresses of their own (but for the four native corrupt-batch senders,
# whose client picks no local address); honest clients log in as a user of their own from
# 127.0.0.1, so per-credential and per-address quotas see what a server on a network would. It passes when every
# honest call was right, the server's RSS stayed under the bound, its descriptors came back, no log line repeated
# more than 5 times a second, and after a kill -9 and a restart every row the server acknowledged is there.
# Everything runs on 127.0.0.0/8 and stops by itself.
# Usage: harness/soak.sh [seconds=300] [rss bound MB=3500] [idle=1000] [data=1000] [greedy=4] [honest=4]
# The RSS bound is the sum of what the server is configured to hold, plus a stated overhead: the heap (-Xmx1g, 1024
# MB), the native port's Arrow budget (--batch-memory 512 MiB: its connections' batches, frames and shm segments), the
# Flight SQL port's Arrow budget (the same --batch-memory, 512 MiB: its sessions' batches and results on their way
# out), DuckDB's --memory-limit (1 GB, 954 MiB), and 512 MB for what no budget counts (metaspace and code, thread
# stacks, gRPC's and Netty's own buffers for messages and frames, DuckDB's allocations outside its limit):
# 1024 + 512 + 512 + 954 + 512 = 3514, rounded down to 3500. The server runs with --connection-idle-timeout-ms 15000,
# so a connection its client left quiet (on either port) is closed within the soak's 30 s wait for descriptors.
# SOAK_SERVER_JAR runs another build's CLI jar as the server (say an older commit's, for a before/after), with
# SOAK_SERVER_LIMITS in place of this build's limit flags; SOAK_CORRUPT=0 sends no corrupt batches (to see what else a
# server that dies of the first one would do).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
seconds="${1:-300}"
bound="${2:-3500}"
source "$root/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "soak: needs a JDK 25 or newer" >&2; exit 1; }
JAVA_HOME="$jdk" ./mvnw -q -DskipTests -pl thallus-cli,benchmarks -am package
flags="$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' pom.xml)"
# Two thousand strangers need more descriptors than a default shell allows, on both sides.
ulimit -n "$(ulimit -Hn)"
work="$(mktemp -d)"
# SOAK_KEEP_LOG=FILE keeps the server's log there (the soak's folder is removed at the end).
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
  [[ -n "${SOAK_KEEP_LOG:-}" ]] && cp "$work/server.log" "$SOAK_KEEP_LOG"; rm -rf "$work"' EXIT
mkdir "$work/data" "$work/db"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/token"
# Honest clients log in as "honest"; the native session hoarder as "hoarder" (every other attacker holds the token).
secret() { head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
printf 'honest:%s\nhoarder:%s\n' "$(secret)" "$(secret)" > "$work/users"
chmod 600 "$work/token" "$work/users"
jar="${SOAK_SERVER_JAR:-thallus-cli/target/thallus.jar}"
# An older build (SOAK_SERVER_JAR) may know no users file: then the honest actors hold the token too.
users=()
if "$jdk/bin/java" $flags -jar "$jar" serve --help 2>&1 | grep -q -- --users-file; then
  users=(--users-file "$work/users")
fi
start_server() {
  local log="$work/${2:-server}.log"
  # shellcheck disable=SC2086
  "$jdk/bin/java" $flags -Xmx1g -XX:-UsePerfData -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
    -jar "$jar" serve --data-root "$work/data" --port "$1" --token-file "$work/token" "${users[@]}" \
    --database "$work/db/soak.duckdb" --flight-sql-port 0 --metrics-port 0 \
    --memory-limit 1GB ${SOAK_SERVER_LIMITS---batch-memory 536870912 --connection-idle-timeout-ms 15000} > "$log" 2>&1 &
  server=$!
  port=""
  for _ in $(seq 1 150); do
    port="$(sed -n 's/^thallus serving .*:\([0-9][0-9]*\) over .*/\1/p' "$log" | head -1)"
    flight="$(sed -n 's/^flight sql at .*:\([0-9][0-9]*\)$/\1/p' "$log" | head -1)"
    metrics="$(sed -n 's/^metrics at http:.*:\([0-9][0-9]*\)\/metrics$/\1/p' "$log" | head -1)"
    [[ -n "$port" && -n "$flight" && -n "$metrics" ]] && break
    sleep 0.2
  done
  [[ -n "$port" ]] || { echo "soak: the server did not start:" >&2; cat "$log" >&2; exit 1; }
}
start_server 0
named=(flight="$flight" metrics="$metrics" ledger="$work/ledger")
[[ ${#users[@]} -gt 0 ]] && named+=(users="$work/users")
[[ "${SOAK_CORRUPT:-1}" == 0 ]] && named+=(corrupt=false)
status=0
# shellcheck disable=SC2086
"$jdk/bin/java" $flags -Xmx2g -XX:-UsePerfData -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp benchmarks/target/benchmarks.jar io.thallus.benchmarks.soak.Soak 127.0.0.1 "$port" "$work/token" "$server" \
  "$work/server.log" "$seconds" "$bound" "${3:-1000}" "${4:-1000}" "${5:-4}" "${6:-4}" "${named[@]}" || status=1
# Durability: kill -9 the server (if it still lives), start it again on the same database, count the ledger.
kill -9 "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
if [[ -s "$work/ledger" ]]; then
  start_server 0 restart
  # shellcheck disable=SC2086
  "$jdk/bin/java" $flags -XX:-UsePerfData -cp benchmarks/target/benchmarks.jar \
    io.thallus.benchmarks.soak.LedgerCheck 127.0.0.1 "$port" "$work/token" "$work/ledger" || status=1
else
  echo "soak: no ledger figure (the soak did not finish)"; status=1
fi
exit "$status"
