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

SPARK_BENCH_MAIN=io.thallus.harness.SparkTpchBenchmarkMain exec "$here/harness/spark-bench.sh" --data "$data" \
  ${args[@]+"${args[@]}"}
