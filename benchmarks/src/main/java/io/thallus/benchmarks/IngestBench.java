package io.thallus.benchmarks;

import io.thallus.ClientOptions;
import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.IngestResult;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.server.ThallusServer;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.internal.Transports;
import io.thallus.spi.BatchContents;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.engine.IngestSpec;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.spi.Transport;
import java.util.Optional;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.AsyncPutListener;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSet;

/**
 * Ingest side by side in one JVM and one run: the same Arrow batches (made once, held in client memory) written into
 * an in-memory DuckDB table by Thallus over each same-host transport and tcp and ipc, by Arrow Flight DoPut (Java,
 * default settings: a Flight server whose DoPut hands the stream to the same engine, DuckDBEngine, through the same
 * Arrow C stream interface Thallus's server uses), by that engine in this process taking the batches straight from
 * memory (the engine's ceiling: the server's own ingest with no transport at all), by DuckDB run plainly in this
 * process (the batches registered as an Arrow stream through its JDBC driver, default settings: the second ceiling),
 * by DuckDB's appender in this process, and by DuckDB's JDBC executeBatch (the call Spark's JDBC writer makes) on a
 * sample; then the same into an engine that only reads the batches (transport only). Rounds alternate between peers so each sees the same machine noise; each
 * figure is the median of its rounds, and every table is checked (count and per-column sums against the source)
 * before a round counts. Client CPU is the writing thread's CPU time per GB of Arrow buffers. Run by
 * {@code benchmarks/run.sh}.
 */
public final class IngestBench {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private static final String CEILING = "DuckDB ingest in-process, same engine (ceiling)";
  private static final String APPENDER = "DuckDB appender in-process";
  /** DuckDB run plainly (default settings): the batches registered as an Arrow stream, a table made from it. */
  private static final String PLAIN = "plain DuckDB ingest in-process (registerArrowStream, defaults; ceiling)";
  private static final String DOPUT = "Arrow Flight DoPut (Java)";
  private static final String EXECUTE_BATCH = "DuckDB JDBC executeBatch (Spark JDBC writer's path)";

  /** One table to ingest: its name and the query that makes its rows. */
  private record Table(String name, String sql) {}

  /** A peer's rounds: seconds each, and the writing thread's CPU seconds each. */
  private record Rounds(List<Double> seconds, List<Double> cpu, long rows) {
    double median() {
      return IngestBench.median(seconds);
    }
  }

  private IngestBench() {}

