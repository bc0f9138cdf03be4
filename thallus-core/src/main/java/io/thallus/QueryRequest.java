package io.thallus;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/** One query: SQL, optionally over a dataset (a path under the server's data root, visible as {@code dataset}). */
public final class QueryRequest {
  private final String sql;
  private final String dataset;
  private final Integer batchRows;
  private final Duration timeout;
  private final Map<String, String> options;

  private QueryRequest(Builder b) {
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

  public static final class Builder {
    private final String sql;
    private String dataset;
    private Integer batchRows;
    private Duration timeout;
    private final Map<String, String> options = new LinkedHashMap<>();

    private Builder(String sql) {
      this.sql = Objects.requireNonNull(sql, "sql");
    }

    public Builder dataset(String path) {
      this.dataset = path;
      return this;
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

    public Builder option(String key, String value) {
      options.put(Objects.requireNonNull(key), Objects.requireNonNull(value));
      return this;
    }

    public QueryRequest build() {
      return new QueryRequest(this);
    }
  }
}
