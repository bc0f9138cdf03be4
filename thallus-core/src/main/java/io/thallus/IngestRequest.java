package io.thallus;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One ingest: Arrow batches into a table of the server's database, all of them or none (one transaction). The table
 * is a name as SQL writes it: {@code t}, {@code schema.t}, {@code catalog.schema.t}, each part plain or
 * double-quoted.
 */
public final class IngestRequest {
  private final String table;
  private final IngestMode mode;
  private final Integer credits;
  private final Duration timeout;
  private final boolean autoCommit;
  private final String insertStatement;

  private IngestRequest(Builder b) {
    this.table = b.table;
    this.mode = b.mode;
    this.credits = b.credits;
    this.timeout = b.timeout;
    this.autoCommit = b.autoCommit;
    this.insertStatement = b.insertStatement;
  }

  public static IngestRequest of(String table, IngestMode mode) {
    return builder(table).mode(mode).build();
  }

  public static Builder builder(String table) {
    return new Builder(table);
  }

  /**
   * For {@code INSERT INTO t [(columns)] VALUES (?, ..., ?)} of {@code parameters} placeholders and nothing else: an
   * append into {@code t} whose batches are the statement's rows of parameters, one column per {@code ?} in order,
   * inserted by position and cast as the INSERT would cast them (a batched JDBC statement sent on the write path).
   * Empty for any other statement, or a target that is not a plain table name.
   */
  public static java.util.Optional<Builder> forInsert(String sql, int parameters) {
    return io.thallus.internal.protocol.InsertStatements.parse(sql)
        .filter(insert -> insert.placeholders() == parameters && isTableName(insert.target()))
        .map(insert -> {
          Builder builder = builder(insert.target()).mode(IngestMode.APPEND);
          builder.insertStatement = sql;
          return builder;
        });
  }

  /**
   * Whether {@code table} is a table name this client sends: 1 to 3 dotted parts, plain or double-quoted, at most
   * 1,024 characters in all.
   */
  public static boolean isTableName(String table) {
    return io.thallus.internal.protocol.TableNames.isValid(table);
  }

  public String table() {
    return table;
  }

  public IngestMode mode() {
    return mode;
  }

  /** Batches in flight at most (sent and not yet taken by the server); the client's default when empty. */
  public OptionalInt credits() {
    return credits == null ? OptionalInt.empty() : OptionalInt.of(credits);
  }

  /** The server gives up (and rolls back) when the ingest runs longer than this. */
  public Optional<Duration> timeout() {
    return Optional.ofNullable(timeout);
  }

  /** False when the ingest writes in the session's transaction (see {@link Builder#autoCommit}). */
  public boolean autoCommit() {
    return autoCommit;
  }

  /** The {@code INSERT ... VALUES (?, ...)} whose rows of parameters the batches are (see {@link #forInsert}). */
  public Optional<String> insertStatement() {
    return Optional.ofNullable(insertStatement);
  }

  public static final class Builder {
    private final String table;
    private IngestMode mode = IngestMode.APPEND;
    private Integer credits;
    private Duration timeout;
    private boolean autoCommit = true;
    private String insertStatement;

    private Builder(String table) {
      Objects.requireNonNull(table, "table");
      io.thallus.internal.protocol.TableNames.check(table);
      this.table = table;
    }

    public Builder mode(IngestMode mode) {
      this.mode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    public Builder credits(int credits) {
      if (credits < 1) {
        throw new IllegalArgumentException("credits must be at least 1, got " + credits);
      }
      this.credits = credits;
      return this;
    }

    public Builder timeout(Duration timeout) {
      this.timeout = Objects.requireNonNull(timeout, "timeout");
      return this;
    }

    /**
     * Runs the ingest in the session's transaction (begun first if none is open) instead of a transaction of its
     * own: it becomes visible with the session's COMMIT, as {@link QueryRequest.Builder#autoCommit} does.
     */
    public Builder autoCommit(boolean autoCommit) {
      this.autoCommit = autoCommit;
      return this;
    }

    public IngestRequest build() {
      return new IngestRequest(this);
    }
  }
}
