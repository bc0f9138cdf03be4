package io.thallus.spark;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * TPC-H-shaped data at scale factor 0.01 (tpch/generate.sql, made by DuckDB in this JVM, the same on every run) and
 * the 22 queries in Spark SQL (tpch/q1.sql ... q22.sql, the specification's texts with its validation parameters).
 */
final class TpchData {
  static final List<String> TABLES = List.of("region", "nation", "supplier", "part", "partsupp", "customer", "orders",
      "lineitem");

  private TpchData() {}

  /** Writes every table as {@code dir/<table>.parquet}. */
  static void writeParquet(Path dir) {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      Files.createDirectories(dir);
      String script = resource("tpch/generate.sql").replaceAll("(?m)^--.*$", "");
      for (String statement : script.split(";\\s*\\n")) {
        if (!statement.isBlank()) {
          try (Statement s = duckdb.createStatement()) {
            s.execute(statement);
          }
        }
      }
      for (String table : TABLES) {
        try (Statement s = duckdb.createStatement()) {
          s.execute("COPY " + table + " TO '" + dir.resolve(table + ".parquet") + "' (FORMAT parquet)");
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("making the TPC-H data", e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Query {@code n} (1 to 22). */
  static String query(int n) {
    return resource("tpch/q" + n + ".sql");
  }

  private static String resource(String name) {
    try (InputStream in = TpchData.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("no test resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
