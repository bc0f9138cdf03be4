package io.thallus.flyway;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.testing.ChildJvm;
import io.thallus.testing.JdbcRows;
import io.thallus.testing.ServeProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Arrays;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flyway (with the thallus-flyway plugin) migrates a server's database through {@code jdbc:thallus://}; after a
 * restart of the server, a second Flyway run finds the migrations applied. The migrated table is compared with
 * Flyway running the same migrations on DuckDB directly.
 */
@Timeout(300)
class FlywayTest {
  @TempDir
  Path work;

  @Test
  void threeMigrationsApplyAndAreStillAppliedAfterARestart() throws Exception {
    Path migrations = Files.createDirectories(work.resolve("migrations"));
    Files.writeString(migrations.resolve("V1__create_customers.sql"),
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL);\n");
    Files.writeString(migrations.resolve("V2__add_email.sql"),
        "-- customers get an e-mail address\nALTER TABLE customers ADD COLUMN email VARCHAR;\n");
    Files.writeString(migrations.resolve("V3__first_customers.sql"),
        "INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com');\n"
            + "INSERT INTO customers VALUES (2, 'Grace', NULL);\n"
            + "UPDATE customers SET email = 'grace@example.com' WHERE id = 2;\n");
    Path root = Files.createDirectories(work.resolve("root"));
    Path database = work.resolve("app.duckdb");

    try (ChildJvm serve = ServeProcess.start(root, database, 0)) {
      String url = ServeProcess.jdbcUrl(serve);
      MigrateResult result = flyway(url, migrations).migrate();
      assertThat(result.success).isTrue();
      assertThat(result.migrationsExecuted).isEqualTo(3);
      ProcessHandle.of(serve.pid()).orElseThrow().destroy();
      serve.awaitExit(30);
    }

    Path direct = work.resolve("direct.duckdb");
    assertThat(flyway("jdbc:duckdb:" + direct, migrations).migrate().migrationsExecuted).isEqualTo(3);

    try (ChildJvm serve = ServeProcess.start(root, database, 0)) {
      String url = ServeProcess.jdbcUrl(serve);
      Flyway again = flyway(url, migrations);
      MigrationInfo[] applied = again.info().applied();
      assertThat(Arrays.stream(applied).map(MigrationInfo::getVersion).map(Object::toString))
          .containsExactly("1", "2", "3");
      assertThat(applied).allSatisfy(info -> assertThat(info.getState()).isEqualTo(MigrationState.SUCCESS));
      assertThat(again.info().pending()).isEmpty();
      assertThat(again.migrate().migrationsExecuted).as("nothing left to do").isZero();
      try (Connection thallus = DriverManager.getConnection(url);
           Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + direct)) {
        String sql = "SELECT id, name, email FROM customers ORDER BY id";
        List<List<String>> rows = JdbcRows.of(thallus, sql);
        assertThat(rows).isEqualTo(JdbcRows.of(duckdb, sql)).hasSize(2);
        String history = "SELECT version, description, script, success FROM flyway_schema_history "
            + "ORDER BY installed_rank";
        assertThat(JdbcRows.of(thallus, history)).isEqualTo(JdbcRows.of(duckdb, history));
      }
    }
  }

  private static Flyway flyway(String url, Path migrations) {
    return Flyway.configure().dataSource(url, null, null).locations("filesystem:" + migrations)
        .connectRetries(0).load();
  }
}
