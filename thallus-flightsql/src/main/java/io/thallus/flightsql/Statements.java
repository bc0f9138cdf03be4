package io.thallus.flightsql;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What a session keeps between Flight SQL calls: prepared statements, and statements planned but not yet read, each
 * under a handle in one bounded {@link Table} of the server.
 */
final class Statements {
  private Statements() {}

  /** What a statement handle holds, and what the bounds on them count. */
  sealed interface Handle extends AutoCloseable permits Prepared, Pending {
    String sessionId();

    String sql();

    /** The bytes the handle is counted as: its SQL text as the JVM holds it (two bytes a character). */
    default long bytes() {
      return 2L * sql().length();
    }

    @Override
    default void close() {}
  }

  /** The bounds on the handles one session and the whole server keep (count and bytes). */
  record Limits(int perSession, long bytesPerSession, int perServer, long bytesPerServer) {
    static final Limits DEFAULT = new Limits(1024, 64L << 20, 16384, 512L << 20);

    Limits {
      if (perSession < 1 || bytesPerSession < 1 || perServer < 1 || bytesPerServer < 1) {
        throw new IllegalArgumentException("statement limits must be positive: " + perSession + ", "
            + bytesPerSession + ", " + perServer + ", " + bytesPerServer);
      }
    }
  }

  /**
   * Every open statement handle of the server, least recently used first. A new handle never fails for want of
   * room: the least recently used handles (of the same session first, then of any) are closed until the new one
   * fits, because a generic client (the Flight SQL JDBC driver) never closes its handles. A handle closed that way
   * answers NOT_FOUND saying so, as long as the table remembers it (the last {@link #REMEMBERED} evicted ids).
   */
  static final class Table implements AutoCloseable {
    static final int REMEMBERED = 4096;

    private final Limits limits;
    /** Access order: the first entry is the least recently used. Guarded by this. */
    private final LinkedHashMap<String, Handle> handles = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<String, long[]> perSession = new HashMap<>();
    private final LinkedHashMap<String, Boolean> evicted = new LinkedHashMap<>() {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
        return size() > REMEMBERED;
      }
    };
    private long bytes;

    Table(Limits limits) {
      this.limits = limits;
    }

    /** Adds a handle under a new id, evicting least recently used ones until the bounds hold. */
    String add(Handle handle) {
      String id = SessionRegistry.newId();
      List<Handle> closed = new ArrayList<>();
      synchronized (this) {
        handles.put(id, handle);
        long[] session = perSession.computeIfAbsent(handle.sessionId(), key -> new long[2]);
        session[0]++;
        session[1] += handle.bytes();
        bytes += handle.bytes();
        while (session[0] > limits.perSession() || session[1] > limits.bytesPerSession()) {
          if (!evictEldest(handle.sessionId(), id, closed)) {
            break;
          }
        }
        while (handles.size() > limits.perServer() || bytes > limits.bytesPerServer()) {
          if (!evictEldest(null, id, closed)) {
            break;
          }
        }
      }
      closed.forEach(Handle::close);
      return id;
    }

    /** The least recently used handle (of {@code sessionId}, or of any session for null) other than {@code keep}. */
    private boolean evictEldest(String sessionId, String keep, List<Handle> closed) {
      for (Map.Entry<String, Handle> entry : handles.entrySet()) {
        if (!entry.getKey().equals(keep) && (sessionId == null || entry.getValue().sessionId().equals(sessionId))) {
          String id = entry.getKey();
          closed.add(forget(id));
          evicted.put(id, Boolean.TRUE);
          return true;
        }
      }
      return false;
    }

    private Handle forget(String id) {
      Handle handle = handles.remove(id);
      if (handle != null) {
        long[] session = perSession.get(handle.sessionId());
        session[0]--;
        session[1] -= handle.bytes();
        if (session[0] == 0) {
          perSession.remove(handle.sessionId());
        }
        bytes -= handle.bytes();
      }
      return handle;
    }

