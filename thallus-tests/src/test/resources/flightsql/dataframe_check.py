"""pandas and polars writing and reading through ADBC's Flight SQL driver against a Thallus server, each table
checked against what DuckDB's Python package, run here, makes of the same Arrow data.

Usage: dataframe_check.py URI TOKEN. Prints one line per check; exits non-zero on the first failure.
"""
import datetime
import sys

import adbc_driver_flightsql.dbapi as flightsql
import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
from polars.testing import assert_frame_equal

uri, token = sys.argv[1], sys.argv[2]


def connect():
    # Autocommit: pandas' and polars' ingests commit on their own (commit() is then a no-op).
    return flightsql.connect(uri, db_kwargs={
        "adbc.flight.sql.authorization_header": "Bearer " + token,
        "adbc.flight.sql.rpc.with_cookie_middleware": "true",
    }, autocommit=True)


def check(name, condition, detail=""):
    if not condition:
        print("FAILED " + name + ": " + str(detail), flush=True)
        sys.exit(1)
    print("ok " + name, flush=True)


def arrow_table(relation):
    table = relation.arrow()
    return table.read_all() if hasattr(table, "read_all") else table


def column_types(cursor_or_duck, table):
    sql = ("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '%s' "
           "ORDER BY ordinal_position" % table)
    if isinstance(cursor_or_duck, duckdb.DuckDBPyConnection):
        return [tuple(row) for row in cursor_or_duck.execute(sql).fetchall()]
    cursor_or_duck.execute(sql)
    return [tuple(row) for row in cursor_or_duck.fetchall()]


def plain(value):
    """A value of a pandas frame as the Python value DuckDB's fetchall gives for it."""
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple, dict, bytes, str)):
        return value
    if value is None or pd.isna(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if isinstance(value, np.generic):
        return value.item()
    return value


def direct(arrow, table):
    """DuckDB run here: the table it makes of the Arrow data, and a connection to read it with."""
    duck = duckdb.connect()
    duck.register("batches", arrow)
    duck.execute("CREATE TABLE %s AS SELECT * FROM batches" % table)
    duck.unregister("batches")
    return duck


rows = 2500
ids = list(range(rows))
texts = [None if i % 7 == 3 else ("s%d" % i if i % 2 else "a string of more than twelve bytes, row %d" % i)
         for i in ids]
colours = ["red", "green", "blue", "a colour of more than twelve bytes"]

with connect() as conn:
    # polars: its frames go out as Arrow with string and binary views.
    frame = pl.DataFrame({
        "id": pl.Series(ids, dtype=pl.Int64),
        "s": pl.Series(texts, dtype=pl.String),
        "b": pl.Series([None if t is None else t.encode() + b"\x00\xfe" for t in texts], dtype=pl.Binary),
        "l": pl.Series([None if i % 11 == 5 else list(range(i % 4)) for i in ids], dtype=pl.List(pl.Int64)),
        "f": pl.Series([i / 8 for i in ids], dtype=pl.Float64),
        "d": pl.Series([datetime.date(2024, 1, 1) + datetime.timedelta(days=i) for i in ids], dtype=pl.Date),
    })
    # What write_database hands ADBC: the frame itself, through the Arrow PyCapsule stream (views for text).
    sent = pa.table(frame)
    print("polars sends " + ", ".join("%s: %s" % (f.name, f.type) for f in sent.schema), flush=True)
    check("polars sends string views", pa.types.is_string_view(sent.schema.field("s").type), sent.schema)
    written = frame.write_database("pl_frame", connection=conn, engine="adbc", if_table_exists="fail")
    check("polars write_database", written in (rows, -1), written)
    query = "SELECT * FROM pl_frame ORDER BY id"
    back = pl.read_database(query, connection=conn)
    duck = direct(sent, "pl_frame")
    expected = pl.from_arrow(arrow_table(duck.sql(query)))
    try:
        assert_frame_equal(back, expected)
        same = True, ""
    except AssertionError as e:
        same = False, e
    check("polars read_database equals DuckDB's", same[0], same[1])
    with conn.cursor() as cur:
        check("polars column types equal DuckDB's", column_types(cur, "pl_frame") == column_types(duck, "pl_frame"),
              (column_types(cur, "pl_frame"), column_types(duck, "pl_frame")))
    frame.write_database("pl_frame", connection=conn, engine="adbc", if_table_exists="append")
    count = pl.read_database("SELECT count(*) AS n, count(DISTINCT id) AS k FROM pl_frame", connection=conn)
    check("polars append", count.rows() == [(2 * rows, rows)], count.rows())

    # pandas: a Categorical column goes out dictionary-encoded, text as pandas' string type makes it.
    df = pd.DataFrame({
        "id": np.arange(rows, dtype=np.int64),
        "name": pd.array(texts, dtype="str" if pd.__version__ >= "3" else "string"),
        "cat": pd.Categorical([None if i % 5 == 2 else colours[i % 4] for i in ids], categories=colours),
        "price": [i * 0.25 for i in ids],
        "at": pd.to_datetime([datetime.datetime(2024, 5, 6, 7, 8, 9) + datetime.timedelta(minutes=i) for i in ids]),
    })
    arrow = pa.Table.from_pandas(df, preserve_index=False)
    print("pandas sends " + ", ".join("%s: %s" % (f.name, f.type) for f in arrow.schema), flush=True)
    inserted = df.to_sql("pd_frame", conn, index=False, if_exists="fail")
    check("pandas to_sql with a Categorical", inserted in (rows, -1, None), inserted)
    query = "SELECT * FROM pd_frame ORDER BY id"
    back = pd.read_sql(query, conn)
    duck = direct(arrow, "pd_frame")
    expected = duck.execute(query).fetchall()
    actual = [tuple(plain(v) for v in row) for row in back.itertuples(index=False, name=None)]
    check("pandas read_sql columns equal DuckDB's", list(back.columns) == [d[0] for d in duck.execute(query).description],
          list(back.columns))
    check("pandas read_sql values equal DuckDB's", actual == [tuple(r) for r in expected],
          [(a, e) for a, e in zip(actual, expected) if a != tuple(e)][:3])
    with conn.cursor() as cur:
        check("pandas column types equal DuckDB's", column_types(cur, "pd_frame") == column_types(duck, "pd_frame"),
              (column_types(cur, "pd_frame"), column_types(duck, "pd_frame")))
    df.to_sql("pd_frame", conn, index=False, if_exists="append")
    back = pd.read_sql("SELECT count(*) AS n, count(cat) AS c FROM pd_frame", conn)
    expected = duck.execute("SELECT 2 * count(*), 2 * count(cat) FROM pd_frame").fetchall()
    check("pandas append", [tuple(plain(v) for v in r) for r in back.itertuples(index=False, name=None)] == expected,
          (back, expected))

print("ALL OK", flush=True)
