#!/usr/bin/env bash
# Spark read benchmark: thallus (tcp and the same-host default) against Spark's JDBC source, one JVM, local[2].
# Arguments go to SparkReadBenchmarkMain, e.g.: harness/spark-bench.sh --rows 10000000 --runs 5 --pushdown
# SPARK_BENCH_MAIN runs another of the harness's Spark programs with the same build and flags (spark-tpch-bench.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

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
  -cp "$classpath" "${SPARK_BENCH_MAIN:-io.thallus.harness.SparkReadBenchmarkMain}" "$@"
