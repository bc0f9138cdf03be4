"""What generic Flight clients see of a Thallus server's fast lanes: ADBC's Flight SQL driver and pyarrow.flight.

Usage: lanes_check.py URI TOKEN TRANSPORTS [ROOT_CERT_PEM]
TRANSPORTS is the comma-separated list of transports the native server says it offers (its "over [...]" line); the
lanes a FlightInfo announces must be exactly those. With ROOT_CERT_PEM the URI is grpc+tls:// and the file is the
certificate to trust. Prints one line per check; exits non-zero on the first failure.
"""
import sys

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow.flight as flight

uri, token, transports = sys.argv[1], sys.argv[2], [t for t in sys.argv[3].split(",") if t]
root_cert = open(sys.argv[4], encoding="ascii").read() if len(sys.argv) > 4 else None
HEADER = "thallus-lanes/1"


def check(name, condition, detail=""):
    if not condition:
        print("FAILED " + name + ": " + str(detail), flush=True)
        sys.exit(1)
    print("ok " + name, flush=True)


def announced(endpoint):
    """The lanes in an endpoint's app metadata, as (transport, location) pairs; None when it announces none."""
    text = bytes(endpoint.app_metadata or b"").decode("utf-8")
    lines = [line for line in text.split("\n") if line]
    if not lines or lines[0] != HEADER:
        return None
    return [(line.split("://", 1)[0].removeprefix("thallus+"), line) for line in lines[1:]]


def check_endpoint(who, info):
    check(who + ": one endpoint", len(info.endpoints) == 1, info.endpoints)
    endpoint = info.endpoints[0]
    # No location at all: every Flight client reads the ticket on the connection it has, and tries no lane.
    check(who + ": the endpoint names no location", list(endpoint.locations) == [], endpoint.locations)
    lanes = announced(endpoint)
    check(who + ": the app metadata announces the server's lanes", lanes is not None
          and [transport for transport, _ in lanes] == transports, (lanes, transports))
    if root_cert is not None:
        check(who + ": under TLS no tcp or rdma lane", not {"tcp", "rdma"} & {t for t, _ in lanes}, lanes)


db_kwargs = {"adbc.flight.sql.authorization_header": "Bearer " + token,
             "adbc.flight.sql.rpc.with_cookie_middleware": "true"}
if root_cert is not None:
    db_kwargs["adbc.flight.sql.client_option.tls_root_certs"] = root_cert

# Autocommit: a statement in a transaction has no lane (checked below), since a lane runs in a session of its own.
with flightsql.connect(uri, db_kwargs=db_kwargs, autocommit=True) as conn:
    with conn.cursor() as cur:
        # ADBC hands each endpoint out as a partition: a serialized FlightInfo with that one endpoint.
        partitions, _ = cur.adbc_execute_partitions("SELECT 42 AS answer")
        check("adbc: one partition", len(partitions) == 1, len(partitions))
        check_endpoint("adbc", flight.FlightInfo.deserialize(partitions[0]))
        cur.adbc_read_partition(partitions[0])
        check("adbc: the partition reads on this connection", cur.fetch_arrow_table().to_pylist() == [{"answer": 42}])
        for i in range(50):
            cur.execute("SELECT i * %d AS v FROM range(1000) t(i) ORDER BY i" % i)
            values = cur.fetch_arrow_table().column("v").to_pylist()
            if values != [j * i for j in range(1000)]:
                check("adbc: 50 queries", False, (i, values[:3]))
        check("adbc: 50 queries", True)
        try:
            cur.execute("SELECT error('boom ' || i::VARCHAR) FROM range(3) t(i)")
            cur.fetch_arrow_table()
            check("adbc: a failing statement fails", False, "no error")
        except Exception as error:  # the driver's own error class
            message = str(error)
            check("adbc: the error is the server's, with no connection failure before it",
                  "boom" in message and "thallus+" not in message, message)

with flightsql.connect(uri, db_kwargs=db_kwargs, autocommit=False) as conn:
    with conn.cursor() as cur:
        partitions, _ = cur.adbc_execute_partitions("SELECT 42 AS answer")
        endpoint = flight.FlightInfo.deserialize(partitions[0]).endpoints[0]
        check("adbc: a statement in a transaction announces no lane",
              list(endpoint.locations) == [] and announced(endpoint) is None, endpoint)
        cur.adbc_read_partition(partitions[0])
        check("adbc: and reads on this connection", cur.fetch_arrow_table().to_pylist() == [{"answer": 42}])


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


client = flight.FlightClient(uri, tls_root_certs=root_cert) if root_cert is not None else flight.FlightClient(uri)
options = flight.FlightCallOptions(headers=[(b"authorization", ("Bearer " + token).encode("ascii"))])
info = client.get_flight_info(flight.FlightDescriptor.for_command(command("SELECT 42 AS answer")), options)
check_endpoint("pyarrow.flight", info)
table = client.do_get(info.endpoints[0].ticket, options).read_all()
check("pyarrow.flight: the ticket reads on this connection", table.to_pylist() == [{"answer": 42}], table)
client.close()
print("ALL OK", flush=True)
