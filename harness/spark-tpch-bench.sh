#!/usr/bin/env bash
# TPC-H Q1, Q3, Q6 over thallus, Spark Parquet and Spark JDBC (jdbc:thallus, jdbc:duckdb), and a lineitem write;
# with --whole-plan, all 22 queries: Spark Parquet, the thallus catalog with whole-plan pushdown on, and off.
# Usage: harness/spark-tpch-bench.sh [--whole-plan] [--sf 1] [--runs 2]; the data is made by harness/tpch-data.sh
# (cached)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

sf=1
main=io.thallus.harness.SparkTpchBenchmarkMain
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sf) sf="$2"; shift 2 ;;
    --whole-plan) main=io.thallus.harness.SparkTpchWholePlanMain; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
data="$("$here/harness/tpch-data.sh" --sf "$sf")"

SPARK_BENCH_MAIN=$main exec "$here/harness/spark-bench.sh" --data "$data" \
  ${args[@]+"${args[@]}"}
