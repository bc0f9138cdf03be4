/**
 * The Thallus JDBC driver ({@code jdbc:thallus://host:port}): registered with {@link java.sql.DriverManager} as a
 * service, and usable as a {@link javax.sql.DataSource} ({@code io.thallus.jdbc.ThallusDataSource}).
 */
module io.thallus.jdbc {
  requires transitive java.sql;
  requires java.sql.rowset;
  requires io.thallus.core;
  requires org.apache.arrow.vector;
  requires org.apache.arrow.memory.core;

  exports io.thallus.jdbc;

  provides java.sql.Driver with io.thallus.jdbc.ThallusDriver;
}
