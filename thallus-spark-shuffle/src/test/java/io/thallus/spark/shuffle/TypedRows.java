package io.thallus.spark.shuffle;

/** The rows the cluster tests shuffle to cover every type the exchange claims. */
final class TypedRows {
  /**
   * 20,000 rows of every claimed type, nulls in each column (at different rows), empty strings and binaries, both
   * decimal widths, dates, timestamps with and without a time zone.
   */
  static final String EVERY_CLAIMED_TYPE = """
      SELECT id,
        IF(id % 11 = 0, NULL, id % 2 = 0) AS b,
        IF(id % 11 = 1, NULL, CAST(id % 100 AS TINYINT)) AS t,
        IF(id % 11 = 2, NULL, CAST(id % 30000 AS SMALLINT)) AS sm,
        IF(id % 11 = 3, NULL, CAST(id AS INT) * -3) AS i,
        IF(id % 11 = 4, NULL, id * 1000000007) AS l,
        IF(id % 11 = 5, NULL, id / 3.0D) AS d,
        IF(id % 11 = 6, NULL, CAST(id / 7.0 AS FLOAT)) AS f,
        IF(id % 11 = 7, NULL, CAST(id * 1.25 AS DECIMAL(12, 2))) AS dec,
        IF(id % 11 = 6, NULL, CAST(id % 99999 / -100.0 AS DECIMAL(7, 2))) AS small,
        IF(id % 11 = 8, NULL, CAST(id * 12345.678901 AS DECIMAL(38, 6))) AS wide,
        IF(id % 11 = 9, NULL, IF(id % 17 = 0, '', CONCAT('s-', id, REPEAT('é', CAST(id % 5 AS INT))))) AS s,
        IF(id % 11 = 10, NULL, DATE_ADD(DATE'1995-03-15', CAST(id % 4000 AS INT) - 2000)) AS dt,
        IF(id % 13 = 0, NULL, TIMESTAMP_MICROS(id * 3600000123)) AS ts,
        IF(id % 13 = 1, NULL, CAST(TIMESTAMP_MICROS(id * 1000003) AS TIMESTAMP_NTZ)) AS ntz,
        IF(id % 13 = 2, NULL, IF(id % 19 = 0, X'', CAST(CONCAT('b', id) AS BINARY))) AS bin
      FROM range(20000)
      """;

  private TypedRows() {}
}
