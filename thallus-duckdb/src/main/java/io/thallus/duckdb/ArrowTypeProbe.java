package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.duckdb.DuckDBConnection;

/**
 * Which column of an ingest's batches DuckDB's Arrow scan does not take: DuckDB refuses such a schema as a whole
 * ("Unsupported Internal Arrow Type for Decimal d:40,2,256"), naming neither the column nor its Arrow type. Each
 * column is offered to DuckDB alone, as a stream with no batches, on a connection of its own (the ingest's
 * transaction may be aborted by then), and the first that DuckDB cannot bind is the answer.
 */
final class ArrowTypeProbe {
  private static final AtomicLong PROBES = new AtomicLong();

  private ArrowTypeProbe() {}

  /**
   * Throws INVALID_ARGUMENT naming the column and its Arrow type when DuckDB's {@code message} is its Arrow scan
   * refusing a type of {@code schema}; returns otherwise (DuckDB's own message then goes out as it is).
   */
  static void throwIfRefusedType(String message, DuckDBConnection connection, Schema schema,
      BufferAllocator allocator, Throwable cause) {
    if (!refusesAType(message)) {
      return;
    }
    Optional<String> column = unsupportedColumn(connection, schema, allocator);
    if (column.isPresent()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, column.get() + "; DuckDB's Arrow scan does not take "
          + "that type, so the ingest is refused and nothing was written", cause);
    }
  }

  /**
   * Registers {@code stream} as the view {@code view}: DuckDB binds the stream's schema there, and a type it refuses
   * comes out as the SQLException it is (DuckDB's driver wraps it in an unchecked one).
   */
  static void register(DuckDBConnection connection, String view, ArrowArrayStream stream) throws SQLException {
    try {
      connection.registerArrowStream(view, stream);
    } catch (RuntimeException e) {
      if (e.getCause() instanceof SQLException refused) {
        throw refused;
      }
      throw e;
    }
  }

  /** Whether DuckDB's message is its Arrow scan refusing a type (only then is a probe worth its binds). */
  static boolean refusesAType(String message) {
    return message.contains("Arrow") && (message.contains("Unsupported") || message.contains("Not implemented")
        || message.contains("not supported"));
  }

  /**
   * The column of {@code schema} (the batches' schema, in Arrow IPC's form) that DuckDB cannot read, as "column x
   * (Arrow type T): DuckDB's message"; empty when DuckDB binds each alone.
   */
  static Optional<String> unsupportedColumn(DuckDBConnection connection, Schema schema, BufferAllocator allocator) {
    try (DuckDBConnection probe = (DuckDBConnection) connection.duplicate()) {
      for (Field field : schema.getFields()) {
        String refusal = bind(probe, field, schema, allocator);
        if (refusal != null) {
          return Optional.of("column " + field.getName() + " (Arrow type " + describe(field) + "): " + refusal);
        }
      }
      return Optional.empty();
    } catch (SQLException | RuntimeException e) {
      // The probe only improves an error already on its way: without it, DuckDB's own message goes out.
      return Optional.empty();
    }
  }

  /** DuckDB's message for the one-column schema, or null when it binds. */
  private static String bind(DuckDBConnection probe, Field field, Schema schema, BufferAllocator allocator)
      throws SQLException {
    String view = "thallus_type_probe_" + PROBES.incrementAndGet();
    Schema alone = new Schema(List.of(field), schema.getCustomMetadata());
    try (ArrowReader empty = new NoBatches(allocator, alone);
         ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      Data.exportArrayStream(allocator, empty, stream);
      try {
        register(probe, view, stream);
      } catch (SQLException refused) {
        return refused.getMessage();
      }
      try (Statement describe = probe.createStatement()) {
        describe.executeQuery("DESCRIBE " + view).close();
        return null;
      } catch (SQLException e) {
        return e.getMessage();
      } finally {
        try (Statement drop = probe.createStatement()) {
          drop.execute("DROP VIEW IF EXISTS " + view);
        }
      }
    } catch (java.io.IOException e) {
      return null;
    }
  }

  /** The field's Arrow type as Arrow names it, its dictionary encoding included. */
  private static String describe(Field field) {
    String type = field.getType().toString();
    return field.getDictionary() == null ? type : "dictionary of " + type + " (indices "
        + field.getDictionary().getIndexType() + ")";
  }

  /** A stream of a schema and no batches: what DuckDB binds a view by. */
  private static final class NoBatches extends ArrowReader {
    private final Schema schema;

    NoBatches(BufferAllocator allocator, Schema schema) {
      super(allocator);
      this.schema = schema;
    }

    @Override
    public boolean loadNextBatch() {
      return false;
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
}
