#!/usr/bin/env bash
# The JDBC driver's figures (issue 7) on their own: one-row query latency and 1M x 8 BIGINT read through ResultSet
# getters, thallus (same-host default, tcp, ipc) next to Arrow Flight SQL's JDBC driver (against a Flight SQL server
# over the same DuckDB) and DuckDB's own JDBC driver in-process, in one JVM, one run. The full suite
# (benchmarks/run.sh) runs the same comparison among its experiments.
# Usage: harness/jdbc-bench.sh [rows] [runs] [one-row queries]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
./mvnw -q -pl benchmarks -am package -DskipTests
source "$root/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "jdbc-bench: needs a JDK 25 or newer (JAVA_HOME, PATH or /usr/lib/jvm)" >&2; exit 1; }
java_bin="$jdk/bin/java"
flags="$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' pom.xml)"
# shellcheck disable=SC2086
exec "$java_bin" $flags ${JDBC_BENCH_OPTS:-} -Xmx4g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$root/benchmarks/target/benchmarks.jar" io.thallus.benchmarks.JdbcBench "$@"
