package io.thallus.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spark's date and string functions in pushed filters and aggregates: each shape read through thallus gives Spark's
 * own answer over the same Parquet file (Spark's reader), and is shown pushed into the server's SQL, or, where
 * DuckDB's meaning differs, shown to stay in Spark.
 */
class FunctionPushdownTest {
  /** Dates over 1992-1999, a few far ones (year 1, 1 BC, 9999) and NULLs; ASCII and multi-byte strings. */
  private static final String ROWS = "SELECT i AS id,"
      + " CASE WHEN i % 53 = 0 THEN NULL WHEN i = 1 THEN DATE '0001-01-01' WHEN i = 2 THEN DATE '0001-01-01' - 1"
      + " WHEN i = 3 THEN DATE '9999-12-31' WHEN i = 4 THEN DATE '1582-10-04' ELSE DATE '1992-01-01' + (i * 37 % 2900)::INTEGER END AS d,"
      + " CASE WHEN i % 41 = 0 THEN NULL WHEN i % 5 = 0 THEN 'straße ' || i WHEN i % 5 = 1 THEN 'ñandú日本' || i"
      + " WHEN i % 5 = 2 THEN '😀x' || i WHEN i % 97 = 3 THEN '' ELSE lpad((10 + i % 25)::VARCHAR, 2, '0') || '-' || i END AS s,"
      + " CASE WHEN i % 61 = 0 THEN NULL WHEN i = 5 THEN TIMESTAMP '1969-12-31 23:59:59.5'"
      + " ELSE TIMESTAMP '1995-06-01 23:30:00' + to_seconds(i * 3671) END AS ts,"
      + " (TIMESTAMP '1995-06-01 23:30:00' + to_hours(i))::TIMESTAMPTZ AS tz,"
      + " CASE i % 7 WHEN 0 THEN NULL WHEN 1 THEN '  a b  ' WHEN 2 THEN chr(9) || 'a ' || chr(9) WHEN 3 THEN"
      + " chr(160) || 'x' || chr(160) WHEN 4 THEN chr(12288) || 'y ' WHEN 5 THEN 'xxzyx' ELSE ' ' || i END AS p"
      + " FROM range(5000) t(i)";
  private static TestServer server;
  private static SparkSession spark;
  private static String file;

  @BeforeAll
  static void start() throws SQLException {
    server = new TestServer();
    spark = TestSpark.session();
    file = server.dataRoot().resolve("functions.parquet").toString();
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      statement.execute("COPY (" + ROWS + ") TO '" + file + "' (FORMAT parquet)");
    }
    server.execute("CREATE TABLE orders AS SELECT * FROM read_parquet('" + file + "')");
    spark.conf().set("spark.sql.catalog.thallus_fn", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.thallus_fn.url", server.url());
    // DuckDB writes proleptic Gregorian dates, as Spark keeps them: read them so, without rebasing.
    spark.conf().set("spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED");
  }

  @AfterAll
  static void stop() throws Exception {
    spark.conf().unset("spark.sql.parquet.datetimeRebaseModeInRead");
    server.close();
  }

  @AfterEach
  void memoryReturned() {
    assertThat(Connector.allocatedBytes()).isZero();
  }

  private static Dataset<Row> thallus() {
    return spark.read().format("thallus").option("url", server.url()).option("dataset", "functions.parquet").load();
  }

  private static Dataset<Row> parquet() {
    return spark.read().parquet(file);
  }

  private static List<String> sorted(Dataset<Row> df) {
    List<String> rows = new ArrayList<>();
    for (Row row : df.collectAsList()) {
      rows.add(row.toString());
    }
    rows.sort(null);
    return rows;
  }

  /** The shape over thallus and over Parquet: the same rows; returns the SQL the thallus scan sent. */
  private static String sameAsSpark(Function<Dataset<Row>, Dataset<Row>> shape) {
    Dataset<Row> through = shape.apply(thallus());
    List<String> expected = sorted(shape.apply(parquet()));
    assertThat(expected).isNotEmpty();
    assertThat(sorted(through)).isEqualTo(expected);
    return Plans.scan(through).sql();
  }

  @Test
  void dateFieldsOfADateArePushedInGroupKeysAndFilters() {
    String byYear = sameAsSpark(df -> df.groupBy(functions.year(col("d")).as("y"), functions.month(col("d")).as("m"))
        .agg(count(lit(1)), functions.sum("id")));
    assertThat(byYear).contains("CAST(year(\"d\") AS INTEGER)", "CAST(month(\"d\") AS INTEGER)", "GROUP BY");
    String fields = sameAsSpark(df -> df.groupBy(functions.quarter(col("d")), functions.dayofmonth(col("d")),
        functions.dayofyear(col("d"))).count());
    assertThat(fields).contains("quarter(\"d\")", "day(\"d\")", "dayofyear(\"d\")", "GROUP BY");
    String filtered = sameAsSpark(df -> df.filter(functions.year(col("d")).equalTo(1995)
        .and(functions.month(col("d")).geq(6))).select("id", "d"));
    assertThat(filtered).contains("(CAST(year(\"d\") AS INTEGER) = CAST(1995 AS INTEGER))");
    String far = sameAsSpark(df -> df.filter(functions.year(col("d")).lt(1000).or(functions.year(col("d"))
        .gt(9000))).select("id", "d", "s"));
    assertThat(far).contains("year(\"d\")");
  }

  @Test
  void substringFromAPositiveLiteralPositionIsPushed() {
    String prefix = sameAsSpark(df -> df.groupBy(functions.substring(col("s"), 1, 2).as("p")).count());
    assertThat(prefix).contains("substring(\"s\", 1, 2)", "GROUP BY");
    String middle = sameAsSpark(df -> df.filter(functions.substring(col("s"), 2, 3).equalTo("and")
        .or(functions.substring(col("s"), 2, 3).equalTo("x12"))).select("id", "s"));
    assertThat(middle).contains("substring(\"s\", 2, 3)");
    String rest = sameAsSpark(df -> df.groupBy(col("s").substr(4, Integer.MAX_VALUE).as("r")).count());
    assertThat(rest).contains("substring(\"s\", 4, 2147483647)");
    String empty = sameAsSpark(df -> df.filter(functions.substring(col("s"), 3, 0).equalTo("")).select("id"));
    assertThat(empty).contains("substring(\"s\", 3, 0)");
  }

  @Test
  void functionsWhoseMeaningDiffersStayInSpark() {
    // Position 0 and positions counted from the end: Spark and DuckDB cut differently.
    for (Column cut : List.of(functions.substring(col("s"), 0, 2), functions.substring(col("s"), -3, 2),
        functions.substring(col("s"), -30, 29))) {
      String sql = sameAsSpark(df -> df.groupBy(cut.as("c")).count());
      assertThat(sql).as(cut.toString()).doesNotContain("substring").doesNotContain("GROUP BY");
    }
    // Full Unicode case mapping in Spark ('straße' -> 'STRASSE'), per code point in DuckDB.
    for (Column cased : List.of(functions.upper(col("s")), functions.lower(col("s")))) {
      String sql = sameAsSpark(df -> df.groupBy(cased.as("c")).count());
      assertThat(sql).as(cased.toString()).doesNotContain("upper").doesNotContain("lower").doesNotContain("GROUP BY");
    }
    // A timestamp with time zone: its year and hour are of its time in the session's time zone.
    String ofTimestamp = sameAsSpark(df -> df.groupBy(functions.year(col("tz")), functions.dayofmonth(col("tz")),
        functions.hour(col("tz"))).count());
    assertThat(ofTimestamp).doesNotContain("year(").doesNotContain("hour(").doesNotContain("GROUP BY");
    // date_add by a column of days (Spark's int overflow is not DuckDB's range error), by more than 3,000,000 days,
    // and date_sub, which Spark does not offer a connector.
    for (Column moved : List.of(functions.date_add(col("d"), col("id").cast("int")),
        functions.date_add(col("d"), 3_000_001), functions.date_sub(col("d"), 3))) {
      String sql = sameAsSpark(df -> df.groupBy(moved.as("m")).count());
      assertThat(sql).as(moved.toString()).doesNotContain("GROUP BY");
    }
    // A remainder by a column (which may be 0) or by a negative number.
    for (Column remainder : List.of(col("id").mod(col("id").plus(1)), col("id").mod(lit(-7L)))) {
      String sql = sameAsSpark(df -> df.groupBy(remainder.as("r")).count());
      assertThat(sql).as(remainder.toString()).doesNotContain("GROUP BY");
    }
    // A general LIKE pattern is not offered to a connector by Spark: it filters the rows itself.
    String like = sameAsSpark(df -> df.filter(col("s").like("%a%e%").and(functions.not(col("s").like("%1%2%"))))
        .select("id"));
    assertThat(like).doesNotContain("LIKE").doesNotContain("like");
  }

  @Test
  void trimsOfSpacesOrOfLiteralCharactersArePushed() {
    // Spaces only, as Spark trims: a tab, a no-break space and an ideographic space stay.
    String trims = sameAsSpark(df -> df.groupBy(functions.trim(col("p")).as("b"), functions.ltrim(col("p")).as("l"),
        functions.rtrim(col("p")).as("r")).count());
    assertThat(trims).contains("trim(\"p\", ' ')", "ltrim(\"p\", ' ')", "rtrim(\"p\", ' ')", "GROUP BY");
    String chars = sameAsSpark(df -> df.groupBy(functions.trim(col("p"), "xy").as("c")).count());
    assertThat(chars).contains("trim(\"p\", 'xy')", "GROUP BY");
  }

  @Test
  void truncAndDatediffOfDatesArePushed() {
    String sql = sameAsSpark(df -> df.groupBy(functions.trunc(col("d"), "year").as("y"),
        functions.trunc(col("d"), "MM").as("m"), functions.trunc(col("d"), "week").as("w"),
        functions.trunc(col("d"), "quarter").as("q")).count());
    assertThat(sql).contains("date_trunc('year', \"d\")", "date_trunc('month', \"d\")",
        "date_trunc('week', \"d\")", "date_trunc('quarter', \"d\")", "GROUP BY");
    String days = sameAsSpark(df -> df.filter(functions.datediff(col("d"), lit(java.time.LocalDate.parse("1995-03-15")))
        .between(-40, 40)).groupBy(functions.datediff(lit(java.time.LocalDate.parse("2000-01-01")), col("d")).as("n"))
        .count());
    assertThat(days).contains("CAST((\"d\" - DATE '1995-03-15') AS INTEGER)",
        "CAST((DATE '2000-01-01' - \"d\") AS INTEGER)", "GROUP BY");
    String unknown = sameAsSpark(df -> df.groupBy(functions.trunc(col("d"), "fortnight").as("f")).count());
    assertThat(unknown).doesNotContain("date_trunc").doesNotContain("GROUP BY");
  }

  @Test
  void isoWeekFieldsDateAddLengthAndConcatArePushed() {
    String weekly = sameAsSpark(df -> df.groupBy(functions.dayofweek(col("d")).as("dow"),
        functions.weekofyear(col("d")).as("w"), functions.expr("weekday(d)").as("wd"),
        functions.expr("extract(YEAROFWEEK FROM d)").as("yw")).count());
    assertThat(weekly).contains("((CAST(isodow(\"d\") AS INTEGER) % 7) + CAST(1 AS INTEGER))",
        "CAST(week(\"d\") AS INTEGER)", "(CAST(isodow(\"d\") AS INTEGER) - CAST(1 AS INTEGER))",
        "CAST(isoyear(\"d\") AS INTEGER)", "GROUP BY");
    // A timestamp without time zone: its wall clock's date and time fields, before 1970 too.
    String wallClock = sameAsSpark(df -> df.groupBy(functions.year(col("ts")).as("y"),
        functions.dayofmonth(col("ts")).as("d"), functions.hour(col("ts")).as("h"),
        functions.minute(col("ts")).as("mi"), functions.second(col("ts")).as("s")).count());
    assertThat(wallClock).contains("CAST(year(CAST(\"ts\" AS DATE)) AS INTEGER)", "CAST(hour(\"ts\") AS INTEGER)",
        "CAST(minute(\"ts\") AS INTEGER)", "CAST(second(\"ts\") AS INTEGER)", "GROUP BY");
    // Year 9999 + 1 and year 1 - 1 leave Spark's usual range in both the same way; NULL dates stay NULL.
    String moved = sameAsSpark(df -> df.groupBy(functions.date_add(col("d"), 1).as("a"),
        functions.date_add(col("d"), -1).as("b"), functions.date_add(col("d"), 3_000_000).as("c"),
        functions.date_add(col("d"), -3_000_000).as("e")).count());
    assertThat(moved).contains("(\"d\" + 1)", "(\"d\" + -1)", "(\"d\" + 3000000)", "GROUP BY");
    String filtered = sameAsSpark(df -> df.filter(functions.date_add(col("d"), 30).gt(lit(
        java.time.LocalDate.parse("1996-01-01")))).select("id"));
    assertThat(filtered).contains("(\"d\" + 30)");
    // Code points in both: multi-byte letters, an emoji, the empty string, NULL.
    String lengths = sameAsSpark(df -> df.groupBy(functions.length(col("s")).as("n"),
        functions.char_length(col("p")).as("m")).count());
    assertThat(lengths).contains("CAST(length(\"s\") AS INTEGER)", "GROUP BY");
    String joined = sameAsSpark(df -> df.groupBy(functions.concat(col("s"), lit("|"), col("p")).as("c")).count());
    assertThat(joined).contains("(\"s\" || '|' || \"p\")", "GROUP BY");
  }

  /** The example: a year's count through the catalog is computed by DuckDB, not from every date. */
  @Test
  void aGroupByYearThroughTheCatalogRunsInDuckDB() {
    spark.read().parquet(file).createOrReplaceTempView("orders_parquet");
    Dataset<Row> through = spark.sql("SELECT year(d), count(*) FROM thallus_fn.main.orders GROUP BY 1");
    assertThat(sorted(through)).isEqualTo(sorted(spark.sql("SELECT year(d), count(*) FROM orders_parquet GROUP BY 1")));
    assertThat(Plans.scan(through).sql()).contains("CAST(year(\"d\") AS INTEGER)", "count(*)", "GROUP BY");
  }
}