  public static void main(String[] args) throws Exception {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    int batchRows = args.length > 2 ? Integer.parseInt(args[2]) : 131_072;
    int executeBatchRows = args.length > 3 ? Integer.parseInt(args[3]) : 20_000;
    List<Table> tables = List.of(
        new Table("bigint", "SELECT i AS c0, i * 2 AS c1, i * 3 AS c2, i * 5 AS c3, i * 7 AS c4, i * 11 AS c5, "
            + "i * 13 AS c6, i * 17 AS c7 FROM range(" + rows + ") t(i)"),
        new Table("mixed", "SELECT i AS c0, i * 3 AS c1, (i % 1000)::INTEGER AS c2, i * 0.25 AS c3, "
            + "'customer ' || i AS c4, CASE WHEN i % 7 = 0 THEN NULL ELSE repeat(chr((97 + i % 26)::INTEGER), "
            + "(i % 24)::INTEGER) END AS c5, -i AS c6, (i % 2 = 0) AS c7 FROM range(" + rows + ") t(i)"));
    StringBuilder out = new StringBuilder();
    out.append("## Ingest: ").append(rows).append(" rows x 8 columns, batches of ").append(batchRows)
        .append(" rows, median of ").append(rounds).append(" rounds\n\n");
    String onlyTables = System.getenv("THALLUS_INGEST_TABLES");
    DrainEngine drain = new DrainEngine();
    try (BufferAllocator root = new RootAllocator();
         ThallusServer server = ThallusServer.builder(root, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .memoryPerClient(4L << 30).build().start();
         ThallusServer drainServer = ThallusServer.builder(root, Location.of("127.0.0.1", 0), drain)
             .memoryPerClient(4L << 30).build().start()) {
      out.append("End to end: into a DuckDB table (create or replace), checked by count and per-column hash sums.\n\n");
      for (Table table : tables) {
        if (onlyTables == null || table.name().matches(onlyTables)) {
          out.append(run(root, server, null, table, rounds, batchRows, executeBatchRows));
        }
      }
      out.append("Transport only: the same batches to a server (and a Flight DoPut) whose engine only reads them, "
          + "checked by rows, nulls per column and a sum of the first column; the ceiling is reading them in this "
          + "process.\n\n");
      for (Table table : tables) {
        if (onlyTables == null || table.name().matches(onlyTables)) {
          out.append(run(root, drainServer, drain, table, rounds, batchRows, 0));
        }
      }
    }
    System.out.print(out);
  }

  /** One table's peers, into DuckDB ({@code drain} null) or into an engine that only reads the batches. */
  private static String run(BufferAllocator root, ThallusServer server, DrainEngine drain, Table table, int rounds,
      int batchRows, int executeBatchRows) throws Exception {
    BufferAllocator source = root.newChildAllocator("source", 0, Long.MAX_VALUE);
    BufferAllocator clients = root.newChildAllocator("clients", 0, Long.MAX_VALUE);
    List<String> transports = new ArrayList<>();
    for (Transport transport : Transports.available()) {
      // rdma where a device is (the Soft-RoCE guest: harness/transport-bench.sh), the others everywhere.
      if (transport.isAvailableFor("127.0.0.1")) {
        transports.add(transport.name());
      }
    }
    Map<String, ThallusClient> thallus = new LinkedHashMap<>();
    try (Batches batches = Batches.of(table.sql(), batchRows, source);
         DuckDBConnection local = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
         QueryEngine ceilingEngine = drain != null ? drain.unclosed() : DuckDBEngine.create();
         EngineSession ceiling = ceilingEngine.openSession();
         FlightPeer flight = new FlightPeer(root, drain != null ? drain.unclosed() : DuckDBEngine.create())) {
      String expected;
      if (drain != null) {
        try (ArrowReader reader = batches.reader()) {
          expected = DrainEngine.read(reader);
        }
      } else {
        expected = checksum(local, "(" + table.sql() + ")");
      }
      for (String transport : transports) {
        thallus.put("thallus " + transport, ThallusClient.connect(clients,
            server.getLocation().withTransport(transport), ClientOptions.builder().credits(8).build()));
      }
      Map<String, Rounds> results = new LinkedHashMap<>();
      List<String> peers = new ArrayList<>(thallus.keySet());
      peers.add(DOPUT);
      peers.add(CEILING);
      if (drain == null) {
        peers.add(PLAIN);
      }
      if (table.name().equals("bigint") && drain == null) {
        peers.add(APPENDER);
      }
      // THALLUS_INGEST_PEERS (a regular expression) runs only the peers it matches, for quick experiments; the
      // ceilings and Flight DoPut always run, since every ratio is to them.
      String only = System.getenv("THALLUS_INGEST_PEERS");
      if (only != null) {
        peers.removeIf(peer -> !peer.matches(only) && !peer.equals(CEILING) && !peer.equals(PLAIN)
            && !peer.equals(DOPUT));
      }
      for (String peer : peers) {
        results.put(peer, new Rounds(new ArrayList<>(), new ArrayList<>(), batches.rows()));
      }
      // Round -1 warms every path up and is not counted.
      for (int round = -1; round < rounds; round++) {
        for (String peer : peers) {
          long cpu = THREADS.getCurrentThreadCpuTime();
          long start = System.nanoTime();
          String check;
          if (thallus.containsKey(peer)) {
            ThallusClient client = thallus.get(peer);
            IngestResult written;
            try (ArrowReader reader = batches.reader()) {
              written = client.ingest(IngestRequest.of("ingested", IngestMode.REPLACE), reader);
            }
            if (written.rows() != batches.rows()) {
              throw new IllegalStateException(peer + " wrote " + written.rows() + " rows of " + batches.rows());
            }
            long seconds = System.nanoTime() - start;
            cpu = THREADS.getCurrentThreadCpuTime() - cpu;
            check = drain != null ? drain.last() : serverChecksum(client);
            record(results.get(peer), round, seconds, cpu);
          } else if (peer.equals(DOPUT)) {
            flight.put(batches);
            long seconds = System.nanoTime() - start;
            cpu = THREADS.getCurrentThreadCpuTime() - cpu;
            check = drain != null ? drain.last() : checksum(flight.session(), source);
            record(results.get(peer), round, seconds, cpu);
          } else if (peer.equals(CEILING)) {
            try (ArrowReader reader = batches.reader()) {
              ceiling.ingest(new IngestSpec("ingested", IngestMode.REPLACE, batches.schema), reader, source,
                  new CancelSignal());
            }
            long seconds = System.nanoTime() - start;
            cpu = THREADS.getCurrentThreadCpuTime() - cpu;
            check = drain != null ? drain.last() : checksum(ceiling, source);
            record(results.get(peer), round, seconds, cpu);
          } else if (peer.equals(PLAIN)) {
            plainIngest(local, batches, source);
            long seconds = System.nanoTime() - start;
            cpu = THREADS.getCurrentThreadCpuTime() - cpu;
            check = checksum(local, "ingested");
            record(results.get(peer), round, seconds, cpu);
          } else {
            append(local, batches);
            long seconds = System.nanoTime() - start;
            cpu = THREADS.getCurrentThreadCpuTime() - cpu;
            check = checksum(local, "ingested");
            record(results.get(peer), round, seconds, cpu);
          }
          if (!check.equals(expected)) {
            throw new IllegalStateException(peer + " wrote a table whose checksum differs: " + check + " vs "
                + expected);
          }
        }
      }
      Rounds sample = executeBatchRows > 0 ? executeBatch(local, batches, executeBatchRows, rounds) : null;
      return table(table.name() + (drain != null ? ", transport only" : ""), batches, results, sample);
    } finally {
      // Closed before their allocator even when a round failed, so the failure is what the run reports.
      for (ThallusClient client : thallus.values()) {
        client.close();
      }
      clients.close();
      source.close();
    }
  }

  private static void record(Rounds rounds, int round, long nanos, long cpuNanos) {
    if (round >= 0) {
      rounds.seconds().add(nanos / 1e9);
      rounds.cpu().add(cpuNanos / 1e9);
    }
  }

  private static String table(String name, Batches batches, Map<String, Rounds> results, Rounds sample) {
    double gb = batches.bytes() / 1e9;
    double doPut = results.get(DOPUT).median();
    double ceiling = results.get(CEILING).median();
    Rounds plainRounds = results.get(PLAIN);
    double plain = plainRounds == null ? Double.NaN : plainRounds.median();
    StringBuilder out = new StringBuilder();
    out.append("### ").append(name).append(" (").append(String.format(Locale.ROOT, "%.2f", gb))
        .append(" GB of Arrow buffers)\n\n");
    out.append("| peer | median s | rows/s | GB/s | x Flight DoPut | x engine ingest (ceiling) "
        + "| x plain DuckDB ingest (ceiling) | client CPU s/GB |\n");
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    String fastestSameHost = null;
    for (Map.Entry<String, Rounds> entry : results.entrySet()) {
      double seconds = entry.getValue().median();
      String label = name.endsWith("transport only") && entry.getKey().equals(CEILING)
          ? "reading the batches in-process (ceiling)" : entry.getKey();
      out.append(String.format(Locale.ROOT, "| %s | %.3f | %,.0f | %.2f | %.2f | %.2f | %s | %.2f |%n", label,
          seconds, entry.getValue().rows() / seconds, gb / seconds, doPut / seconds, ceiling / seconds,
          Double.isNaN(plain) ? "" : String.format(Locale.ROOT, "%.2f", plain / seconds),
          median(entry.getValue().cpu()) / gb));
      String peer = entry.getKey();
      if (peer.matches("thallus (shm|cma|rdma)") && (fastestSameHost == null
          || seconds < results.get(fastestSameHost).median())) {
        fastestSameHost = peer;
      }
    }
    double sampleSeconds = sample == null ? 0 : sample.median();
    if (sample != null) {
      out.append(String.format(Locale.ROOT, "| %s, %d rows | %.3f | %,.0f | %.4f | (%.4f) | | | |%n", EXECUTE_BATCH,
          sample.rows(), sampleSeconds, sample.rows() / sampleSeconds,
          gb * sample.rows() / batches.rows() / sampleSeconds,
          doPut / (sampleSeconds * batches.rows() / sample.rows())));
    }
    out.append('\n');
    boolean transportOnly = name.endsWith("transport only");
    String setting = transportOnly ? " (transport only)" : "";
    if (fastestSameHost != null) {
      double fast = results.get(fastestSameHost).median();
      out.append(target("fastest same-host transport (" + fastestSameHost + ") >= 5x Flight DoPut" + setting,
          doPut / fast, 5));
      if (!transportOnly) {
        out.append(target("fastest same-host transport (" + fastestSameHost + ") >= 0.8x the engine's in-process "
            + "ingest", ceiling / fast, 0.8));
        if (!Double.isNaN(plain)) {
          out.append(target("fastest same-host transport (" + fastestSameHost + ") >= 0.8x plain DuckDB's "
              + "in-process ingest (issue 36)", plain / fast, 0.8));
        }
      }
    }
    if (results.containsKey("thallus tcp")) {
      out.append(target("tcp >= 3x Flight DoPut" + setting, doPut / results.get("thallus tcp").median(), 3));
    }
    out.append('\n');
    return out.toString();
  }

  private static String target(String what, double ratio, double goal) {
    return String.format(Locale.ROOT, "- %s: %.2f, %s%n", what, ratio, ratio >= goal ? "met" : "missed");
  }

  static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  /** Count and a sum per column: equal tables give equal strings. */
  private static String checksum(Connection duckdb, String relation) throws SQLException {
    try (Statement statement = duckdb.createStatement();
         ResultSet columns = statement.executeQuery("SELECT * FROM " + relation + " LIMIT 0")) {
      int count = columns.getMetaData().getColumnCount();
      StringBuilder sql = new StringBuilder("SELECT count(*)");
      for (int c = 1; c <= count; c++) {
        sql.append(", sum(hash(\"").append(columns.getMetaData().getColumnName(c)).append("\"))");
      }
      try (Statement sums = duckdb.createStatement();
           ResultSet row = sums.executeQuery(sql + " FROM " + relation)) {
        row.next();
        StringBuilder result = new StringBuilder();
        for (int c = 1; c <= count + 1; c++) {
          result.append(row.getObject(c)).append(' ');
        }
        return result.toString().trim();
      }
    }
  }

  /** The same checksum as {@link #serverChecksum}, through an engine session in this process. */
  private static String checksum(EngineSession session, BufferAllocator allocator) {
    StringBuilder sql = new StringBuilder("SELECT count(*)");
    try (QueryResult columns = session.execute(new QuerySpec("SELECT * FROM ingested LIMIT 0", Optional.empty(), 16,
        Map.of()), allocator, new CancelSignal())) {
      for (var field : columns.schema().getFields()) {
        sql.append(", sum(hash(\"").append(field.getName()).append("\"))::VARCHAR");
      }
      for (BatchContents batch; (batch = columns.next()) != null; ) {
        batch.close();
      }
    }
    StringBuilder result = new StringBuilder();
    try (QueryResult sums = session.execute(new QuerySpec(sql + " FROM ingested", Optional.empty(), 16, Map.of()),
        allocator, new CancelSignal());
         VectorSchemaRoot row = VectorSchemaRoot.create(sums.schema(), allocator)) {
      for (BatchContents next; (next = sums.next()) != null; ) {
        try (BatchContents batch = next) {
          new VectorLoader(row).load(batch.records());
          for (FieldVector vector : row.getFieldVectors()) {
            result.append(vector.getObject(0)).append(' ');
          }
        }
      }
    }
    return result.toString().trim();
  }

  private static String serverChecksum(ThallusClient client) {
    try (io.thallus.ThallusStream stream = client.query("SELECT * FROM ingested LIMIT 0")) {
      Schema schema = stream.getSchema();
      StringBuilder sql = new StringBuilder("SELECT count(*)");
      for (var field : schema.getFields()) {
        sql.append(", sum(hash(\"").append(field.getName()).append("\"))::VARCHAR");
      }
      try (io.thallus.ThallusStream sums = client.query(sql + " FROM ingested")) {
        StringBuilder result = new StringBuilder();
        while (sums.hasNext()) {
          try (VectorSchemaRoot row = sums.next()) {
            for (FieldVector vector : row.getFieldVectors()) {
              result.append(vector.getObject(0)).append(' ');
            }
          }
        }
        return result.toString().trim();
      }
    }
  }

  /**
   * DuckDB run plainly, as its users ingest Arrow in process: the batches exported as an Arrow C stream, registered
   * with DuckDB's JDBC driver, and a table created from it (default settings, no transaction of its own).
   */
  private static void plainIngest(DuckDBConnection duckdb, Batches batches, BufferAllocator allocator)
      throws Exception {
    try (ArrowReader reader = batches.reader();
         org.apache.arrow.c.ArrowArrayStream stream = org.apache.arrow.c.ArrowArrayStream.allocateNew(allocator);
         Statement statement = duckdb.createStatement()) {
      org.apache.arrow.c.Data.exportArrayStream(allocator, reader, stream);
      duckdb.registerArrowStream("plain_source", stream);
      statement.execute("CREATE OR REPLACE TABLE ingested AS SELECT * FROM plain_source");
      statement.execute("DROP VIEW IF EXISTS plain_source");
    }
  }

  /** DuckDB's appender, row by row, from the Arrow batches (BIGINT columns). */
  private static void append(DuckDBConnection duckdb, Batches batches) throws SQLException {
    try (Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE OR REPLACE TABLE ingested (c0 BIGINT, c1 BIGINT, c2 BIGINT, c3 BIGINT, c4 BIGINT, "
          + "c5 BIGINT, c6 BIGINT, c7 BIGINT)");
    }
    try (DuckDBAppender appender = duckdb.createAppender(DuckDBConnection.DEFAULT_SCHEMA, "ingested")) {
      for (VectorSchemaRoot batch : batches.roots()) {
        List<org.apache.arrow.vector.BigIntVector> columns = new ArrayList<>();
        for (FieldVector vector : batch.getFieldVectors()) {
          columns.add((org.apache.arrow.vector.BigIntVector) vector);
        }
        for (int row = 0; row < batch.getRowCount(); row++) {
          appender.beginRow();
          for (org.apache.arrow.vector.BigIntVector column : columns) {
            appender.append(column.get(row));
          }
          appender.endRow();
        }
      }
    }
  }

  /** DuckDB's JDBC executeBatch of the first {@code sample} rows: what Spark's JDBC writer does per partition. */
  private static Rounds executeBatch(DuckDBConnection duckdb, Batches batches, int sample, int rounds)
      throws SQLException {
    Rounds result = new Rounds(new ArrayList<>(), new ArrayList<>(), sample);
    VectorSchemaRoot first = batches.roots().getFirst();
    int columns = first.getFieldVectors().size();
    int n = Math.min(sample, first.getRowCount());
    String placeholders = String.join(", ", java.util.Collections.nCopies(columns, "?"));
    for (int round = -1; round < rounds; round++) {
      try (Statement statement = duckdb.createStatement()) {
        statement.execute("DROP TABLE IF EXISTS sampled");
      }
      try (Statement ddl = duckdb.createStatement()) {
        StringBuilder create = new StringBuilder("CREATE TABLE sampled (");
        for (int c = 0; c < columns; c++) {
          create.append(c == 0 ? "" : ", ").append("c").append(c).append(' ').append(duckdbType(first, c));
        }
        ddl.execute(create.append(")").toString());
      }
      long start = System.nanoTime();
      long cpu = THREADS.getCurrentThreadCpuTime();
      duckdb.setAutoCommit(false);
      try (PreparedStatement insert = duckdb.prepareStatement("INSERT INTO sampled VALUES (" + placeholders + ")")) {
        for (int row = 0; row < n; row++) {
          for (int c = 0; c < columns; c++) {
            insert.setObject(c + 1, jdbcValue(first.getVector(c), row));
          }
          insert.addBatch();
          // Spark's JDBC writer sends batches of 1,000 rows (its batchsize default).
          if ((row + 1) % 1000 == 0) {
            insert.executeBatch();
          }
        }
        insert.executeBatch();
      }
      duckdb.commit();
      duckdb.setAutoCommit(true);
      record(result, round, System.nanoTime() - start, THREADS.getCurrentThreadCpuTime() - cpu);
    }
    return new Rounds(result.seconds(), result.cpu(), n);
  }

  private static String duckdbType(VectorSchemaRoot root, int column) {
    return switch (root.getVector(column).getMinorType()) {
      case BIGINT -> "BIGINT";
      case INT -> "INTEGER";
      case FLOAT8 -> "DOUBLE";
      case BIT -> "BOOLEAN";
      case DECIMAL -> "DECIMAL(38,2)";
      default -> "VARCHAR";
    };
  }

  private static Object jdbcValue(FieldVector vector, int row) {
    Object value = vector.getObject(row);
    return value instanceof org.apache.arrow.vector.util.Text text ? text.toString() : value;
  }

  /** The source batches, made once by DuckDB in this process and held in memory. */
  static final class Batches implements AutoCloseable {
    private final Schema schema;
    private final List<VectorSchemaRoot> roots;
    private final BufferAllocator allocator;

    private Batches(Schema schema, List<VectorSchemaRoot> roots, BufferAllocator allocator) {
      this.schema = schema;
      this.roots = roots;
      this.allocator = allocator;
    }

    static Batches of(String sql, int batchRows, BufferAllocator allocator) throws Exception {
      List<VectorSchemaRoot> roots = new ArrayList<>();
      try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
           Statement statement = duckdb.createStatement();
           ResultSet result = statement.executeQuery(sql);
           ArrowReader reader = (ArrowReader) ((DuckDBResultSet) result).arrowExportStream(allocator, batchRows)) {
        Schema schema = reader.getVectorSchemaRoot().getSchema();
        while (reader.loadNextBatch()) {
          VectorSchemaRoot copy = VectorSchemaRoot.create(schema, allocator);
          try (ArrowRecordBatch batch = new VectorUnloader(reader.getVectorSchemaRoot()).getRecordBatch()) {
            new VectorLoader(copy).load(batch);
          }
          roots.add(copy);
        }
        return new Batches(schema, roots, allocator);
      }
    }

    List<VectorSchemaRoot> roots() {
      return roots;
    }

    long rows() {
      return roots.stream().mapToLong(VectorSchemaRoot::getRowCount).sum();
    }

    long bytes() {
      long total = 0;
      for (VectorSchemaRoot root : roots) {
        try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
          total += batch.computeBodyLength();
        }
      }
      return total;
    }

