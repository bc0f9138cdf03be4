package io.thallus.benchmarks;

import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.cli.sidebyside.MemcpyBaseline;
import io.thallus.cli.sidebyside.Peers;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.spi.BatchContents;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSet;

/** The read contenders of {@link ScalingBench}: K clients of a transport, and the in-process ceilings. */
final class ScalingReads {
  static final String PLAIN_DUCKDB = "plain DuckDB export";
  static final String ENGINE = "engine export";
  static final String MEMCPY = "memcpy";

  private ScalingReads() {}

  /** The {@code index}-th client pulls the whole result of {@code sql}. */
  static ScalingPeer thallus(String transport, IntFunction<ThallusClient> clients, String sql, int batchRows) {
    QueryRequest request = QueryRequest.builder(sql).batchRows(batchRows).build();
    return new ScalingPeer() {
      @Override
      public String name() {
        return transport;
      }

      @Override
      public boolean ceiling() {
        return false;
      }

      @Override
      public Tally run(int index, boolean everyColumn) {
        Adder adder = new Adder(everyColumn);
        try (ThallusStream stream = clients.apply(index).query(request)) {
          while (stream.hasNext()) {
            try (VectorSchemaRoot batch = stream.next()) {
              adder.add(batch);
            }
          }
        }
        return adder.tally();
      }
    };
  }

  /**
   * The engine's own in-process export, what the suite calls its ceiling: the same engine the server runs (DuckDB
   * with streaming results, through the Arrow C stream interface), read by K threads at once, no transport.
   */
  static ScalingPeer engine(QueryEngine engine, String sql, int batchRows, BufferAllocator allocator) {
    return new ScalingPeer() {
      @Override
      public String name() {
        return ENGINE;
      }

      @Override
      public boolean ceiling() {
        return true;
      }

      @Override
      public Tally run(int index, boolean everyColumn) {
        Adder adder = new Adder(everyColumn);
        try (QueryResult result = engine.execute(Peers.spec(sql, batchRows), allocator);
             VectorSchemaRoot root = VectorSchemaRoot.create(result.schema(), allocator)) {
          VectorLoader loader = new VectorLoader(root);
          for (BatchContents batch; (batch = result.next()) != null; ) {
            try (BatchContents held = batch) {
              loader.load(held.records());
              adder.add(root);
            }
          }
        }
        return adder.tally();
      }
    };
  }

  /**
   * DuckDB run plainly: its JDBC driver with default settings, one connection per reader (duplicates of one
   * in-memory database holding the same table), each reading {@code arrowExportStream}.
   */
  static ScalingPeer plainDuckDB(List<DuckDBConnection> connections, String sql, int batchRows,
      BufferAllocator allocator) {
    return new ScalingPeer() {
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
        Adder adder = new Adder(everyColumn);
        try (Statement statement = connections.get(index).createStatement();
             ResultSet result = statement.executeQuery(sql);
             ArrowReader reader = (ArrowReader) ((DuckDBResultSet) result).arrowExportStream(allocator, batchRows)) {
          while (reader.loadNextBatch()) {
            adder.add(reader.getVectorSchemaRoot());
          }
        }
        return adder.tally();
      }
    };
  }

  /**
   * The memory ceiling for transport only: K threads each copying the prepared buffers once into memory of their
   * own (single-thread memcpy each, as the suite's memcpy peer). It reports the rows it copied; it has no values to
   * add up.
   */
  static ScalingPeer memcpy(List<BatchContents> prepared, int readers) {
    List<MemcpyBaseline> copies = new ArrayList<>();
    for (int i = 0; i < readers; i++) {
      copies.add(new MemcpyBaseline(prepared));
    }
    long rows = prepared.stream().mapToLong(BatchContents::rowCount).sum();
    return new ScalingPeer() {
      @Override
      public String name() {
        return MEMCPY;
      }

      @Override
      public boolean ceiling() {
        return true;
      }

      @Override
      public Tally run(int index, boolean everyColumn) {
        copies.get(index).copySeconds();
        return new Tally(rows, new long[0]);
      }

      @Override
      public void close() {
        copies.forEach(MemcpyBaseline::close);
      }
    };
  }
}
