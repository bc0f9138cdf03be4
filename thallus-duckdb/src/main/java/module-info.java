/**
 * The DuckDB engine: {@link io.thallus.duckdb.DuckDBEngine} implements the engine SPI ({@code io.thallus.engine}) with
 * an embedded DuckDB. An application that embeds a {@code ThallusServer} adds this module and passes the engine to
 * the server's builder; clients never carry it (DuckDB's native library is most of its size).
 */
module io.thallus.duckdb {
  requires transitive io.thallus.server;
  requires duckdb.jdbc;
  // Rows of parameters and ingested batches go to DuckDB through the C stream interface.
  requires org.apache.arrow.c;
  requires java.sql;
  // The machine's memory, for DuckDB's default memory limit.
  requires java.management;
  requires jdk.management;
  requires org.slf4j;

  exports io.thallus.duckdb;
}
