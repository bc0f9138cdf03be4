#!/usr/bin/env bash
# The JDBC driver's figures (issue 7): one-row query latency and 1M x 8 BIGINT read through ResultSet getters,
# thallus (same-host default, tcp, ipc) next to DuckDB's own JDBC driver in-process, in one JVM, one run.
# Usage: harness/jdbc-bench.sh [rows] [runs] [one-row queries]   (after ./mvnw install -DskipTests)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cp_file="$(mktemp)"
trap 'rm -f "$cp_file"' EXIT
./mvnw -q -o -pl thallus-tests test-compile dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile="$cp_file" >/dev/null
classpath="$root/thallus-tests/target/test-classes:$(cat "$cp_file")"
java_bin=""
for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/*; do
  if [[ -x "$candidate/bin/java" && -f "$candidate/release" ]] \
      && grep -Eq 'JAVA_VERSION="(2[5-9]|[3-9][0-9])' "$candidate/release"; then
    java_bin="$candidate/bin/java"
    break
  fi
done
[[ -n "$java_bin" ]] || { echo "jdbc-bench: needs a JDK 25" >&2; exit 1; }
flags="$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' pom.xml)"
# shellcheck disable=SC2086
exec "$java_bin" $flags ${JDBC_BENCH_OPTS:-} -Xmx4g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$classpath" \
  io.thallus.jdbc.JdbcBenchmarkMain "$@"
