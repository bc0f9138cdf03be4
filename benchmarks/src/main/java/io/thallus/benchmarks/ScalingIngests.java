package io.thallus.benchmarks;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.IngestResult;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.cli.sidebyside.Peers;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.engine.IngestSpec;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.spi.BatchContents;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.duckdb.DuckDBConnection;

/**
 * The ingest contenders of {@link ScalingBench}: K clients of a transport each writing the same batches into a table
 * of its own, and the in-process ceilings. {@link IngestPeer#written} reads back what one writer wrote (untimed).
 */
final class ScalingIngests {
  static final String PLAIN_DUCKDB = "plain DuckDB ingest";
  static final String ENGINE = "engine ingest";
  static final String READ_IN_PROCESS = "reading the batches in-process";

  /** An ingest contender: the timed write, then what landed, read back untimed, and the table dropped. */
  interface IngestPeer extends ScalingPeer {
    /** Rows and every column's sum of what the {@code index}-th writer wrote; frees it. */
    Tally written(int index) throws Exception;
  }

  private ScalingIngests() {}

  /** The {@code index}-th client writes the batches into {@code table_index} on the server over {@code engine}. */
  static IngestPeer thallus(String transport, IntFunction<ThallusClient> clients, IngestBench.Batches batches,
      QueryEngine engine, BufferAllocator allocator) {
    String table = "scaling_" + transport + "_";
    return new IngestPeer() {
      @Override
      public String name() {
        return transport;
      }

      @Override
      public boolean ceiling() {
        return false;
      }

      @Override
      public Tally run(int index, boolean everyColumn) throws Exception {
        IngestResult result;
        try (ArrowReader reader = batches.reader()) {
          result = clients.apply(index).ingest(IngestRequest.of(table + index, IngestMode.REPLACE), reader);
        }
        return new Tally(result.rows(), new long[0]);
      }

      @Override
      public Tally written(int index) {
        return engineTable(engine, table + index, allocator);
      }
    };
  }

  /** The server's own ingest with no transport: the same engine's sessions, K at once, each into its own table. */
  static IngestPeer engine(QueryEngine engine, IngestBench.Batches batches, int writers, BufferAllocator allocator) {
    EngineSession[] sessions = new EngineSession[writers];
    for (int i = 0; i < writers; i++) {
      sessions[i] = engine.openSession();
    }
    return new IngestPeer() {
      @Override
      public String name() {
        return ENGINE;
      }

      @Override
      public boolean ceiling() {
        return true;
      }

      @Override
      public Tally run(int index, boolean everyColumn) throws Exception {
        try (ArrowReader reader = batches.reader()) {
          long rows = sessions[index].ingest(new IngestSpec("scaling_engine_" + index, IngestMode.REPLACE,
              reader.getVectorSchemaRoot().getSchema()), reader, allocator, new CancelSignal());
          return new Tally(rows, new long[0]);
        }
      }

      @Override
      public Tally written(int index) {
        return engineTable(engine, "scaling_engine_" + index, allocator);
      }

      @Override
      public void close() {
        for (EngineSession session : sessions) {
          session.close();
        }
      }
    };
  }

