#!/usr/bin/env bash
# TPC-H Q1, Q3, Q6 over thallus, Spark Parquet and Spark JDBC (jdbc:thallus, jdbc:duckdb), and a lineitem write
# Usage: harness/spark-tpch-bench.sh [--sf 1] [--runs 2]; the data is made by harness/tpch-data.sh (cached)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

sf=1
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sf) sf="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
data="$("$here/harness/tpch-data.sh" --sf "$sf")"

source "$here/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "spark-bench: needs a JDK 25 or newer (JAVA_HOME, PATH or /usr/lib/jvm)" >&2; exit 1; }

./mvnw -q -DskipTests -pl harness -am install
./mvnw -q -pl harness dependency:build-classpath -Dmdep.outputFile=target/bench-classpath.txt
classpath="harness/target/classes:$(cat harness/target/bench-classpath.txt)"

# Arrow's flags and Spark's, from the root pom, as the tests use them.
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' pom.xml) \
$(sed -n 's:.*<spark.jvmFlags>\(.*\)</spark.jvmFlags>.*:\1:p' pom.xml)"
exec "$jdk/bin/java" "${flags[@]}" ${BENCH_JAVA_OPTS:-} -Xmx8g -XX:MaxDirectMemorySize=8g \
  -Dlog4j2.configurationFile=thallus-spark/src/test/resources/log4j2-test.properties \
  -cp "$classpath" io.thallus.harness.SparkTpchBenchmarkMain --data "$data" "${args[@]}"
