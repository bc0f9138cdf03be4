"""Python ADBC's Flight SQL driver with DBAPI's default (autocommit off) against a Thallus server, beside DuckDB run
here: statements the driver keeps prepared across commit() and rollback(), and a write conflict between two sessions.

Usage: transactions_check.py URI TOKEN. Prints one line per check; exits non-zero on the first failure.
"""
import sys

import adbc_driver_flightsql.dbapi as flightsql
import adbc_driver_manager
import duckdb

uri, token = sys.argv[1], sys.argv[2]

# The Flight SQL driver names the gRPC status in its message: "(Aborted; ExecuteQuery)".
GRPC_INVALID_ARGUMENT = "(InvalidArgument;"
GRPC_ABORTED = "(Aborted;"


def connect():
    # DBAPI's default: autocommit off, so the driver begins a transaction at once and again after each end.
    return flightsql.connect(uri, db_kwargs={
        "adbc.flight.sql.authorization_header": "Bearer " + token,
        "adbc.flight.sql.rpc.with_cookie_middleware": "true",
    })


def check(name, condition, detail=""):
    if not condition:
        print("FAILED " + name + ": " + str(detail), flush=True)
        sys.exit(1)
    print("ok " + name, flush=True)


# Each step inserts x, reads a count, then commits (True) or rolls back (False). One cursor runs only the INSERT and
# another only the SELECT, so the driver prepares each once and keeps it across every commit and rollback.
STEPS = [(0, True), (1, True), (2, True), (100, False), (3, True), (200, False), (4, True)]
INSERT = "INSERT INTO kept VALUES (?)"
COUNT = "SELECT count(*), sum(x)::BIGINT FROM kept WHERE x >= ?"
KEPT = "SELECT x FROM kept ORDER BY x"


def thallus_answers():
    answers = []
    with connect() as conn:
        with conn.cursor() as setup:
            setup.execute("CREATE TABLE kept (x INTEGER)")
        conn.commit()
        with conn.cursor() as insert, conn.cursor() as count:
            for x, keep in STEPS:
                insert.execute(INSERT, (x,))
                count.execute(COUNT, (2,))
                answers.append(count.fetchall())
                if keep:
                    conn.commit()
                else:
                    conn.rollback()
            count.execute(KEPT)
            answers.append(count.fetchall())
        conn.commit()
    return answers


def duckdb_answers():
    answers = []
    with duckdb.connect() as conn:
        conn.execute("CREATE TABLE kept (x INTEGER)")
        for x, keep in STEPS:
            conn.execute("BEGIN TRANSACTION")
            conn.execute(INSERT, [x])
            answers.append(conn.execute(COUNT, [2]).fetchall())
            conn.execute("COMMIT" if keep else "ROLLBACK")
        answers.append(conn.execute(KEPT).fetchall())
    return answers


actual = thallus_answers()
expected = duckdb_answers()
check("prepared statements kept across commit and rollback answer as DuckDB does", actual == expected,
      (actual, expected))
check("every committed row is there", actual[-1] == [(0,), (1,), (2,), (3,), (4,)], actual[-1])


def sqlstate(error):
    """The sqlstate trailer of the server's status, which the driver hands on among the error's details."""
    for key, value in error.details:
        if key in (b"sqlstate", "sqlstate"):
            return value
    return None


def failure(cursor, sql):
    try:
        cursor.execute(sql)
    except adbc_driver_manager.Error as error:
        return error
    return None


with connect() as first, connect() as second:
    with first.cursor() as a, second.cursor() as b:
        a.execute("CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER)")
        a.execute("INSERT INTO account VALUES (1, 100)")
        first.commit()
        # A transaction begun before the table was committed would not see it.
        second.rollback()
        a.execute("UPDATE account SET balance = balance - 10 WHERE id = 1")
        conflict = failure(b, "UPDATE account SET balance = balance + 10 WHERE id = 1")
        print("info a write conflict: %r, status %r, vendor code %r, sqlstate %r, details %r"
              % (conflict, getattr(conflict, "status_code", None), getattr(conflict, "vendor_code", None),
                 getattr(conflict, "sqlstate", None), getattr(conflict, "details", None)), flush=True)
        check("a write conflict is an OperationalError naming gRPC's ABORTED",
              isinstance(conflict, adbc_driver_manager.OperationalError)
              and GRPC_ABORTED in str(conflict) and "roll back and retry" in str(conflict), conflict)
        check("its error details carry sqlstate 40001", sqlstate(conflict) == b"40001", conflict.details)
        second.rollback()
        first.commit()
        bad = failure(b, "UPDATE no_such_table SET balance = 0")
        check("bad SQL is a ProgrammingError naming INVALID_ARGUMENT, unlike a conflict",
              isinstance(bad, adbc_driver_manager.ProgrammingError) and GRPC_INVALID_ARGUMENT in str(bad)
              and sqlstate(bad) is None, (bad, bad.details))
        second.rollback()
        b.execute("UPDATE account SET balance = balance + 10 WHERE id = 1")
        second.commit()
        a.execute("SELECT balance FROM account WHERE id = 1")
        balance = a.fetchall()
        check("the loser retries and both changes count", balance == [(100,)], balance)
        first.commit()

# DuckDB itself, two connections to one database: the same conflict, an OperationalError there too.
with duckdb.connect() as duck:
    duck.execute("CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER)")
    duck.execute("INSERT INTO account VALUES (1, 100)")
    a, b = duck.cursor(), duck.cursor()
    a.execute("BEGIN TRANSACTION")
    b.execute("BEGIN TRANSACTION")
    a.execute("UPDATE account SET balance = balance - 10 WHERE id = 1")
    try:
        b.execute("UPDATE account SET balance = balance + 10 WHERE id = 1")
        own = None
    except duckdb.Error as error:
        own = error
    check("DuckDB's own conflict is an OperationalError too", isinstance(own, duckdb.OperationalError),
          (type(own), type(own).__mro__ if own else None, own))
print("ALL OK", flush=True)
