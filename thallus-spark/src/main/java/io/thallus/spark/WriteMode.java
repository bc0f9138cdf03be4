package io.thallus.spark;

/** What a write's commit does to its table before the staged rows go in. */
enum WriteMode {
  /** Adds the rows; the table must exist. */
  APPEND,
  /** Deletes every row first (Spark's overwrite of an unpartitioned table); the table keeps its definition. */
  TRUNCATE,
  /** Creates the table (from the DataFrame's schema); fails if it exists. */
  CREATE,
  /** Creates the table, replacing one that exists. */
  CREATE_OR_REPLACE
}
