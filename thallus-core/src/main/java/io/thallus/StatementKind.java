package io.thallus;

/**
 * What a statement answers, as the server's engine classifies it before running it (see
 * {@link ThallusClient#describeStatement}). The numbers are the wire values and never change.
 */
public enum StatementKind {
  /** It answers rows (SELECT, VALUES, SHOW, DESCRIBE, EXPLAIN, PRAGMA and CALL that return a table, ... RETURNING). */
  QUERY(0),
  /** It answers the number of rows it changed (INSERT, UPDATE, DELETE, COPY). */
  UPDATE(1),
  /** It answers nothing but success (DDL, SET, USE, ATTACH, BEGIN, COMMIT, ROLLBACK, ...). */
  COMMAND(2);

  private final int wireValue;

  StatementKind(int wireValue) {
    this.wireValue = wireValue;
  }

  public int wireValue() {
    return wireValue;
  }

  /** The kind for a wire value, or null for a value this version does not know. */
  public static StatementKind fromWireValue(int value) {
    for (StatementKind kind : values()) {
      if (kind.wireValue == value) {
        return kind;
      }
    }
    return null;
  }
}
