#!/bin/sh
# The validator's benchmark and IngestBench's transport-only time per 64K-row batch, one after the other.
set -e
out=benchmarks/results/2026-11-26-validator
java=${JAVA:-java}
flags=$(sed -n 's:.*<thallus.jvmFlags>\(.*\)</thallus.jvmFlags>.*:\1:p' pom.xml)
$java $flags -jar benchmarks/target/benchmarks.jar ValidatorBenchmark -f 1 -wi 2 -i 3 -jvm "$java" \
  -jvmArgs "$flags" -rf json -rff "$out/validator-jmh.json" > "$out/validator-jmh.txt" 2>&1
$java $flags -Xmx4g -XX:MaxDirectMemorySize=6g -cp benchmarks/target/benchmarks.jar \
  io.thallus.benchmarks.IngestBench 2000000 3 65536 0 > "$out/ingest.md" 2> "$out/ingest.log"
