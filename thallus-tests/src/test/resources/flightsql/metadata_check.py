"""What a Thallus Flight SQL port says of its tables, to ADBC's get_objects, to Flight SQL commands sent by hand
through pyarrow.flight (GetTables with schemas, GetPrimaryKeys) and to plain Flight calls (list_flights,
get_flight_info and do_get of a path), checked against DuckDB run here (information_schema, duckdb_constraints()).

ADBC's Flight SQL driver (1.13) reads only the type name of a column's metadata: its get_objects leaves
xdbc_nullable and the sizes null whatever a server sends, so those are checked in the GetTables schema itself.

Usage: metadata_check.py URI TOKEN. Prints one line per check; exits non-zero on the first failure.
"""
import sys

import adbc_driver_flightsql.dbapi as flightsql
import duckdb
import pyarrow as pa
import pyarrow.flight as flight

uri, token = sys.argv[1], sys.argv[2]

TABLES = [
    "CREATE TABLE pens (zone VARCHAR, number INTEGER, area DECIMAL(9,2) NOT NULL, PRIMARY KEY (zone, number))",
    "CREATE TABLE animals (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, weight DECIMAL(9,2) DEFAULT 1.5,"
    " born DATE, seen TIMESTAMP, tags VARCHAR[], zone VARCHAR, pen INTEGER,"
    " FOREIGN KEY (zone, pen) REFERENCES pens (zone, number))",
    "INSERT INTO pens VALUES ('north', 1, 12.5), ('south', 2, 30.25)",
    "INSERT INTO animals VALUES (1, 'duck', 1.25, DATE '2020-04-01', TIMESTAMP '2024-01-02 03:04:05.123456',"
    " ['water'], 'north', 1), (2, 'owl', NULL, NULL, NULL, NULL, 'south', 2)",
]


def check(name, condition, detail=""):
    if not condition:
        print("FAILED " + name + ": " + str(detail), flush=True)
        sys.exit(1)
    print("ok " + name, flush=True)


def arrow(relation):
    table = relation.arrow()
    return table.read_all() if hasattr(table, "read_all") else table


reference = duckdb.connect()
for statement in TABLES:
    reference.execute(statement)


def expected_columns(table):
    rows = reference.execute("SELECT column_name, data_type, is_nullable, numeric_precision, numeric_scale"
                             " FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
                             [table]).fetchall()
    return [(name, type_name, 1 if nullable == "YES" else 0, nullable,
             precision if type_name.startswith("DECIMAL") else None,
             scale if type_name.startswith("DECIMAL") else None)
            for name, type_name, nullable, precision, scale in rows]


def expected_primary_key(table):
    return reference.execute("SELECT table_name, unnest(constraint_column_names),"
                             " unnest(range(1, len(constraint_column_names) + 1)) FROM duckdb_constraints()"
                             " WHERE constraint_type = 'PRIMARY KEY' AND table_name = ?", [table]).fetchall()


# ---- ADBC: get_objects
with flightsql.connect(uri, db_kwargs={"adbc.flight.sql.authorization_header": "Bearer " + token},
                       autocommit=True) as conn:
    with conn.cursor() as cur:
        for statement in TABLES:
            cur.execute(statement)
    objects = conn.adbc_get_objects(depth="all").read_all().to_pylist()
    columns = {}
    for catalog in objects:
        for schema in catalog["catalog_db_schemas"] or []:
            for table in schema["db_schema_tables"] or []:
                columns[(catalog["catalog_name"], schema["db_schema_name"], table["table_name"])] = [
                    (column["column_name"], column["xdbc_type_name"]) for column in table["table_columns"] or []]
    for name in ("pens", "animals"):
        expected = [(column, type_name) for column, type_name, *_ in expected_columns(name)]
        check("get_objects gives the column type names of %s as DuckDB's information_schema" % name,
              columns.get(("memory", "main", name)) == expected, (columns.get(("memory", "main", name)), expected))

# ---- pyarrow.flight: a Flight SQL command by hand, and Flight's own calls
options = flight.FlightCallOptions(headers=[(b"authorization", ("Bearer " + token).encode())])
client = flight.FlightClient(uri)


def varint(number):
    encoded = b""
    while True:
        low, number = number & 0x7F, number >> 7
        if not number:
            return encoded + bytes([low])
        encoded += bytes([low | 0x80])


def text_field(number, text):
    payload = text.encode()
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def flight_sql_command(name, *texts, include_schema=False):
    """A Flight SQL command (texts are its string fields 1, 2, ...; include_schema is GetTables' field 5) packed in
    a protobuf Any, as a descriptor."""
    message = b"".join(text_field(number, text) for number, text in enumerate(texts, start=1) if text is not None)
    if include_schema:
        message += varint(5 << 3) + varint(1)
    packed = text_field(1, "type.googleapis.com/arrow.flight.protocol.sql." + name)
    packed += varint(2 << 3 | 2) + varint(len(message)) + message
    return flight.FlightDescriptor.for_command(packed)


def read(info):
    return client.do_get(info.endpoints[0].ticket, options).read_all()


keys = read(client.get_flight_info(flight_sql_command("CommandGetPrimaryKeys", "memory", "main", "pens"), options))
check("GetPrimaryKeys lists DuckDB's primary key columns",
      [(row["table_name"], row["column_name"], row["key_sequence"]) for row in keys.to_pylist()]
      == expected_primary_key("pens"), (keys.to_pylist(), expected_primary_key("pens")))

tables = read(client.get_flight_info(flight_sql_command("CommandGetTables", "memory", "main", "%",
                                                       include_schema=True), options)).to_pylist()
for name in ("pens", "animals"):
    schema = pa.ipc.read_schema(pa.py_buffer(next(row["table_schema"] for row in tables if row["table_name"] == name)))
    described = []
    disagreeing = []
    for field in schema:
        metadata = {key.decode(): value.decode() for key, value in (field.metadata or {}).items()}
        size = metadata.get("XDBC_COLUMN_SIZE")
        digits = metadata.get("XDBC_DECIMAL_DIGITS")
        described.append((field.name, metadata.get("ARROW:FLIGHT:SQL:TYPE_NAME"), int(field.nullable),
                          metadata.get("XDBC_IS_NULLABLE"), int(size) if size else None,
                          int(digits) if digits else None))
        if metadata.get("XDBC_NULLABLE") != str(int(field.nullable)):
            disagreeing.append((field.name, metadata))
    check("GetTables gives the columns of %s as DuckDB's information_schema" % name,
          described == expected_columns(name) and not disagreeing, (described, expected_columns(name), disagreeing))

listed = {tuple(part.decode() for part in info.descriptor.path): info.schema.names
          for info in client.list_flights(options=options)}
check("list_flights lists the tables by path", listed.get(("memory", "main", "animals")) ==
      [name for name, *_ in expected_columns("animals")], listed)
for path in (("memory", "main", "animals"), ("animals",)):
    got = read(client.get_flight_info(flight.FlightDescriptor.for_path(*path), options))
    check("get_flight_info and do_get of %s read DuckDB's rows" % "/".join(path),
          got.to_pylist() == arrow(reference.sql("SELECT * FROM animals")).to_pylist(), got.to_pylist())

print("ALL OK", flush=True)
