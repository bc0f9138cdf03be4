#!/bin/bash
# The exchange benchmark (issue 39): push against place-and-pull between exchange endpoints in separate JVMs on this
# host, over shm and tcp, medians of 3 after a warm-up round, push and pull side by side in each round; then once
# more per mode under strace to count the network messages (writes to TCP sockets) per reduce task per peer.
#   harness/exchange-bench.sh [out-folder]      (from the repository root; builds benchmarks.jar first)
# Sizes: the paper's synthetic plan (5,000,000 longs, 4 maps x 200 partitions) and a 10x larger one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:-benchmarks/results/$(date -u +%F)-exchange}"
mkdir -p "$out"
./mvnw -q -pl benchmarks -am package -DskipTests
source "$root/harness/jdk.sh"
java_bin="$(find_jdk)/bin/java"
read -r -a flags <<< "$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' "$root/pom.xml")"
run() {
  "$java_bin" "${flags[@]}" -Xmx3g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -cp benchmarks/target/benchmarks.jar io.thallus.benchmarks.exchange.ExchangeBench "$@"
}
{ uptime; nproc; } > "$out/machine.txt"
run --rows 5000000 --maps 4 --partitions 200 --transports shm,tcp --runs 3 --strace | tee "$out/synthetic-5m.txt"
run --rows 50000000 --maps 4 --partitions 200 --transports shm,tcp --runs 3 | tee "$out/large-50m.txt"