    /** A reader over the batches, lending their buffers (no copy); each call starts from the first batch. */
    ArrowReader reader() {
      java.util.Iterator<VectorSchemaRoot> next = roots.iterator();
      return new LendingReader(allocator, schema, () -> next.hasNext() ? next.next() : null);
    }

    @Override
    public void close() {
      roots.forEach(VectorSchemaRoot::close);
    }
  }

  /**
   * Arrow Flight as its users run it for writes: DoPut from a Flight client, a Flight server whose acceptPut hands
   * the incoming stream to DuckDB through the C stream interface (no copy of its own, as Thallus's server does).
   */
  private static final class FlightPeer implements AutoCloseable {
    private final BufferAllocator memory;
    private final QueryEngine engine;
    private final EngineSession database;
    private final FlightServer server;
    private final FlightClient client;

    FlightPeer(BufferAllocator root, QueryEngine engine) throws Exception {
      this.memory = root.newChildAllocator("flight", 0, Long.MAX_VALUE);
      this.engine = engine;
      this.database = engine.openSession();
      this.server = FlightServer.builder(memory, org.apache.arrow.flight.Location.forGrpcInsecure("127.0.0.1", 0),
          new Producer(database, memory)).build().start();
      this.client = FlightClient.builder(memory, org.apache.arrow.flight.Location.forGrpcInsecure("127.0.0.1",
          server.getPort())).build();
    }

    EngineSession session() {
      return database;
    }

    void put(Batches batches) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(batches.schema, memory)) {
        FlightClient.ClientStreamListener listener = client.startPut(
            FlightDescriptor.path("ingested"), root, new AsyncPutListener());
        VectorLoader loader = new VectorLoader(root);
        for (VectorSchemaRoot batch : batches.roots()) {
          try (ArrowRecordBatch unloaded = new VectorUnloader(batch).getRecordBatch()) {
            loader.load(unloaded);
          }
          listener.putNext();
        }
        listener.completed();
        listener.getResult();
      }
    }

    @Override
    public void close() throws Exception {
      client.close();
      server.shutdown();
      if (!server.awaitTermination(10, TimeUnit.SECONDS)) {
        server.close();
      }
      database.close();
      engine.close();
      memory.close();
    }

    /** DoPut hands the stream to the same engine Thallus's server uses, as an Arrow reader (no copy of its own). */
    private static final class Producer extends NoOpFlightProducer {
      private final EngineSession database;
      private final BufferAllocator memory;

      Producer(EngineSession database, BufferAllocator memory) {
        this.database = database;
        this.memory = memory;
      }

      @Override
      public Runnable acceptPut(CallContext context, FlightStream stream, StreamListener<PutResult> ack) {
        return () -> {
          String table = String.join(".", stream.getDescriptor().getPath());
          try (ArrowReader reader = new LendingReader(memory, stream.getSchema(),
              () -> stream.next() ? stream.getRoot() : null)) {
            database.ingest(new IngestSpec(table, IngestMode.REPLACE, stream.getSchema()), reader, memory,
                new CancelSignal());
            ack.onCompleted();
          } catch (Exception e) {
            ack.onError(CallStatus.INTERNAL.withDescription(String.valueOf(e.getMessage())).withCause(e)
                .toRuntimeException());
          }
        };
      }
    }

  }

  /**
   * Roots as an Arrow reader: each load lends the buffers of the next root {@code next} gives (null at the end) to the
   * reader's own root, without copying. Over the held source batches, and over a Flight stream.
   */
  private static final class LendingReader extends ArrowReader {
    private final Schema schema;
    private final java.util.function.Supplier<VectorSchemaRoot> next;

    LendingReader(BufferAllocator allocator, Schema schema, java.util.function.Supplier<VectorSchemaRoot> next) {
      super(allocator);
      this.schema = schema;
      this.next = next;
    }

    @Override
    public boolean loadNextBatch() throws java.io.IOException {
      VectorSchemaRoot source = next.get();
      if (source == null) {
        return false;
      }
      try (ArrowRecordBatch batch = new VectorUnloader(source).getRecordBatch()) {
        new VectorLoader(getVectorSchemaRoot()).load(batch);
      }
      return true;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {}

    @Override
    protected Schema readSchema() {
      return schema;
    }
  }

  /**
   * An engine that takes ingests and only reads them: every batch loaded, its rows and buffer bytes counted and the
   * first column summed (a BIGINT one) or hashed, then dropped. What remains of an ingest's time is the transport.
   */
  static final class DrainEngine implements QueryEngine {
    private volatile String last = "";

    String last() {
      return last;
    }

    /** The same engine, for a try-with-resources that must not close it (the server closes it). */
    QueryEngine unclosed() {
      DrainEngine self = this;
      return new QueryEngine() {
        @Override
        public QueryResult execute(QuerySpec spec, BufferAllocator allocator) {
          return self.execute(spec, allocator);
        }

        @Override
        public EngineSession openSession() {
          return self.openSession();
        }

        @Override
        public void close() {}
      };
    }

    /**
     * Rows, each column's nulls and a sum over the first column of every batch: cheap enough to leave the transport's
     * time visible, and independent of how the buffers are laid out (a serializing transport may size them
     * differently).
     */
    static String read(ArrowReader reader) {
      long rows = 0;
      long sum = 0;
      long[] nulls = null;
      try {
        while (reader.loadNextBatch()) {
          VectorSchemaRoot root = reader.getVectorSchemaRoot();
          rows += root.getRowCount();
          if (nulls == null) {
            nulls = new long[root.getFieldVectors().size()];
          }
          for (int c = 0; c < nulls.length; c++) {
            nulls[c] += root.getVector(c).getNullCount();
          }
          FieldVector first = root.getVector(0);
          if (first instanceof org.apache.arrow.vector.BigIntVector values) {
            for (int i = 0; i < root.getRowCount(); i++) {
              sum += values.isNull(i) ? 0 : values.get(i);
            }
          } else {
            sum += first.hashCode(0);
          }
        }
      } catch (java.io.IOException e) {
        throw new IllegalStateException(e);
      }
      return rows + " rows, nulls " + java.util.Arrays.toString(nulls) + ", " + sum;
    }

    @Override
    public QueryResult execute(QuerySpec spec, BufferAllocator allocator) {
      throw io.thallus.ThallusException.of(io.thallus.StatusCode.UNIMPLEMENTED, "this engine only takes ingests");
    }

    @Override
    public EngineSession openSession() {
      return new EngineSession() {
        @Override
        public QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
          return DrainEngine.this.execute(spec, allocator);
        }

        @Override
        public long ingest(IngestSpec spec, ArrowReader batches, BufferAllocator allocator, CancelSignal cancel) {
          String read = read(batches);
          last = read;
          return Long.parseLong(read.substring(0, read.indexOf(' ')));
        }

        @Override
        public void close() {}
      };
    }

    @Override
    public void close() {}
  }
}
