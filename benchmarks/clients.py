#!/usr/bin/env python3
"""Clients as users run them (issue 35), side by side in one run against one `thallus serve --flight-sql-port`:

- `SELECT 1` through ADBC's Flight SQL driver and through pyarrow.flight (GetFlightInfo + DoGet), queries
  alternating between the two, median of at least 1,000 each; DuckDB in process as a reference;
- rows x 8 BIGINT through ADBC's `fetch_arrow_table` and pyarrow.flight's `read_all`, against DuckDB's in-process
  `to_arrow_table`;
- ADBC's `adbc_ingest` of a (BIGINT, VARCHAR, DOUBLE) table against DuckDB's in-process `CREATE TABLE AS`;
- rows x 8 BIGINT read with `getLong` through `jdbc:thallus`, DuckDB's JDBC driver in process and Arrow's Flight SQL
  JDBC driver (the Java part, io.thallus.benchmarks.ClientJdbcBench, in its own JVM).

Every result is checked (row count and a column sum) before it counts. The Python packages are pinned and installed
in benchmarks/target/clients-venv the first time (the script re-runs itself there). benchmarks/run.sh calls it:

  benchmarks/clients.py --plan full|tiny --out DIR --java JAVA --jar benchmarks.jar

It prints the markdown (clients.md); the server's and the JVM's output go to stderr.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "benchmarks" / "target" / "clients-venv"
# The versions FlightSqlAdbcTest pins (Python duckdb 2.0.0 matches the server's duckdb_jdbc 2.0.0.1).
PACKAGES = ["adbc-driver-flightsql==1.13.0", "adbc-driver-manager==1.13.0", "pyarrow==26.0.1", "duckdb==2.0.0"]
PLANS = {
    # select1 queries per client, rows of the wide read, rows ingested, rounds of each large figure
    "full": dict(select1=2000, rows=10_000_000, ingest=1_000_000, rounds=3),
    "tiny": dict(select1=1000, rows=1_000_000, ingest=200_000, rounds=1),
}


def in_venv():
    """Re-runs this script in the pinned venv, made (or remade when the pins change) first."""
    python = VENV / "bin" / "python"
    stamp = VENV / "thallus-packages.txt"
    wanted = "\n".join(PACKAGES)
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    if not python.exists() or not stamp.exists() or stamp.read_text() != wanted:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True, stdout=sys.stderr)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PACKAGES],
                       check=True, stdout=sys.stderr)
        stamp.write_text(wanted)
    os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


def jvm_flags():
    """The JVM flags Arrow needs, from their one place in the root pom (as benchmarks/run.sh reads them)."""
    match = re.search(r"<thallus.jvmFlags>(.*)</thallus.jvmFlags>", (ROOT / "pom.xml").read_text())
    return match.group(1).split()


class Server:
    """`thallus serve` in its own JVM, in-memory, no authentication, on free ports."""

    def __init__(self, java, jar, folder):
        data = Path(folder) / "data"
        data.mkdir()
        self.process = subprocess.Popen(
            [java, *jvm_flags(), "-Xmx6g", "-XX:MaxDirectMemorySize=8g",
             "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", jar, "io.thallus.cli.ThallusCli", "serve",
             "--data-root", str(data), "--port", "0", "--flight-sql-port", "0"],
            stdout=subprocess.PIPE, stderr=sys.stderr, text=True)
        self.native_port = self.flight_port = None
        deadline = time.monotonic() + 120
        while self.flight_port is None:
            line = self.process.stdout.readline()
            if not line or time.monotonic() > deadline:
                self.close()
                raise SystemExit("thallus serve did not start: " + (line or "it exited"))
            print("server: " + line.rstrip(), file=sys.stderr)
            found = re.search(r"thallus serving .* at thallus://[^:]+:(\d+) over (\[.*\])", line)
            if found:
                self.native_port, self.transports = int(found.group(1)), found.group(2)
            found = re.search(r"flight sql at \S+:(\d+)", line)
            if found:
                self.flight_port = int(found.group(1))
        # Whatever the server prints later goes to stderr, so it never blocks on a full pipe.
        threading.Thread(target=self.drain, daemon=True).start()

    def drain(self):
        for line in self.process.stdout:
            print("server: " + line.rstrip(), file=sys.stderr)

    def close(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


def command(query):
    """Flight SQL's CommandStatementQuery in a protobuf Any, written by hand (pyarrow has no Flight SQL client)."""
    def varint(n):
        out = bytearray()
        while True:
            byte, n = n & 0x7F, n >> 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def field(number, payload):
        return varint(number << 3 | 2) + varint(len(payload)) + payload

    inner = field(1, query.encode("utf-8"))
    return field(1, b"type.googleapis.com/arrow.flight.protocol.sql.CommandStatementQuery") + field(2, inner)


