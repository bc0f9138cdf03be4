package io.thallus.engine;

/** Which transaction a statement or an ingest runs in. */
public enum TransactionMode {
  /** As the engine runs a statement on its own: in a transaction of its own, or in one the session's BEGIN opened. */
  AUTOCOMMIT,
  /**
   * In the session's transaction, begun first if none is open; it stays open until a COMMIT or ROLLBACK statement
   * (JDBC's manual-commit mode; see {@link io.thallus.QueryRequest.Builder#autoCommit}).
   */
  SESSION
}
