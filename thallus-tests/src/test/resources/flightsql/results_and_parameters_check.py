"""ADBC's Flight SQL driver, with its default message limit (16 MiB), reading wide results and binding typed
parameters against a Thallus server's Flight SQL port; every answer is checked against DuckDB run here.

Usage: results_and_parameters_check.py URI TOKEN. Prints one line per check; exits non-zero on the first failure.
"""
import datetime
import decimal
import sys

import adbc_driver_flightsql.dbapi as flightsql
import duckdb
import pyarrow as pa

uri, token = sys.argv[1], sys.argv[2]


def check(name, condition, detail=""):
    if not condition:
        print("FAILED " + name + ": " + str(detail)[:2000], flush=True)
        sys.exit(1)
    print("ok " + name, flush=True)


def table(result):
    return result.read_all() if hasattr(result, "read_all") else result


def same(name, actual, expected):
    """Equal column types and values; the detail names the first column that differs."""
    types = (actual.schema.types, expected.schema.types)
    check(name + " types", types[0] == types[1], types)
    check(name + " rows", actual.num_rows == expected.num_rows, (actual.num_rows, expected.num_rows))
    different = [column for column in expected.column_names
                 if actual.column(column).to_pylist() != expected.column(column).to_pylist()]
    check(name, actual.column_names == expected.column_names and not different,
          [(column, actual.column(column).to_pylist()[:2], expected.column(column).to_pylist()[:2])
           for column in different] or (actual.column_names, expected.column_names))


conn = flightsql.connect(uri, db_kwargs={
    "adbc.flight.sql.authorization_header": "Bearer " + token,
    "adbc.flight.sql.rpc.with_cookie_middleware": "true",
}, autocommit=True)
duck = duckdb.connect()

# Wide rows: the engine's batches are 64K rows, far over 16 MiB here; the server must send messages that fit.
bigints = ", ".join("i * %d AS c%d" % (c + 1, c) for c in range(48))
wide = {
    "300-character text under the message limit":
        "SELECT i, repeat('x', 300) || i::VARCHAR AS s FROM range(200000) t(i) ORDER BY i",
    "48 BIGINT columns under the message limit": "SELECT " + bigints + " FROM range(70000) t(i) ORDER BY i",
    "blobs under the message limit":
        "SELECT i, repeat(chr(65 + (i % 26)::INTEGER), 600000)::BLOB AS b FROM range(40) t(i) ORDER BY i",
    "lists under the message limit":
        "SELECT i, [x + i FOR x IN range(250)] AS l FROM range(9000) t(i) ORDER BY i",
}
with conn.cursor() as cur:
    for name, query in wide.items():
        cur.execute(query)
        same(name, cur.fetch_arrow_table(), table(duck.sql(query).arrow()))

# Typed parameters: DuckDB reads the same Arrow values from a table of one row, so each placeholder has the type
# the client sent. ADBC itself compares GetFlightInfo's schema with DoGet's.
cases = [
    ("an int32 parameter", "SELECT ? + 1 AS a", pa.record_batch([pa.array([41], pa.int32())], names=["p0"]),
     "SELECT p0 + 1 AS a FROM params"),
    ("an int64 parameter", "SELECT ? + 1 AS a", (41,), "SELECT p0 + 1 AS a FROM params"),
    ("a bytes parameter", "SELECT octet_length(?) AS n", (b"\x01\x02\x03",), "SELECT octet_length(p0) AS n FROM params"),
    ("a date parameter plus an interval", "SELECT ? + INTERVAL 1 DAY AS d", (datetime.date(2024, 1, 2),),
     "SELECT p0 + INTERVAL 1 DAY AS d FROM params"),
    ("a timestamp parameter", "SELECT ? + INTERVAL 1 HOUR AS t",
     (datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),), "SELECT p0 + INTERVAL 1 HOUR AS t FROM params"),
    ("a decimal parameter", "SELECT ? * 2 AS x", (decimal.Decimal("1.25"),), "SELECT p0 * 2 AS x FROM params"),
    ("a text parameter", "SELECT ? || '!' AS s", ("ümlaut",), "SELECT p0 || '!' AS s FROM params"),
    ("a boolean parameter", "SELECT NOT ? AS b", (True,), "SELECT NOT p0 AS b FROM params"),
    ("a double parameter", "SELECT ? / 4 AS f", (1.5,), "SELECT p0 / 4 AS f FROM params"),
    ("a NULL parameter", "SELECT ? IS NULL AS n", (None,), "SELECT p0 IS NULL AS n FROM params"),
    ("list parameters", "SELECT ? AS l, list_sum(?) AS s", ([1, 2, None, 3], [5, 6]),
     "SELECT p0 AS l, list_sum(p1) AS s FROM params"),
    ("a list of lists parameter", "SELECT ? AS l", ([[1], [2, 3]],), "SELECT p0 AS l FROM params"),
    ("a list of text parameter", "SELECT ? AS l", (["a", None, "bc"],), "SELECT p0 AS l FROM params"),
]
with conn.cursor() as cur:
    for name, query, parameters, reference in cases:
        if isinstance(parameters, pa.RecordBatch):
            params = parameters
        else:
            # As ADBC's DB-API makes its bind batch from a row of Python values.
            params = pa.record_batch([pa.array([value]) for value in parameters],
                                     names=["p%d" % i for i in range(len(parameters))])
        try:
            cur.execute(query, parameters)
            actual = cur.fetch_arrow_table()
        except Exception as error:  # noqa: BLE001 - the failure is the check's detail
            check(name, False, repr(error))
        params_table = pa.Table.from_batches([params])
        duck.register("params", params_table)
        expected = table(duck.sql(reference).arrow())
        duck.unregister("params")
        same(name, actual, expected)

conn.close()
print("ALL OK", flush=True)
