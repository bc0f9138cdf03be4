#!/usr/bin/env bash
# The hardening soak (not part of the test command): a `thallus serve` with a token, attacked on loopback for a
# bounded time by idle strangers on the control port, strangers on the tcp data port, greedy clients (the most
# credits allowed, never reading) and checked by honest clients on every transport. It passes when every honest
# query was right, the server's RSS stayed under the bound, its descriptors came back and no log line repeated more
# than 5 times a second. Everything runs on 127.0.0.1 and stops by itself.
# Usage: harness/soak.sh [seconds=300] [rss bound MB=2560] [idle=1000] [data=1000] [greedy=4] [honest=4]
# SOAK_SERVER_JAR runs another build's CLI jar as the server (say an older commit's, for a before/after), with
# SOAK_SERVER_LIMITS in place of this build's limit flags.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
seconds="${1:-300}"
bound="${2:-2560}"
source "$root/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "soak: needs a JDK 25 or newer" >&2; exit 1; }
JAVA_HOME="$jdk" ./mvnw -q -DskipTests -pl thallus-cli,benchmarks -am package
flags="$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' pom.xml)"
# Two thousand strangers need more descriptors than a default shell allows, on both sides.
ulimit -n "$(ulimit -Hn)"
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir "$work/data"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/token"
# shellcheck disable=SC2086
"$jdk/bin/java" $flags -Xmx1g -XX:-UsePerfData -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
  -jar "${SOAK_SERVER_JAR:-thallus-cli/target/thallus.jar}" serve --data-root "$work/data" --port 0 \
  --token-file "$work/token" --memory-limit 1GB ${SOAK_SERVER_LIMITS---batch-memory 1073741824} \
  > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  port="$(sed -n 's/^thallus serving .*:\([0-9][0-9]*\) over .*/\1/p' "$work/server.log" | head -1)"
  [[ -n "$port" ]] && break
  sleep 0.2
done
[[ -n "${port:-}" ]] || { echo "soak: the server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }
# shellcheck disable=SC2086
"$jdk/bin/java" $flags -Xmx2g -XX:-UsePerfData -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp benchmarks/target/benchmarks.jar io.thallus.benchmarks.soak.Soak 127.0.0.1 "$port" "$work/token" "$server" \
  "$work/server.log" "$seconds" "$bound" "${3:-1000}" "${4:-1000}" "${5:-4}" "${6:-4}"
