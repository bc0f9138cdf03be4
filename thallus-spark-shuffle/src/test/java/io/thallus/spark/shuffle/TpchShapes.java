package io.thallus.spark.shuffle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/**
 * TPC-H's tables that Q3, Q9 and Q18 read, small and made by Spark itself (the columns those queries use, with
 * TPC-H's types and key relations), written as Parquet and read back with Spark's Parquet reader; and those three
 * queries, the repository's texts.
 */
final class TpchShapes {
  /** The repository's TPC-H texts (thallus-spark's test resources), which the shuffle benchmark runs as well. */
  static final Path QUERIES = Path.of("..", "thallus-spark", "src", "test", "resources", "tpch");
  static final String Q3 = query(3);
  static final String Q9 = query(9);
  /**
   * Q18 with its threshold at 250 rather than the specification's 300: this data's large orders are 6 or 7 lines of
   * 50 (300 or 350), and at 300 only the 7-line ones would pass.
   */
  static final String Q18 = replaceOnce(query(18), "having sum(l_quantity) > 300", "having sum(l_quantity) > 250");

  private TpchShapes() {}

  /** Writes the tables under {@code dir} and registers them as views of their Parquet files. */
  static void create(SparkSession spark, Path dir, int orders) {
    int customers = orders / 10;
    int parts = orders / 5;
    int suppliers = Math.max(10, orders / 100);
    write(spark, dir, "nation", """
        SELECT id AS n_nationkey, CONCAT('NATION', id) AS n_name FROM range(25)""");
    write(spark, dir, "customer", String.format("""
        SELECT id AS c_custkey, CONCAT('Customer#', LPAD(id, 9, '0')) AS c_name,
          ELEMENT_AT(ARRAY('BUILDING', 'AUTOMOBILE', 'MACHINERY', 'HOUSEHOLD', 'FURNITURE'),
                     CAST(id %% 5 AS INT) + 1) AS c_mktsegment
        FROM range(1, %d)""", customers + 1));
    write(spark, dir, "orders", String.format("""
        SELECT id AS o_orderkey, 1 + (id * 7) %% %d AS o_custkey,
          DATE_ADD(DATE '1992-01-01', CAST((id * 13) %% 2400 AS INT)) AS o_orderdate,
          CAST(id %% 1000 * 151.37 AS DECIMAL(15, 2)) AS o_totalprice, 0 AS o_shippriority
        FROM range(1, %d)""", customers, orders + 1));
    write(spark, dir, "lineitem", String.format("""
        SELECT o AS l_orderkey, 1 + pk AS l_partkey,
          -- a supplier of the part in partsupp (its k-th), as in TPC-H
          1 + (1 + pk + (n %% 7) * 7) %% %d AS l_suppkey,
          -- some orders of 6 or 7 lines of 50 each: Q18's large orders
          CAST(IF(o %% 50 = 6, 50, 1 + (o * 3 + n * 11) %% 50) AS DECIMAL(15, 2)) AS l_quantity,
          CAST(((o * 3 + n * 11) %% 50 + 1) * 901.33 AS DECIMAL(15, 2)) AS l_extendedprice,
          CAST((o + n) %% 11 / 100.0 AS DECIMAL(15, 2)) AS l_discount,
          DATE_ADD(DATE '1992-01-01', CAST((o * 13) %% 2400 + n * 9 AS INT)) AS l_shipdate
        FROM (SELECT o, n, (o * 31 + n * 17) %% %d AS pk
              FROM (SELECT id AS o, EXPLODE(SEQUENCE(1, CAST(1 + id %% 7 AS INT))) AS n FROM range(1, %d)))""",
        suppliers, parts, orders + 1));
    write(spark, dir, "part", String.format("""
        SELECT id AS p_partkey,
          CONCAT(ELEMENT_AT(ARRAY('forest', 'green', 'ivory', 'navy', 'peach', 'lime'), CAST(id %% 6 AS INT) + 1),
                 ' part ', id) AS p_name
        FROM range(1, %d)""", parts + 1));
    write(spark, dir, "supplier", String.format("""
        SELECT id AS s_suppkey, id %% 25 AS s_nationkey FROM range(1, %d)""", suppliers + 1));
    write(spark, dir, "partsupp", String.format("""
        SELECT p AS ps_partkey, 1 + (p + k * 7) %% %d AS ps_suppkey,
          CAST((p * 7 + k) %% 1000 / 10.0 AS DECIMAL(15, 2)) AS ps_supplycost
        FROM (SELECT id AS p, EXPLODE(SEQUENCE(0, 6)) AS k FROM range(1, %d))""", suppliers, parts + 1));
  }

  /** The text of TPC-H query {@code n}, read from {@link #QUERIES} (the tests run in the module's folder). */
  private static String query(int n) {
    Path file = QUERIES.resolve("q" + n + ".sql");
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException("TPC-H query " + n + " is not at " + file.toAbsolutePath(), e);
    }
  }

  private static String replaceOnce(String text, String from, String to) {
    int at = text.indexOf(from);
    if (at < 0 || text.indexOf(from, at + 1) >= 0) {
      throw new IllegalStateException("'" + from + "' is not once in the query: " + text);
    }
    return text.replace(from, to);
  }

  private static void write(SparkSession spark, Path dir, String table, String sql) {
    String path = dir.resolve(table).toString();
    spark.sql(sql).write().mode("overwrite").parquet(path);
    spark.read().parquet(path).createOrReplaceTempView(table);
  }
}
