package io.thallus;

/** What an ingest does with its table. The numbers are the wire values and never change. */
public enum IngestMode {
  /** Creates the table from the batches' schema; a table of that name must not exist. */
  CREATE(0),
  /** Appends to an existing table; every column of the batches must be a column of the table, of the same type. */
  APPEND(1),
  /** Creates the table, or replaces one of that name (its rows and its columns) in the same transaction. */
  REPLACE(2);

  private final int wireValue;

  IngestMode(int wireValue) {
    this.wireValue = wireValue;
  }

  public int wireValue() {
    return wireValue;
  }

  /** The mode for a wire value, or null for one no version of the protocol uses. */
  public static IngestMode fromWireValue(int value) {
    for (IngestMode mode : values()) {
      if (mode.wireValue == value) {
        return mode;
      }
    }
    return null;
  }
}
