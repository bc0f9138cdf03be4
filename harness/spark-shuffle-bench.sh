#!/usr/bin/env bash
# Spark's sort shuffle against the Thallus exchange (thallus-spark-shuffle) on a standalone cluster of executor JVMs:
# the research's synthetic plan and TPC-H Q3, Q9, Q18 (Parquet, broadcasts off). Arguments go to
# SparkShuffleBenchmarkMain, e.g.: harness/spark-shuffle-bench.sh --rows 5000000 --runs 3 --executors 2
# (--hosts 2 --exchange-transport tcp: the two workers on loopback addresses 127.0.0.2 and .3, tcp between them)
# The TPC-H data is made by harness/tpch-data.sh (cached; --data DIR uses other files).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

source "$here/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "spark-shuffle-bench: needs a JDK 25 or newer (JAVA_HOME, PATH or /usr/lib/jvm)" >&2; exit 1; }

args=("$@")
if [[ " $* " != *" --data "* ]]; then
  args+=(--data "$("$here/harness/tpch-data.sh" --sf 1)")
fi

# Built in the reactor (package, not install: nothing goes to the shared local repository).
./mvnw -q -DskipTests -pl harness -am package dependency:build-classpath \
  -Dmdep.outputFile="$here/harness/target/shuffle-bench-classpath.txt"
classpath="harness/target/classes:$(cat harness/target/shuffle-bench-classpath.txt)"

read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' pom.xml) \
$(sed -n 's:.*<spark.jvmFlags>\(.*\)</spark.jvmFlags>.*:\1:p' pom.xml)"
exec "$jdk/bin/java" "${flags[@]}" ${BENCH_JAVA_OPTS:-} -Xmx3g \
  -Dlog4j2.configurationFile=thallus-spark/src/test/resources/log4j2-test.properties \
  -cp "$classpath" io.thallus.harness.SparkShuffleBenchmarkMain "${args[@]}"
