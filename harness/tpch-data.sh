#!/usr/bin/env bash
# TPC-H data as Parquet, made by DuckDB's dbgen in a Python venv this script makes (PyPI: duckdb and the
# duckdb-extension-tpch wheel of the same version). Usage: harness/tpch-data.sh [--sf 1] [--out DIR]
# Writes DIR/{lineitem,orders,customer,nation,region,supplier,part,partsupp}.parquet (default DIR:
# harness/target/tpch-sf<SF>); does nothing when they are there already.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sf=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sf) sf="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "tpch-data: unknown argument $1" >&2; exit 2 ;;
  esac
done
out="${out:-$here/harness/target/tpch-sf$sf}"
if [ -f "$out/lineitem.parquet" ] && [ -f "$out/partsupp.parquet" ]; then
  echo "$out"
  exit 0
fi
duckdb_version=1.5.5
venv="$here/harness/target/tpch-venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q "duckdb==$duckdb_version" "duckdb-extension-tpch==$duckdb_version" >&2
fi
mkdir -p "$out"
"$venv/bin/python" - "$sf" "$out" "$duckdb_version" >&2 <<'PY'
import os, sys, duckdb, duckdb_extension_tpch
sf, out, version = sys.argv[1], sys.argv[2], sys.argv[3]
extension = os.path.join(os.path.dirname(duckdb_extension_tpch.__file__), "extensions", "v" + version,
                         "tpch.duckdb_extension")
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{extension}'")
con.execute(f"CALL dbgen(sf={float(sf)})")
for (table,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall():
    con.execute(f"COPY {table} TO '{os.path.join(out, table + '.parquet')}' (FORMAT parquet)")
    print(f"tpch-data: {table}", file=sys.stderr)
PY
echo "$out"
