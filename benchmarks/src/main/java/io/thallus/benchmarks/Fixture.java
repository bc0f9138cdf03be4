package io.thallus.benchmarks;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.server.Overlap;
import io.thallus.server.ThallusServer;
import io.thallus.cli.sidebyside.Peer;
import io.thallus.cli.sidebyside.Peers;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.internal.Transports;
import io.thallus.spi.BatchContents;
import io.thallus.cli.sidebyside.PreparedQueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.spi.Transport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Everything one benchmark run needs, in one JVM: one DuckDB behind a {@link PreparedQueryEngine}, the Thallus server
 * and an Arrow Flight server both over it, and long-lived clients (one per transport and batch size, as an
 * application keeps them: connecting is not what is timed). Used by the JMH benchmarks and by {@link Suite}.
 */
final class Fixture implements AutoCloseable {
  static final String FLIGHT = "Flight";
  /** The engine's own in-process export (the server's DuckDB engine, no transport): the suite's first ceiling. */
  static final String DUCKDB = "DuckDB export";
  /** DuckDB run plainly (its JDBC driver, default settings): the second ceiling, beside the engine's. */
  static final String PLAIN_DUCKDB = PlainDuckDB.EXPORT;

  private final BufferAllocator root = new RootAllocator();
  private final BufferAllocator preparedMemory = root.newChildAllocator("prepared", 0, Long.MAX_VALUE);
  private final BufferAllocator flightServerMemory = root.newChildAllocator("flight-server", 0, Long.MAX_VALUE);
  private final BufferAllocator clientMemory = root.newChildAllocator("clients", 0, Long.MAX_VALUE);
  private final BufferAllocator inProcessMemory = root.newChildAllocator("in-process", 0, Long.MAX_VALUE);
  private final PreparedQueryEngine engine;
  private final ThallusServer server;
  private final FlightPeer flight;
  private final List<String> transports = new ArrayList<>();
  private final Map<String, ThallusClient> clients = new HashMap<>();
  private final BufferAllocator flightSqlMemory = root.newChildAllocator("flight-sql", 0, Long.MAX_VALUE);
  private FlightSqlServer flightSql;
  private final PlainDuckDB plain = new PlainDuckDB();

  Fixture() {
    this(Overlap.auto());
  }

  /** With the server's overlap set ({@link OverlapBench} compares two). */
  Fixture(Overlap overlap) {
    engine = new PreparedQueryEngine(DuckDBEngine.create(), preparedMemory);
    server = ThallusServer.builder(root, Location.of("127.0.0.1", 0), engine).overlap(overlap).build().start();
    flight = new FlightPeer(engine, flightServerMemory, clientMemory);
    for (Transport transport : Transports.available()) {
      if (transport.isAvailableFor("127.0.0.1")) {
        transports.add(transport.name());
      }
    }
  }

  /** The Thallus transports usable on this machine, in preference order. */
  List<String> transports() {
    return List.copyOf(transports);
  }

  /** Runs a statement (DDL) in the server's DuckDB, in this thread. */
  void execute(String sql) {
    try (QueryResult result = engine.execute(Peers.spec(sql, 1024), inProcessMemory)) {
      BatchContents batch;
      while ((batch = result.next()) != null) {
        batch.close();
      }
    }
  }

  /** Runs a statement (DDL) in both the server's DuckDB and the plain one, so both hold the same tables. */
  void executeEverywhere(String sql) {
    execute(sql);
    plain.execute(sql);
  }

  /** Runs {@code sql} now and keeps its batches in server memory: the transport-only setting. Returns them. */
  List<BatchContents> prepare(String sql, int batchRows) {
    engine.prepare(sql, batchRows);
    return engine.batches(sql, batchRows);
  }

  void forget(String sql, int batchRows) {
    engine.forget(sql, batchRows);
  }

  Peer thallus(String transport, String sql, int batchRows) {
    ThallusClient client = clients.computeIfAbsent(transport + "/" + batchRows, key -> ThallusClient.connect(
        clientMemory, server.getLocation().withTransport(transport),
        ClientOptions.builder().batchRows(batchRows).build()));
    return Peers.thallus(transport, client, QueryRequest.builder(sql).batchRows(batchRows).build());
  }

  Peer flight(String sql, int batchRows) {
    return flight.query(FLIGHT, sql, batchRows);
  }

  /** The query run in this process by the same engine: DuckDB's own Arrow export, or the prepared batches. */
  Peer inProcess(String sql, int batchRows) {
    return Peers.inProcess(DUCKDB, Peer.Kind.CEILING, engine, Peers.spec(sql, batchRows), inProcessMemory);
  }

  /** The query read in this process from DuckDB run plainly (JDBC {@code arrowExportStream}, default settings). */
  Peer plainDuckDB(String sql, int batchRows) {
    return plain.export(sql, batchRows, inProcessMemory);
  }

  /** The Thallus server's port, for JDBC URLs. */
  int thallusPort() {
    return server.getLocation().port();
  }

  /** A Flight SQL server over the same engine, started on first use. */
  FlightSqlServer flightSql() {
    if (flightSql == null) {
      flightSql = new FlightSqlServer(engine, flightSqlMemory);
    }
    return flightSql;
  }

  /** DuckDB's version, for the record of a run. */
  String duckdbVersion() {
    try (QueryResult result = engine.execute(Peers.spec("SELECT version() AS v", 16), inProcessMemory);
         VectorSchemaRoot root = VectorSchemaRoot.create(result.schema(), inProcessMemory)) {
      try (BatchContents batch = result.next()) {
        new VectorLoader(root).load(batch.records());
        return root.getVector(0).getObject(0).toString();
      }
    }
  }

  @Override
  public void close() throws Exception {
    try {
      for (ThallusClient client : clients.values()) {
        client.close();
      }
      flight.close();
      if (flightSql != null) {
        flightSql.close();
      }
      server.close();
      engine.close();
      plain.close();
    } finally {
      inProcessMemory.close();
      flightSqlMemory.close();
      clientMemory.close();
      flightServerMemory.close();
      preparedMemory.close();
      root.close();
    }
  }
}
