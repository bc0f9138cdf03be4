package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.testing.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** sqlline, a JDBC shell nobody here wrote, in its own process, connecting through jdbc:thallus:// and querying. */
class SqllineTest {
  @TempDir
  Path data;

  @Test
  void sqllineConnectsListsTablesAndQueries() throws Exception {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + data.resolve("shop.duckdb"));
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE items AS SELECT i AS id, 'item ' || i AS name, (i * 1.25)::DECIMAL(10,2) "
          + "AS price, DATE '2024-01-01' + i::INTEGER AS added FROM range(50) t(i)");
    }
    String query = "SELECT id, name, price, added FROM items WHERE id % 7 = 3 ORDER BY id;";
    List<String> expected = new ArrayList<>();
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + data.resolve("shop.duckdb"));
         Statement statement = duckdb.createStatement();
         ResultSet result = statement.executeQuery(query)) {
      while (result.next()) {
        expected.add("'" + result.getLong(1) + "','" + result.getString(2) + "','" + result.getBigDecimal(3)
            + "','" + result.getObject(4) + "'");
      }
    }
    Path script = data.resolve("session.sql");
    Files.writeString(script, "!tables\n" + query + "\n!quit\n");
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
                 DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data)
             .build().start();
         ChildJvm sqlline = ChildJvm.start(sqlline.SqlLine.class,
             "-u", "jdbc:thallus://127.0.0.1:" + server.getLocation().port() + "/shop.duckdb?transport=tcp",
             "-n", "alice", "-p", "secret", "--outputformat=csv", "--showHeader=true", "--run=" + script)) {
      List<String> output = sqlline.awaitExit(120);
      String printed = String.join("\n", output);
      assertThat(output.getFirst()).as(printed).isEqualTo("0");
      assertThat(printed).contains("'id','name','price','added'").contains("7 rows selected");
      assertThat(output.stream().filter(line -> line.matches("'\\d+','item .*")).toList())
          .as(printed).isEqualTo(expected);
      // !tables lists the database's table through DatabaseMetaData.getTables.
      assertThat(printed).containsPattern("'main','items','TABLE'");
    }
  }
}
