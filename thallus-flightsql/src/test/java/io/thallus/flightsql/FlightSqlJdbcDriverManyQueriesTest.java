package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Flight SQL JDBC driver prepares a statement for every {@code executeQuery} and never closes one; the door keeps
 * working however many it runs, holding at most its bound of handles.
 */
// 3,000 queries: about three times one session's bound of handles (1,024), so the door drops the oldest ones two
// thousand times. 10,000 took 52 s on a quiet 2-core box and 123 to 153 s under load; the limit only catches a hang.
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FlightSqlJdbcDriverManyQueriesTest {
  private static final int QUERIES = 3_000;

  @Test
  void threeThousandQueriesOnOneStatementEachGetTheirAnswer() throws Exception {
    try (FlightSqlFixture fixture = new FlightSqlFixture()) {
      String url = "jdbc:arrow-flight-sql://127.0.0.1:" + fixture.flightSql.port() + "/?useEncryption=false&user="
          + FlightSqlFixture.USER + "&password=" + FlightSqlFixture.PASSWORD;
      long started = System.nanoTime();
      try (Connection connection = DriverManager.getConnection(url);
           Statement statement = connection.createStatement()) {
        for (int i = 0; i < QUERIES; i++) {
          try (ResultSet rows = statement.executeQuery("SELECT " + i + " AS n, 'row ' || " + i + " AS label")) {
            assertThat(rows.next()).as("query %d has a row", i).isTrue();
            assertThat(rows.getLong(1)).as("query %d", i).isEqualTo(i);
            assertThat(rows.getString(2)).as("query %d", i).isEqualTo("row " + i);
            assertThat(rows.next()).as("query %d has one row", i).isFalse();
          }
        }
        // Never more handles than one session's bound, however many the driver left open.
        assertThat(fixture.flightSql.statementCount())
            .isLessThanOrEqualTo(Statements.Limits.DEFAULT.perSession());
      }
      System.out.printf("%,d queries through the Flight SQL JDBC driver on one Statement: %.1f s%n", QUERIES,
          (System.nanoTime() - started) / 1e9);
    }
  }
}
