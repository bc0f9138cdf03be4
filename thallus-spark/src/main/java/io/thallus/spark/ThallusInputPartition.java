package io.thallus.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One stream of a scan: its SQL, the server that serves it (by index into the read's URLs) and that server's host.
 * {@code exactSqlOrNull}, when there is one, is what runs after {@code sql} (an aggregate in DuckDB's narrower
 * decimal types) overflowed.
 */
record ThallusInputPartition(ReadConf conf, int server, String sql, String exactSqlOrNull, int columns, String host)
    implements InputPartition {

  @Override
  public String[] preferredLocations() {
    return new String[] {host};
  }
}