    /** The handle {@code id} of {@code kind}, now the most recently used; NOT_FOUND naming it otherwise. */
    <T extends Handle> T get(String id, Class<T> kind, String what) {
      synchronized (this) {
        Handle handle = id == null ? null : handles.get(id);
        if (kind.isInstance(handle)) {
          return kind.cast(handle);
        }
        if (id != null && evicted.containsKey(id)) {
          throw ThallusException.of(StatusCode.NOT_FOUND, what + " " + id + " was closed to make room: its session "
              + "or the server holds at most " + limits.perSession() + " / " + limits.perServer()
              + " statement handles (" + limits.bytesPerSession() + " / " + limits.bytesPerServer()
              + " bytes of SQL), and the least recently used go first; prepare or plan it again");
        }
      }
      throw ThallusException.of(StatusCode.NOT_FOUND, "no such " + what + " " + id + " (closed, its session ended, "
          + "or never made here)");
    }

    /** Removes and returns the handle {@code id} of {@code kind} (null when there is none); the caller closes it. */
    <T extends Handle> T remove(String id, Class<T> kind) {
      synchronized (this) {
        Handle handle = id == null ? null : handles.get(id);
        if (!kind.isInstance(handle)) {
          return null;
        }
        forget(id);
        return kind.cast(handle);
      }
    }

    /** Whether a handle of {@code sessionId} passes {@code test}. */
    synchronized boolean any(String sessionId, java.util.function.Predicate<Handle> test) {
      for (Handle handle : handles.values()) {
        if (handle.sessionId().equals(sessionId) && test.test(handle)) {
          return true;
        }
      }
      return false;
    }

    /** Closes every handle of a session that ended. */
    void removeSession(String sessionId) {
      List<Handle> closed = new ArrayList<>();
      synchronized (this) {
        for (String id : List.copyOf(handles.keySet())) {
          if (handles.get(id).sessionId().equals(sessionId)) {
            closed.add(forget(id));
          }
        }
      }
      closed.forEach(Handle::close);
    }

    synchronized int size() {
      return handles.size();
    }

    synchronized long bytes() {
      return bytes;
    }

    @Override
    public void close() {
      List<Handle> closed;
      synchronized (this) {
        closed = List.copyOf(handles.values());
        handles.clear();
        perSession.clear();
        bytes = 0;
      }
      closed.forEach(Handle::close);
    }
  }

  /**
   * A prepared statement: its SQL, the schemas DuckDB planned, and the rows of parameters the client last bound
   * (DoPut), owned here until the next bind or the close. It belongs to its session, not to the transaction it was
   * prepared in: each run joins whatever transaction the session has open then (or commits on its own), as a JDBC
   * prepared statement does, because clients keep it across commits (ADBC's DBAPI with autocommit off does).
   */
  static final class Prepared implements Handle {
    private final String sessionId;
    private final String sql;
    private final io.thallus.StatementKind kind;
    private final Schema datasetSchema;
    private final Schema parameterSchema;
    private VectorSchemaRoot parameters;
    /** Guarded by this. */
    private boolean closed;

    Prepared(String sessionId, String sql, io.thallus.StatementKind kind, Schema datasetSchema,
        Schema parameterSchema) {
      this.sessionId = sessionId;
      this.sql = sql;
      this.kind = kind;
      this.datasetSchema = datasetSchema;
      this.parameterSchema = parameterSchema;
    }

    @Override
    public String sessionId() {
      return sessionId;
    }

    @Override
    public String sql() {
      return sql;
    }

    /** What the statement answers, as the engine classified it when it was prepared. */
    io.thallus.StatementKind kind() {
      return kind;
    }

    Schema datasetSchema() {
      return datasetSchema;
    }

    Schema parameterSchema() {
      return parameterSchema;
    }

    /**
     * Takes {@code rows} (ownership passes here). A statement closed meanwhile (by its client, to make room, or with
     * its session) closes them and answers NOT_FOUND, so no bound rows outlive it.
     */
    synchronized void bind(VectorSchemaRoot rows) {
      if (closed) {
        if (rows != null) {
          rows.close();
        }
        throw ThallusException.of(StatusCode.NOT_FOUND, "the prepared statement was closed (by its client, to make "
            + "room, or with its session) while its parameters arrived; prepare it again");
      }
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
      closed = true;
      if (parameters != null) {
        parameters.close();
        parameters = null;
      }
    }
  }

  /** A statement GetFlightInfo planned, waiting for the DoGet of its ticket; cancellable while it runs. */
  static final class Pending implements Handle {
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

    @Override
    public String sessionId() {
      return sessionId;
    }

    @Override
    public String sql() {
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
