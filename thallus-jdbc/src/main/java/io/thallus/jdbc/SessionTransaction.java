package io.thallus.jdbc;

import io.thallus.IngestRequest;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * A connection's commit mode and the state of its session's transaction on the server. In manual-commit mode every
 * statement runs in the session's transaction, which the server begins with the first statement after a commit or
 * rollback (no round trip of its own): this marks it open as such a statement goes out, and ends it only when one
 * did.
 */
final class SessionTransaction {
  private final ThallusClient client;
  private volatile boolean autoCommit = true;
  /** A statement ran in manual-commit mode since the last commit or rollback: the server's transaction is open. */
  private volatile boolean open;

  SessionTransaction(ThallusClient client) {
    this.client = client;
  }

  boolean autoCommit() {
    return autoCommit;
  }

  /**
   * Manual-commit mode: from the next statement on, statements run in one transaction until {@link #commit} or
   * {@link #rollback}. Turning auto-commit back on commits an open transaction, as JDBC asks.
   */
  void setAutoCommit(boolean autoCommit) throws SQLException {
    if (autoCommit && !this.autoCommit && open) {
      end("COMMIT");
    }
    this.autoCommit = autoCommit;
  }

  /** Commits the transaction; in manual-commit mode with no statement since the last end there is nothing to do. */
  void commit() throws SQLException {
    if (autoCommit) {
      // DuckDB's own driver answers the same.
      throw new SQLException("cannot commit: no transaction is active (the connection is in auto-commit mode)",
          "25000");
    }
    if (open) {
      end("COMMIT");
    }
  }

  void rollback() throws SQLException {
    if (autoCommit) {
      throw new SQLException("cannot roll back: no transaction is active (the connection is in auto-commit mode); "
          + "every statement has committed on its own", "25000");
    }
    if (open) {
      end("ROLLBACK");
    }
  }

  /**
   * Runs COMMIT or ROLLBACK on the server. The transaction is over either way: a COMMIT that fails (a write
   * conflict, SQLState 40001) has rolled back.
   */
  void end(String verb) throws SQLException {
    open = false;
    try (ThallusStream stream = client.query(QueryRequest.builder(verb).build())) {
      while (stream.loadNextBatch()) {
        // The one-row update count of COMMIT or ROLLBACK: read to its end, where a failure would show.
      }
    } catch (IOException e) {
      throw new SQLException(verb + " failed: " + e.getMessage(), "08006", e);
    } catch (ThallusException e) {
      if (e.getMessage() != null && e.getMessage().contains("no transaction is active")) {
        // The statement that was to begin it failed before it did: there is nothing to end.
        return;
      }
      throw Errors.from(e);
    }
  }

  /** What the next statement's request asks of the session: its transaction, in manual-commit mode. */
  void join(QueryRequest.Builder request) {
    if (enlist()) {
      request.autoCommit(false);
    }
  }

  /** The same for an ingest (a batch of INSERT ... VALUES rows on the write path). */
  void join(IngestRequest.Builder request) {
    if (enlist()) {
      request.autoCommit(false);
    }
  }

  /** Whether the next request runs in the session's transaction; it is open from then on. */
  private boolean enlist() {
    if (autoCommit) {
      return false;
    }
    open = true;
    return true;
  }

  /**
   * DuckDB gives every transaction a snapshot (no dirty or non-repeatable reads; write-write conflicts abort with
   * 40001): repeatable read, as DuckDB's own driver reports it. A weaker level asked for is served by this stronger
   * one, as JDBC allows; serializable is not offered.
   */
  static void checkIsolation(int level) throws SQLException {
    switch (level) {
      case Connection.TRANSACTION_READ_UNCOMMITTED, Connection.TRANSACTION_READ_COMMITTED,
          Connection.TRANSACTION_REPEATABLE_READ -> { }
      case Connection.TRANSACTION_SERIALIZABLE -> throw Errors.unsupported("TRANSACTION_SERIALIZABLE",
          "DuckDB isolates transactions by snapshot (repeatable read), which is not serializable");
      default -> throw Errors.invalid("not a transaction isolation level: " + level);
    }
  }
}
