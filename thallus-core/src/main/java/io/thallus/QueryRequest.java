package io.thallus;

import io.thallus.internal.batch.BatchValidator;
import io.thallus.internal.protocol.QueryParameters;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * One query: SQL, optionally over a dataset (a path under the server's data root, visible as {@code dataset}), and
 * over datasets of files bound to view names of the request's choosing ({@link Builder#dataset(String, String)}).
 */
public final class QueryRequest {
  /**
   * The key of the Arrow field metadata in which the engine names a result column's own type ({@code UHUGEINT},
   * {@code UUID}, {@code BIT}, ...) where the Arrow type alone does not tell it, for a request that asked with
   * {@link Builder#engineTypeNames}. DuckDB's Arrow export, for one, sends HUGEINT and UHUGEINT both as
   * decimal(38, 0), UUID as text, BIT and BIGNUM as their bytes.
   */
  public static final String ENGINE_TYPE_KEY = "thallus:engine_type";
  /** The option {@link Builder#engineTypeNames} sets (an engine that does not know it ignores it). */
  public static final String ENGINE_TYPE_NAMES_OPTION = "thallus.engine_type_names";
  /**
   * The prefix of the wire options that carry {@link Builder#dataset(String, String)}: {@code thallus.dataset.NAME}
   * = path. The server takes them out of the options before the engine sees the request.
   */
  public static final String NAMED_DATASET_OPTION_PREFIX = "thallus.dataset.";
  /** The most named datasets one request may bind. */
  public static final int MAX_NAMED_DATASETS = 32;
  /** The most parallel streams one request may ask for ({@link Builder#streams}). */
  public static final int MAX_STREAMS = io.thallus.internal.protocol.Message.Open.MAX_PARTS;

  private final String sql;
  private final String dataset;
  private final Integer batchRows;
  private final Duration timeout;
  private final Map<String, String> options;
  private final List<Object> parameters;
  private final byte[] parameterRows;
  private final int parameterRowCount;
  private final boolean autoCommit;
  private final int streams;

  private QueryRequest(Builder b) {
    this.streams = b.streams;
    this.autoCommit = b.autoCommit;
    this.parameterRows = b.parameterRows;
    this.parameterRowCount = b.parameterRowCount;
    this.parameters = QueryParameters.normalizeAll(b.parameters);
    this.sql = b.sql;
    this.dataset = b.dataset;
    this.batchRows = b.batchRows;
    this.timeout = b.timeout;
    this.options = Map.copyOf(b.options);
  }

  public static QueryRequest of(String sql) {
    return builder(sql).build();
  }

  public static Builder builder(String sql) {
    return new Builder(sql);
  }

  public String sql() {
    return sql;
  }

  public Optional<String> dataset() {
    return Optional.ofNullable(dataset);
  }

  public OptionalInt batchRows() {
    return batchRows == null ? OptionalInt.empty() : OptionalInt.of(batchRows);
  }

  /** The server cancels the query when it runs longer than this. */
  public Optional<Duration> timeout() {
    return Optional.ofNullable(timeout);
  }

  public Map<String, String> options() {
    return options;
  }

  /** The datasets bound to view names ({@link Builder#dataset(String, String)}): view name to path, in order. */
  public Map<String, String> namedDatasets() {
    Map<String, String> named = new LinkedHashMap<>();
    options.forEach((key, value) -> {
      if (key.startsWith(NAMED_DATASET_OPTION_PREFIX)) {
        named.put(key.substring(NAMED_DATASET_OPTION_PREFIX.length()), value);
      }
    });
    return named;
  }

  /** False when the statement runs in the session's transaction (see {@link Builder#autoCommit}). */
  public boolean autoCommit() {
    return autoCommit;
  }

  /** How many parallel streams the result may come on (1: one stream); see {@link Builder#streams}. */
  public int streams() {
    return streams;
  }

  /** The values for the SQL's {@code ?} placeholders, in order, in their wire form (SQL NULL as a marker). */
  List<Object> wireParameters() {
    return parameters;
  }

  /** The rows of parameters as an Arrow IPC stream, empty for none. */
  byte[] parameterRowsIpc() {
    return parameterRows;
  }

  /** How many rows of parameters the request carries (0: it runs once, with {@link #parameterCount} values). */
  public int parameterRowCount() {
    return parameterRowCount;
  }

  /** How many {@code ?} values the request carries. */
  public int parameterCount() {
    return parameters.size();
  }

  public static final class Builder {
    private final String sql;
    private String dataset;
    private Integer batchRows;
    private Duration timeout;
    private final Map<String, String> options = new LinkedHashMap<>();
    private final List<Object> parameters = new ArrayList<>();
    private byte[] parameterRows = new byte[0];
    private int parameterRowCount;
    private boolean autoCommit = true;
    private int streams = 1;

    private Builder(String sql) {
      this.sql = Objects.requireNonNull(sql, "sql");
    }

    public Builder dataset(String path) {
      this.dataset = path;
      return this;
    }

    /**
     * Binds the files at {@code path} (a Parquet/CSV/JSON file, glob or directory under the server's data root, as
     * for {@link #dataset(String)}) to the view {@code name} for this query, beside the request's {@code dataset}:
     * several such views let one query join several datasets ({@code SELECT ... FROM orders JOIN lineitem ...}). A
     * name is a plain SQL identifier ({@code [A-Za-z_][A-Za-z0-9_]*}, at most 63 characters) other than
     * {@code dataset}, unique ignoring case (SQL names ignore case); at most {@link #MAX_NAMED_DATASETS} per request.
     * The server checks each path as it checks {@code dataset} (inside the data root, existing), and refuses a DuckDB
     * database file here (bind it as the request's {@code dataset}).
     */
    public Builder dataset(String name, String path) {
      io.thallus.internal.protocol.NamedDatasets.checkName(name);
      Objects.requireNonNull(path, "path");
      if (path.isBlank()) {
        throw new IllegalArgumentException("dataset '" + name + "' has an empty path");
      }
      for (String key : options.keySet()) {
        if (key.startsWith(NAMED_DATASET_OPTION_PREFIX) && !key.equals(NAMED_DATASET_OPTION_PREFIX + name)
            && key.substring(NAMED_DATASET_OPTION_PREFIX.length()).equalsIgnoreCase(name)) {
          throw new IllegalArgumentException("dataset names '" + key.substring(NAMED_DATASET_OPTION_PREFIX.length())
              + "' and '" + name + "' differ only in case: SQL would not tell them apart");
        }
      }
      options.put(NAMED_DATASET_OPTION_PREFIX + name, path);
      if (namedCount() > MAX_NAMED_DATASETS) {
        options.remove(NAMED_DATASET_OPTION_PREFIX + name);
        throw new IllegalArgumentException("a request binds at most " + MAX_NAMED_DATASETS + " named datasets");
      }
      return this;
    }

    private long namedCount() {
      return options.keySet().stream().filter(key -> key.startsWith(NAMED_DATASET_OPTION_PREFIX)).count();
    }

    public Builder batchRows(int rows) {
      if (rows < 1) {
        throw new IllegalArgumentException("batchRows must be at least 1, got " + rows);
      }
      this.batchRows = rows;
      return this;
    }

    public Builder timeout(Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException("timeout must be positive, got " + value);
      }
      this.timeout = value;
      return this;
    }

    /**
     * Values for the SQL's {@code ?} placeholders, bound on the server through a prepared statement. Each is
     * {@code null}, a boolean, a number (including BigDecimal and BigInteger), a String, a byte[], a UUID, a
     * {@code java.time} / {@code java.sql} date or time, or a {@link ListParameter} (or any {@link java.sql.Array})
     * of such values: a SQL list, whose base type name is its elements' SQL type, such as {@code INTEGER} or
     * {@code VARCHAR[]}. Anything else is an IllegalArgumentException here.
     */
    public Builder parameters(List<?> values) {
      QueryParameters.normalizeAll(values);
      parameters.clear();
      parameters.addAll(values);
      return this;
    }

    public Builder parameters(Object... values) {
      return parameters(java.util.Arrays.asList(values));
    }

    /**
     * Runs the statement once for every row of {@code rows}, column i giving the value of the i-th {@code ?}, in
     * one request: the server binds the rows as one Arrow batch (an INSERT ... VALUES of only placeholders becomes
     * one INSERT ... SELECT of them). The rows apply together or not at all; the answer is an update count per row.
     * The rows are copied (Arrow IPC) here: {@code rows} stays the caller's.
     */
    public Builder parameterRows(VectorSchemaRoot rows) {
      if (rows.getRowCount() < 1) {
        throw new IllegalArgumentException("parameter rows need at least one row");
      }
      // Rows whose offsets or lengths lie would have the writer copy memory outside their buffers.
      try {
        io.thallus.internal.batch.UnloadCheck.check(rows.getFieldVectors());
        try (org.apache.arrow.vector.ipc.message.ArrowRecordBatch batch =
            new org.apache.arrow.vector.VectorUnloader(rows).getRecordBatch()) {
          new BatchValidator(rows.getSchema()).checkRecords(batch);
        }
      } catch (IndexOutOfBoundsException e) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the parameter rows' buffers are too short for "
            + rows.getRowCount() + " rows: " + e.getMessage(), e);
      }
      // An Arrow IPC stream (schema, the batch, end of stream) as ArrowStreamWriter writes it, through a channel that
      // also works in a JVM started with no flags (ArrowStreamWriter's needs java.nio opened to Arrow).
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
      try (org.apache.arrow.vector.ipc.message.ArrowRecordBatch batch =
              new org.apache.arrow.vector.VectorUnloader(rows).getRecordBatch()) {
        org.apache.arrow.vector.ipc.WriteChannel out =
            io.thallus.internal.batch.ArrowViews.writeChannel(java.nio.channels.Channels.newChannel(bytes));
        MessageSerializer.serialize(out, rows.getSchema(), IpcOption.DEFAULT);
        MessageSerializer.serialize(out, batch, IpcOption.DEFAULT);
        ArrowStreamWriter.writeEndOfStream(out, IpcOption.DEFAULT);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      this.parameterRows = bytes.toByteArray();
      this.parameterRowCount = rows.getRowCount();
      return this;
    }

    /**
     * With {@code false}, the statement runs inside the session's transaction, which the server begins first if
     * none is open; it stays open until a COMMIT or ROLLBACK statement (JDBC's manual-commit mode). The default,
     * {@code true}, runs the statement as DuckDB does: on its own, or in a transaction opened by BEGIN.
     */
    public Builder autoCommit(boolean autoCommit) {
      this.autoCommit = autoCommit;
      return this;
    }

    /**
     * With {@code true}, the engine names a result column's own type in its field metadata ({@link #ENGINE_TYPE_KEY})
     * where the Arrow type does not tell it: what a client that shows values as the engine does (the JDBC driver)
     * needs. Off by default: other clients see the schema exactly as the engine exports it.
     */
    public Builder engineTypeNames(boolean wanted) {
      if (wanted) {
        options.put(ENGINE_TYPE_NAMES_OPTION, "true");
      } else {
        options.remove(ENGINE_TYPE_NAMES_OPTION);
      }
      return this;
    }

    /**
     * Lets the server split the result into up to {@code count} parallel streams (1 to 64; default 1), which the
     * engine produces and the server sends at once: {@link ThallusClient#queryStreams} hands them out one by one,
     * {@link ThallusClient#query(QueryRequest)} reads them as one. Each counts as one of the client's streams, with
     * its own credits, against the server's limits. The server splits only what it can split exactly (see
     * docs/java-api.md); anything else comes whole on the first stream. Not with rows of parameters.
     */
    public Builder streams(int count) {
      if (count < 1 || count > MAX_STREAMS) {
        throw new IllegalArgumentException("streams must be within 1.." + MAX_STREAMS + ", got " + count);
      }
      this.streams = count;
      return this;
    }

    public Builder option(String key, String value) {
      if (key != null && key.startsWith(NAMED_DATASET_OPTION_PREFIX)) {
        throw new IllegalArgumentException("option '" + key + "': bind a named dataset with dataset(name, path)");
      }
      options.put(Objects.requireNonNull(key), Objects.requireNonNull(value));
      return this;
    }

    public QueryRequest build() {
      if (parameterRows.length > 0 && !parameters.isEmpty()) {
        throw new IllegalArgumentException("a request has parameters or rows of parameters, not both");
      }
      if (parameterRows.length > 0 && streams > 1) {
        throw new IllegalArgumentException("a request has rows of parameters or parallel streams, not both");
      }
      return new QueryRequest(this);
    }
  }
}