  /**
   * DuckDB run plainly: one connection per writer (duplicates of one in-memory database, default settings), each
   * registering the batches as an Arrow stream and creating its table from it.
   */
  static IngestPeer plainDuckDB(List<DuckDBConnection> connections, IngestBench.Batches batches,
      BufferAllocator allocator) {
    return new IngestPeer() {
      @Override
      public String name() {
        return PLAIN_DUCKDB;
      }

      @Override
      public boolean ceiling() {
        return true;
      }

      @Override
      public Tally run(int index, boolean everyColumn) throws Exception {
        DuckDBConnection connection = connections.get(index);
        try (ArrowReader reader = batches.reader();
             ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator);
             Statement statement = connection.createStatement()) {
          Data.exportArrayStream(allocator, reader, stream);
          connection.registerArrowStream("scaling_source_" + index, stream);
          long rows = statement.executeLargeUpdate("CREATE OR REPLACE TABLE scaling_plain_" + index
              + " AS SELECT * FROM scaling_source_" + index);
          statement.execute("DROP VIEW IF EXISTS scaling_source_" + index);
          return new Tally(rows, new long[0]);
        }
      }

      @Override
      public Tally written(int index) throws SQLException {
        String table = "scaling_plain_" + index;
        try (Statement statement = connections.get(index).createStatement()) {
          Tally tally;
          try (ResultSet row = statement.executeQuery(sumsQuery(table))) {
            row.next();
            long[] sums = new long[8];
            for (int c = 0; c < sums.length; c++) {
              sums[c] = row.getLong(c + 2);
            }
            tally = new Tally(row.getLong(1), sums);
          }
          statement.execute("DROP TABLE " + table);
          return tally;
        }
      }
    };
  }

  /** The {@code index}-th client writes the batches to the server over {@code drain}, which only reads them. */
  static IngestPeer drained(String transport, IntFunction<ThallusClient> clients, IngestBench.Batches batches,
      TableDrain drain) {
    return new IngestPeer() {
      @Override
      public String name() {
        return transport;
      }

      @Override
      public boolean ceiling() {
        return false;
      }

      @Override
      public Tally run(int index, boolean everyColumn) throws Exception {
        IngestResult result;
        try (ArrowReader reader = batches.reader()) {
          result = clients.apply(index).ingest(IngestRequest.of("drained_" + index, IngestMode.REPLACE), reader);
        }
        return new Tally(result.rows(), new long[0]);
      }

      @Override
      public Tally written(int index) {
        return drain.take("drained_" + index);
      }
    };
  }

  /** The transport-only ceiling: K threads reading the batches in this process, as the drain engine reads them. */
  static IngestPeer readInProcess(IngestBench.Batches batches, int readers) {
    ScalingPeer.Tally[] read = new ScalingPeer.Tally[readers];
    return new IngestPeer() {
      @Override
      public String name() {
        return READ_IN_PROCESS;
      }

      @Override
      public boolean ceiling() {
        return true;
      }

      @Override
      public Tally run(int index, boolean everyColumn) throws Exception {
        try (ArrowReader reader = batches.reader()) {
          read[index] = TableDrain.read(reader);
        }
        return read[index];
      }

      @Override
      public Tally written(int index) {
        return read[index];
      }
    };
  }

  /** Count and every column's sum of {@code table} (8 BIGINT columns), as one row of BIGINTs. */
  static String sumsQuery(String table) {
    StringBuilder sql = new StringBuilder("SELECT count(*)::BIGINT");
    for (int c = 0; c < 8; c++) {
      sql.append(", sum(c").append(c).append(")::BIGINT");
    }
    return sql.append(" FROM ").append(table).toString();
  }

  /** Count and sums of a table in the engine's database, read in process; the table is dropped after. */
  private static ScalingPeer.Tally engineTable(QueryEngine engine, String table, BufferAllocator allocator) {
    ScalingPeer.Tally tally = null;
    try (QueryResult result = engine.execute(Peers.spec(sumsQuery(table), 16), allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(result.schema(), allocator)) {
      for (BatchContents batch; (batch = result.next()) != null; ) {
        try (BatchContents held = batch) {
          new VectorLoader(root).load(held.records());
          long[] sums = new long[8];
          for (int c = 0; c < sums.length; c++) {
            sums[c] = ((BigIntVector) root.getVector(c + 1)).get(0);
          }
          tally = new ScalingPeer.Tally(((BigIntVector) root.getVector(0)).get(0), sums);
        }
      }
    }
    try (QueryResult dropped = engine.execute(Peers.spec("DROP TABLE " + table, 16), allocator)) {
      for (BatchContents batch; (batch = dropped.next()) != null; ) {
        batch.close();
      }
    }
    return tally;
  }

  /**
   * An engine that takes ingests and only reads them (rows and the first column's sum, as {@link IngestBench}'s
   * drain does), keeping each table's tally for the check: what remains of an ingest's time is the transport.
   */
  static final class TableDrain implements QueryEngine {
    private final Map<String, ScalingPeer.Tally> tallies = new ConcurrentHashMap<>();

    static ScalingPeer.Tally read(ArrowReader reader) throws java.io.IOException {
      ScalingPeer.Adder adder = new ScalingPeer.Adder(false);
      while (reader.loadNextBatch()) {
        adder.add(reader.getVectorSchemaRoot());
      }
      return adder.tally();
    }

    ScalingPeer.Tally take(String table) {
      ScalingPeer.Tally tally = tallies.remove(table);
      if (tally == null) {
        throw new IllegalStateException("the drain engine got no ingest into " + table);
      }
      return tally;
    }

    @Override
    public QueryResult execute(QuerySpec spec, BufferAllocator allocator) {
      throw ThallusException.of(StatusCode.UNIMPLEMENTED, "this engine only takes ingests");
    }

    @Override
    public EngineSession openSession() {
      return new EngineSession() {
        @Override
        public QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
          return TableDrain.this.execute(spec, allocator);
        }

        @Override
        public long ingest(IngestSpec spec, ArrowReader batches, BufferAllocator allocator, CancelSignal cancel) {
          try {
            ScalingPeer.Tally tally = read(batches);
            tallies.put(spec.table(), tally);
            return tally.rows();
          } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
          }
        }

        @Override
        public void close() {}
      };
    }

    @Override
    public void close() {}
  }
}