def wide_sql(rows):
    return "SELECT " + ", ".join(["i AS c0"] + ["i + %d AS c%d" % (c, c) for c in range(1, 8)]) \
        + " FROM range(%d) t(i)" % rows


def checked(table, rows, who):
    """Fails unless the table has the rows of wide_sql and its first column sums as it must."""
    import pyarrow.compute as pc
    total = pc.sum(table.column(0)).as_py() if table.num_rows else 0
    if table.num_rows != rows or total != rows * (rows - 1) // 2:
        raise SystemExit("%s read %d rows (sum %s), expected %d" % (who, table.num_rows, total, rows))


def duckdb_arrow(relation):
    """The relation as a pyarrow Table (duckdb 2.0: to_arrow_table; older: fetch_arrow_table)."""
    return relation.to_arrow_table() if hasattr(relation, "to_arrow_table") else relation.fetch_arrow_table()


def median_ms(values):
    return statistics.median(values) * 1e3


def p99_ms(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", choices=PLANS, default="full")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--java", default=os.path.join(os.environ.get("JAVA_HOME", "/usr"), "bin", "java"))
    parser.add_argument("--jar", default=str(ROOT / "benchmarks" / "target" / "benchmarks.jar"))
    args = parser.parse_args()
    in_venv()
    import adbc_driver_flightsql.dbapi as flightsql
    import duckdb
    import pyarrow as pa
    import pyarrow.flight as flight
    plan = PLANS[args.plan]
    out = []

    def say(line=""):
        print(line, flush=True)
        out.append(line)

    with tempfile.TemporaryDirectory(prefix="thallus-clients-") as folder:
        server = Server(args.java, args.jar, folder)
        try:
            uri = "grpc://127.0.0.1:%d" % server.flight_port
            # Autocommit, as pyarrow.flight runs: no transaction around each query.
            adbc = flightsql.connect(uri, autocommit=True)
            cursor = adbc.cursor()
            client = flight.FlightClient(uri)

            def adbc_query(sql):
                cursor.execute(sql)
                return cursor.fetch_arrow_table()

            def pyarrow_query(sql):
                info = client.get_flight_info(flight.FlightDescriptor.for_command(command(sql)))
                tables = [client.do_get(endpoint.ticket).read_all() for endpoint in info.endpoints]
                return tables[0] if len(tables) == 1 else pa.concat_tables(tables)

            local = duckdb.connect()

            # SELECT 1: warm both up, then alternate query by query so drift hits both alike.
            one = {"ADBC (Flight SQL driver) execute + fetch_arrow_table": adbc_query,
                   "pyarrow.flight GetFlightInfo + DoGet": pyarrow_query,
                   "DuckDB in process (reference)": lambda sql: duckdb_arrow(local.sql(sql))}
            times = {name: [] for name in one}
            for i in range(plan["select1"] + 200):
                for name, run in one.items():
                    start = time.perf_counter()
                    table = run("SELECT 1 AS one")
                    elapsed = time.perf_counter() - start
                    if table.column(0).to_pylist() != [1]:
                        raise SystemExit(name + " answered " + str(table))
                    if i >= 200:
                        times[name].append(elapsed)
            pyarrow_ms = median_ms(times["pyarrow.flight GetFlightInfo + DoGet"])
            say("## SELECT 1: median of %d queries per client, alternating, milliseconds" % plan["select1"])
            say()
            say("| client | median | p99 | vs pyarrow.flight |")
            say("|---|---|---|---|")
            for name, values in times.items():
                say("| %s | %.3f | %.3f | %.2fx |" % (name, median_ms(values), p99_ms(values),
                                                      median_ms(values) / pyarrow_ms))
            say()

            # Rows x 8 BIGINT: one round of each per turn, the figure is the median.
            rows, rounds = plan["rows"], plan["rounds"]
            sql = wide_sql(rows)
            wide = {"ADBC fetch_arrow_table (Thallus Flight SQL door)": lambda: adbc_query(sql),
                    "pyarrow.flight read_all (Thallus Flight SQL door)": lambda: pyarrow_query(sql),
                    "DuckDB to_arrow_table in process": lambda: duckdb_arrow(duckdb.connect().sql(sql))}
            seconds = {name: [] for name in wide}
            for _ in range(rounds):
                for name, run in wide.items():
                    start = time.perf_counter()
                    table = run()
                    seconds[name].append(time.perf_counter() - start)
                    checked(table, rows, name)
                    del table
            base = statistics.median(seconds["DuckDB to_arrow_table in process"])
            say("## %s rows x 8 BIGINT (%d MB) into a pyarrow Table, median of %d rounds, seconds"
                % (format(rows, ","), rows * 64 // 10**6, rounds))
            say()
            say("| path | seconds | vs DuckDB in process |")
            say("|---|---|---|")
            for name, values in seconds.items():
                median = statistics.median(values)
                say("| %s | %.3f | %.2fx |" % (name, median, median / base))
            say()

            # Ingest: the same Arrow table into a new table, through ADBC and into DuckDB in process.
            n = plan["ingest"]
            # In batches of 128K rows, as a user's Arrow data usually comes: ADBC sends each record batch as one
            # message and refuses on its own side one over its 16 MiB default send limit (1M rows here are 32 MB).
            data = pa.Table.from_batches(pa.table({
                "k": pa.array(range(n), pa.int64()),
                "v": pa.array(["value %d" % i for i in range(n)], pa.string()),
                "d": pa.array([i / 4 for i in range(n)], pa.float64())}).to_batches(max_chunksize=131072))
            ingest_seconds = {"ADBC adbc_ingest (create)": [], "DuckDB CREATE TABLE AS in process": []}
            for r in range(rounds):
                start = time.perf_counter()
                cursor.adbc_ingest("ingested_%d" % r, data, mode="create")
                ingest_seconds["ADBC adbc_ingest (create)"].append(time.perf_counter() - start)
                count = adbc_query("SELECT count(*) AS n, sum(k)::BIGINT AS s FROM ingested_%d" % r).to_pylist()[0]
                if count != {"n": n, "s": n * (n - 1) // 2}:
                    raise SystemExit("ADBC ingested %s, expected %d rows" % (count, n))
                target = duckdb.connect()
                target.register("data", data)
                start = time.perf_counter()
                target.execute("CREATE TABLE ingested AS SELECT * FROM data")
                ingest_seconds["DuckDB CREATE TABLE AS in process"].append(time.perf_counter() - start)
                if target.execute("SELECT count(*) FROM ingested").fetchall() != [(n,)]:
                    raise SystemExit("DuckDB ingested the wrong count")
                target.close()
            base = statistics.median(ingest_seconds["DuckDB CREATE TABLE AS in process"])
            say("## Ingest of %s rows (BIGINT, VARCHAR, DOUBLE), median of %d rounds, seconds"
                % (format(n, ","), rounds))
            say()
            say("| path | seconds | vs DuckDB in process |")
            say("|---|---|---|")
            for name, values in ingest_seconds.items():
                median = statistics.median(values)
                say("| %s | %.3f | %.2fx |" % (name, median, median / base))
            say()
            cursor.close()
            adbc.close()
            client.close()

            # The JDBC drivers, in a JVM of their own against the same server.
            jdbc = subprocess.run(
                [args.java, *jvm_flags(), "-Xmx6g", "-XX:MaxDirectMemorySize=8g",
                 "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", args.jar,
                 "io.thallus.benchmarks.ClientJdbcBench", str(server.native_port), str(server.flight_port),
                 str(rows), str(rounds)], stdout=subprocess.PIPE, stderr=sys.stderr, text=True, check=True)
            for line in jdbc.stdout.splitlines():
                say(line)
            say()
            say("Server: `thallus serve --flight-sql-port` (in-memory DuckDB, no authentication), transports %s; "
                "clients: %s; Python %s."
                % (server.transports, ", ".join(PACKAGES), sys.version.split()[0]))
        finally:
            server.close()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "clients.md").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
