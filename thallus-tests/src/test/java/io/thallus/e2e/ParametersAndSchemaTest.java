package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Parameters bound on the server through DuckDB prepared statements, and schemas asked for without rows. */
class ParametersAndSchemaTest {
  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static ThallusClient client;

  @BeforeAll
  static void start() {
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create()).build().start();
    client = ThallusClient.connect(allocator, server.getLocation());
  }

  @AfterAll
  static void stop() {
    try {
      client.close();
      server.close();
    } finally {
      allocator.close();
    }
  }

  private static Collected collect(QueryRequest request) {
    try (ThallusStream stream = client.query(request)) {
      return Collected.fromIterator(stream);
    }
  }

  @Test
  void everyParameterTypeBindsAsTheLiteralWould() {
    List<Object> values = Arrays.asList(null, true, (byte) -7, (short) 300, -5, Long.MIN_VALUE, 1.5f, -2.25e300,
        new BigDecimal("-1234567.891"), new BigInteger("170141183460469231731687303715884105727"), "it's ü",
        new byte[] {0, -1, 2}, LocalDate.of(1969, 12, 31), LocalTime.of(23, 59, 59, 999_999_000),
        LocalDateTime.of(2024, 2, 29, 12, 0, 0, 123_456_000),
        OffsetDateTime.of(2024, 2, 29, 12, 0, 0, 0, ZoneOffset.UTC),
        UUID.fromString("123e4567-e89b-12d3-a456-426614174000"));
    String sql = "SELECT ?::INTEGER AS n, ?::BOOLEAN AS b, ?::TINYINT AS t, ?::SMALLINT AS s, ?::INTEGER AS i, "
        + "?::BIGINT AS l, ?::REAL AS f, ?::DOUBLE AS d, ?::DECIMAL(18,3) AS dec, ?::HUGEINT AS h, ?::VARCHAR AS v, "
        + "?::BLOB AS bl, ?::DATE AS dt, ?::TIME AS tm, ?::TIMESTAMP AS ts, ?::TIMESTAMPTZ AS tz, ?::UUID AS u";
    String literal = "SELECT NULL::INTEGER AS n, true AS b, -7::TINYINT AS t, 300::SMALLINT AS s, -5 AS i, "
        + "(-9223372036854775808)::BIGINT AS l, 1.5::REAL AS f, -2.25e300::DOUBLE AS d, "
        + "-1234567.891::DECIMAL(18,3) AS dec, 170141183460469231731687303715884105727::HUGEINT AS h, "
        + "'it''s ü' AS v, '\\x00\\xFF\\x02'::BLOB AS bl, DATE '1969-12-31' AS dt, TIME '23:59:59.999999' AS tm, "
        + "TIMESTAMP '2024-02-29 12:00:00.123456' AS ts, TIMESTAMPTZ '2024-02-29 12:00:00+00' AS tz, "
        + "'123e4567-e89b-12d3-a456-426614174000'::UUID AS u";
    Collected actual = collect(QueryRequest.builder(sql).parameters(values).build());
    Collected expected = DuckDBReference.run(literal, 1024);
    assertThat(actual.rows()).hasSize(1).isEqualTo(expected.rows());
    assertThat(actual.schema()).isEqualTo(expected.schema());
  }

  @Test
  void parametersFilterARealQuery() {
    Collected actual = collect(QueryRequest.builder(
        "SELECT i, 'row ' || i AS name FROM range(1000) t(i) WHERE i BETWEEN ? AND ? AND name LIKE ? ORDER BY i")
        .parameters(100L, 400, "row 1%").build());
    Collected expected = DuckDBReference.run(
        "SELECT i, 'row ' || i AS name FROM range(1000) t(i) WHERE i BETWEEN 100 AND 400 AND name LIKE 'row 1%' "
            + "ORDER BY i", 1024);
    assertThat(actual.rows()).hasSize(100).isEqualTo(expected.rows());
  }

  @Test
  void aWrongNumberOfParametersIsNamed() {
    assertThatThrownBy(() -> collect(QueryRequest.builder("SELECT ? + ?").parameters(1).build()))
        .isInstanceOf(ThallusException.class)
        .satisfies(e -> assertThat(((ThallusException) e).code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("2 parameter(s)").hasMessageContaining("gave 1");
  }

  @Test
  @Timeout(60)
  void theSchemaComesWithoutRunningTheQuery() {
    // A trillion rows: this returns at once only if nothing is produced.
    String sql = "SELECT i, i::VARCHAR AS s, [i, i] AS l FROM range(1000000000000) t(i) ORDER BY s DESC;";
    Schema schema = client.schema(QueryRequest.of(sql));
    Collected small = collect(QueryRequest.of(sql.replace("1000000000000", "3")));
    assertThat(schema).isEqualTo(small.schema());
    assertThat(schema.getFields()).extracting(f -> f.getName()).containsExactly("i", "s", "l");
  }

  @Test
  void theSchemaOfAStatementThatIsNotAQuery() {
    Schema schema = client.schema(QueryRequest.of("PRAGMA version"));
    assertThat(schema.getFields()).extracting(f -> f.getName()).contains("library_version");
  }

  @Test
  void theSchemaOfBadSqlIsTheSqlError() {
    assertThatThrownBy(() -> client.schema(QueryRequest.of("SELECT nope FROM range(3)")))
        .isInstanceOf(ThallusException.class)
        .hasMessageContaining("nope");
  }
}
