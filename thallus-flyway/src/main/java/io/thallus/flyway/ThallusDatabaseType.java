package io.thallus.flyway;

import java.sql.Connection;
import java.sql.SQLException;
import org.flywaydb.community.database.duckdb.DuckDBDatabaseType;

/**
 * Flyway's database type for {@code jdbc:thallus://} URLs: a Thallus server runs DuckDB, so migrations, the schema
 * history table and transactions are Flyway's DuckDB ones; only the URL and the driver are Thallus'. Flyway finds
 * this class through {@code META-INF/services/org.flywaydb.core.extensibility.Plugin}; its priority puts it before
 * the DuckDB type, which would otherwise claim a Thallus connection by its product name.
 */
public class ThallusDatabaseType extends DuckDBDatabaseType {
  private static final String URL_PREFIX = "jdbc:thallus:";

  @Override
  public String getName() {
    return "Thallus";
  }

  @Override
  public int getPriority() {
    return 1;
  }

  @Override
  public boolean handlesJDBCUrl(String url) {
    return url.startsWith(URL_PREFIX);
  }

  @Override
  public String getDriverClass(String url, ClassLoader classLoader) {
    return "io.thallus.jdbc.ThallusDriver";
  }

  @Override
  public boolean handlesDatabaseProductNameAndVersion(String databaseProductName, String databaseProductVersion,
      Connection connection) {
    try {
      String url = connection.getMetaData().getURL();
      return url != null && url.startsWith(URL_PREFIX);
    } catch (SQLException e) {
      return false;
    }
  }
}
