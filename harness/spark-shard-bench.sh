#!/usr/bin/env bash
# Issue 38's benchmark: TPC-H lineitem in three shards on three servers vs one server vs Spark's Parquet reader
# (Q1, Q6, a selective filter), each shard server's transport and bytes (SparkShardBenchmarkMain).
# Usage: harness/spark-shard-bench.sh [--sf 1] [--runs 3] [--data DIR] [--work DIR]; without --data the data is
# made by harness/tpch-data.sh (cached). Builds with `package` (the reactor's jars, nothing installed into ~/.m2).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

source "$here/harness/jdk.sh"
jdk="$(find_jdk)" || { echo "spark-shard-bench: needs a JDK 25 or newer (JAVA_HOME, PATH or /usr/lib/jvm)" >&2; exit 1; }

sf=1
data=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sf) sf="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
data="${data:-$("$here/harness/tpch-data.sh" --sf "$sf")}"

# One reactor build: the class path names the other modules' jars under their target/, not ~/.m2's.
./mvnw -q -DskipTests -pl harness -am package dependency:build-classpath \
  -Dmdep.outputFile=target/bench-classpath.txt
classpath="harness/target/classes:$(cat harness/target/bench-classpath.txt)"

# Arrow's flags and Spark's, from the root pom, as the tests use them.
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' pom.xml) \
$(sed -n 's:.*<spark.jvmFlags>\(.*\)</spark.jvmFlags>.*:\1:p' pom.xml)"
exec "$jdk/bin/java" "${flags[@]}" ${BENCH_JAVA_OPTS:-} -Xmx8g -XX:MaxDirectMemorySize=8g \
  -Dlog4j2.configurationFile=thallus-spark/src/test/resources/log4j2-test.properties \
  -cp "$classpath" io.thallus.harness.SparkShardBenchmarkMain --data "$data" ${args[@]+"${args[@]}"}
