package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Names in the catalog as Spark's own catalogs match them: ignoring case by default ({@code spark.sql.caseSensitive}
 * false), as DuckDB does too, and exactly when the session asks for it; reads compared with DuckDB run directly.
 */
class CatalogNameTest {
  private static final String LINEITEM = "SELECT i AS id, 'r' || i AS name FROM range(100) t(i)";
  private static TestServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    server = new TestServer();
    spark = TestSpark.session();
    spark.conf().set("spark.sql.catalog.thallus_names", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.thallus_names.url", server.url());
    server.execute("CREATE TABLE lineitem AS " + LINEITEM);
    server.execute("CREATE SCHEMA \"Sales\"");
    server.execute("CREATE TABLE \"Sales\".\"Orders\" AS SELECT 7 AS id");
    server.execute("CREATE VIEW \"Sales\".\"Big Orders\" AS SELECT id FROM \"Sales\".\"Orders\" WHERE id > 5");
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @AfterEach
  void caseInsensitiveAgainAndMemoryReturned() {
    spark.conf().unset("spark.sql.caseSensitive");
    assertThat(Connector.allocatedBytes()).isZero();
  }

  private static List<String> ids(String sql) {
    return spark.sql(sql).collectAsList().stream().map(r -> String.valueOf(r.get(0))).sorted().toList();
  }

  private static List<String> duckdbIds(String sql) throws SQLException {
    return TypeMappingTest.duckdb(sql).stream().map(r -> String.valueOf(r.get(0))).sorted().toList();
  }

  @Test
  void namesIgnoreCaseByDefault() throws SQLException {
    assertThat(spark.conf().get("spark.sql.caseSensitive")).isEqualTo("false");
    List<String> expected = duckdbIds("SELECT id FROM (" + LINEITEM + ")");
    for (String name : List.of("main.lineitem", "main.LINEITEM", "MAIN.LineItem", "`Main`.`lineItem`")) {
      assertThat(ids("SELECT id FROM thallus_names." + name)).as(name).isEqualTo(expected);
    }
    assertThat(ids("SELECT id FROM thallus_names.sales.orders")).containsExactly("7");
    assertThat(ids("SELECT id FROM thallus_names.SALES.`big orders`")).containsExactly("7");
    assertThat(spark.sql("SHOW TABLES IN thallus_names.SALES").collectAsList().stream().map(r -> r.getString(1)))
        .containsExactly("Big Orders", "Orders");
    // Writes find the table as reads do: an append lands in "Sales"."Orders", a CREATE of another case exists.
    try {
      spark.sql("INSERT INTO thallus_names.SALES.ORDERS VALUES (8)");
      assertThat(ids("SELECT id FROM thallus_names.`Sales`.`Orders`")).containsExactly("7", "8");
    } finally {
      server.execute("DELETE FROM \"Sales\".\"Orders\" WHERE id = 8");
    }
    assertThatThrownBy(() -> spark.sql("CREATE TABLE thallus_names.sales.ORDERS (id INT) USING thallus"))
        .hasMessageContaining("already exists");
  }

  @Test
  void namesMatchExactlyWhenTheSessionIsCaseSensitive() throws SQLException {
    spark.conf().set("spark.sql.caseSensitive", "true");
    assertThat(ids("SELECT id FROM thallus_names.main.lineitem"))
        .isEqualTo(duckdbIds("SELECT id FROM (" + LINEITEM + ")"));
    assertThat(ids("SELECT id FROM thallus_names.`Sales`.`Orders`")).containsExactly("7");
    for (String name : List.of("main.LINEITEM", "MAIN.lineitem", "sales.orders", "`Sales`.orders")) {
      assertThatThrownBy(() -> spark.sql("SELECT * FROM thallus_names." + name).collectAsList()).as(name)
          .hasMessageContaining("TABLE_OR_VIEW_NOT_FOUND");
    }
    assertThatThrownBy(() -> spark.sql("SHOW TABLES IN thallus_names.sales").collectAsList())
        .hasMessageContaining("SCHEMA_NOT_FOUND");
    assertThat(spark.sql("SHOW TABLES IN thallus_names.Sales").collectAsList()).hasSize(2);
  }
}
