"""Python ADBC's Flight SQL driver against a Thallus server's Flight SQL port, checked against DuckDB run here.

Usage: adbc_check.py URI TOKEN SQL_FILE. Prints one line per check; exits non-zero on the first failure.
"""
import sys

import adbc_driver_flightsql.dbapi as flightsql
import duckdb
import pyarrow as pa

uri, token, sql_file = sys.argv[1], sys.argv[2], sys.argv[3]
type_sql = open(sql_file, encoding="utf-8").read()


def connect(secret, autocommit=True):
    # The cookie keeps the session (temporary tables, transactions) across calls.
    return flightsql.connect(uri, db_kwargs={
        "adbc.flight.sql.authorization_header": "Bearer " + secret,
        "adbc.flight.sql.rpc.with_cookie_middleware": "true",
    }, autocommit=autocommit)


def check(name, condition, detail=""):
    if not condition:
        print("FAILED " + name + ": " + str(detail), flush=True)
        sys.exit(1)
    print("ok " + name, flush=True)


with connect(token) as conn:
    with conn.cursor() as cur:
        cur.execute(type_sql)
        actual = cur.fetch_arrow_table()
    expected = duckdb.sql(type_sql).arrow()
    if hasattr(expected, "read_all"):
        expected = expected.read_all()
    check("type table columns", actual.column_names == expected.column_names,
          (actual.column_names, expected.column_names))
    check("type table rows", actual.num_rows == expected.num_rows, (actual.num_rows, expected.num_rows))
    different = [name for name in actual.column_names
                 if actual.column(name).to_pylist() != expected.column(name).to_pylist()]
    check("type table values equal DuckDB's", not different,
          [(name, actual.column(name).to_pylist()[:2], expected.column(name).to_pylist()[:2]) for name in different])

    data = pa.table({"k": pa.array(range(5000), pa.int64()),
                     "v": pa.array(["v%d" % i for i in range(5000)], pa.string()),
                     "d": pa.array([i / 4 for i in range(5000)], pa.float64())})
    with conn.cursor() as cur:
        rows = cur.adbc_ingest("py_ingested", data, mode="create")
        check("adbc_ingest create", rows in (5000, -1), rows)
        rows = cur.adbc_ingest("py_ingested", data, mode="append")
        cur.execute("SELECT k, v, d FROM py_ingested ORDER BY k, v LIMIT 5000 OFFSET 2500")
        back = cur.fetch_arrow_table()
    check("adbc_ingest append", back.num_rows == 5000, back.num_rows)
    expected_back = duckdb.sql("SELECT k, v, d FROM data UNION ALL SELECT k, v, d FROM data ORDER BY k, v "
                               "LIMIT 5000 OFFSET 2500").arrow()
    if hasattr(expected_back, "read_all"):
        expected_back = expected_back.read_all()
    check("ingested values equal DuckDB's", back.to_pylist() == expected_back.to_pylist())

    objects = conn.adbc_get_objects(depth="all").read_all().to_pylist()
    tables = {(catalog["catalog_name"], schema["db_schema_name"], table["table_name"]):
              [column["column_name"] for column in table["table_columns"] or []]
              for catalog in objects for schema in catalog["catalog_db_schemas"] or []
              for table in schema["db_schema_tables"] or []}
    check("get_objects lists the ingested table", tables.get(("memory", "main", "py_ingested")) == ["k", "v", "d"],
          tables)

    with conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE scratch AS SELECT 7 AS seven")
        cur.execute("SELECT seven FROM scratch")
        check("a session keeps its temporary tables", cur.fetchall() == [(7,)])

with connect(token, autocommit=False) as conn:
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE ledger (amount INTEGER)")
        conn.commit()
        cur.execute("INSERT INTO ledger VALUES (1), (2)")
        conn.rollback()
        cur.execute("INSERT INTO ledger VALUES (5)")
        conn.commit()
        cur.execute("SELECT sum(amount)::BIGINT FROM ledger")
        got = cur.fetchall()
        check("commit and rollback", got == [(5,)], got)

try:
    with connect(token + "-wrong", autocommit=True) as conn:
        with conn.cursor() as cur:
            cur.execute("SELECT 1")
            cur.fetchall()
    check("a wrong token is refused", False, "no error")
except Exception as error:  # the driver's own error class
    check("a wrong token is refused", "UNAUTHENTICATED" in str(error) or "Unauthenticated" in str(error), error)
print("ALL OK", flush=True)
