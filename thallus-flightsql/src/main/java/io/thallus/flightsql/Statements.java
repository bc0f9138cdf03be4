package io.thallus.flightsql;

import io.thallus.ThallusStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/** What a session keeps between Flight SQL calls: prepared statements, and statements planned but not yet read. */
final class Statements {
  private Statements() {}

  /**
   * A prepared statement: its SQL, the schemas DuckDB planned, and the rows of parameters the client last bound
   * (DoPut), owned here until the next bind or the close.
   */
  static final class Prepared implements AutoCloseable {
    private final String sessionId;
    private final String sql;
    private final String transactionId;
    private final Schema datasetSchema;
    private final Schema parameterSchema;
    private VectorSchemaRoot parameters;

    Prepared(String sessionId, String sql, String transactionId, Schema datasetSchema, Schema parameterSchema) {
      this.sessionId = sessionId;
      this.sql = sql;
      this.transactionId = transactionId;
      this.datasetSchema = datasetSchema;
      this.parameterSchema = parameterSchema;
    }

    String sessionId() {
      return sessionId;
    }

    String sql() {
      return sql;
    }

    String transactionId() {
      return transactionId;
    }

    Schema datasetSchema() {
      return datasetSchema;
    }

    Schema parameterSchema() {
      return parameterSchema;
    }

    synchronized void bind(VectorSchemaRoot rows) {
      if (parameters != null) {
        parameters.close();
      }
      parameters = rows;
    }

    /** The values of each bound row, in placeholder order (empty without a bind). */
    synchronized List<List<Object>> rows() {
      List<List<Object>> rows = new ArrayList<>();
      if (parameters == null) {
        return rows;
      }
      for (int row = 0; row < parameters.getRowCount(); row++) {
        List<Object> values = new ArrayList<>();
        for (org.apache.arrow.vector.FieldVector vector : parameters.getFieldVectors()) {
          values.add(ParameterValues.of(vector, row));
        }
        rows.add(values);
      }
      return rows;
    }

    @Override
    public synchronized void close() {
      if (parameters != null) {
        parameters.close();
        parameters = null;
      }
    }
  }

  /** A statement GetFlightInfo planned, waiting for the DoGet of its ticket; cancellable while it runs. */
  static final class Pending {
    private final String sessionId;
    private final String sql;
    private final String transactionId;
    private final List<Object> parameters;
    private final AtomicReference<ThallusStream> running = new AtomicReference<>();
    private final AtomicBoolean cancelled = new AtomicBoolean();

    Pending(String sessionId, String sql, String transactionId, List<Object> parameters) {
      this.sessionId = sessionId;
      this.sql = sql;
      this.transactionId = transactionId;
      this.parameters = parameters;
    }

    String sessionId() {
      return sessionId;
    }

    String sql() {
      return sql;
    }

    String transactionId() {
      return transactionId;
    }

    List<Object> parameters() {
      return parameters;
    }

    boolean running() {
      return running.get() != null;
    }

    /** Records the stream reading this statement; false when the statement was cancelled before it started. */
    boolean started(ThallusStream stream) {
      running.set(stream);
      if (cancelled.get()) {
        running.set(null);
        return false;
      }
      return true;
    }

    void finished() {
      running.set(null);
    }

    /** Cancels the statement: its running stream stops, and a DoGet that has not begun fails CANCELLED. */
    boolean cancel() {
      boolean first = cancelled.compareAndSet(false, true);
      ThallusStream stream = running.get();
      if (stream != null) {
        stream.cancel();
      }
      return first;
    }
  }
}
