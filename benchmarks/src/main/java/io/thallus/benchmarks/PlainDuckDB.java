package io.thallus.benchmarks;

import io.thallus.cli.sidebyside.NamedPeer;
import io.thallus.cli.sidebyside.Peer;
import io.thallus.cli.sidebyside.Progress;
import io.thallus.cli.sidebyside.Pull;
import io.thallus.cli.sidebyside.Tally;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSet;

/**
 * DuckDB run plainly, as its users embed it: an in-memory database through its JDBC driver with default settings
 * (no streaming results, DuckDB's own buffer sizes, every core), read with {@code arrowExportStream}. An honest
 * ceiling beside the engine's own in-process export, which runs DuckDB as the server configures it (streaming
 * results, a 1 MiB streaming buffer). It holds copies of the suite's tables, made by the same SQL.
 */
final class PlainDuckDB implements AutoCloseable {
  static final String EXPORT = "plain DuckDB export";

  private final DuckDBConnection database;

  PlainDuckDB() {
    try {
      database = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
    } catch (SQLException e) {
      throw new IllegalStateException("plain DuckDB could not be opened: " + e.getMessage(), e);
    }
  }

  /** Runs a statement (DDL) in the plain database. */
  void execute(String sql) {
    try (Statement statement = database.createStatement()) {
      statement.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException("plain DuckDB refused " + sql + ": " + e.getMessage(), e);
    }
  }

  /** The query read through {@code arrowExportStream}, on a connection of its own; its data is checked too. */
  Peer export(String sql, int batchRows, BufferAllocator allocator) {
    return new NamedPeer(EXPORT, Peer.Kind.CEILING) {
      @Override
      public boolean verifies() {
        return true;
      }

      @Override
      public Pull pull(boolean verify, Progress progress) {
        long start = System.nanoTime();
        Tally tally = new Tally(verify, progress);
        long bytes = 0;
        try (DuckDBConnection connection = (DuckDBConnection) database.duplicate();
             Statement statement = connection.createStatement();
             ResultSet result = statement.executeQuery(sql);
             ArrowReader reader = (ArrowReader) ((DuckDBResultSet) result).arrowExportStream(allocator, batchRows)) {
          while (reader.loadNextBatch()) {
            tally.add(reader.getVectorSchemaRoot());
            bytes += reader.getVectorSchemaRoot().getFieldVectors().stream()
                .mapToLong(vector -> vector.getBufferSize()).sum();
          }
        } catch (Exception e) {
          throw new IllegalStateException("plain DuckDB failed on " + sql + ": " + e.getMessage(), e);
        }
        return tally.pull(System.nanoTime() - start, bytes, -1, -1);
      }
    };
  }

  @Override
  public void close() throws SQLException {
    database.close();
  }
}
