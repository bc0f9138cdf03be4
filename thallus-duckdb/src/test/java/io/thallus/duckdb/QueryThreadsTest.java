package io.thallus.duckdb;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** The engine says how many threads DuckDB runs a query on, as configured, for the server's overlap policy. */
class QueryThreadsTest {
  @Test
  void theEngineReportsDuckDBsThreadsSetting() {
    try (DuckDBEngine one = DuckDBEngine.builder().threads(1).build();
         DuckDBEngine three = DuckDBEngine.builder().threads(3).build();
         DuckDBEngine defaults = DuckDBEngine.create()) {
      assertThat(one.queryThreads()).isEqualTo(OptionalInt.of(1));
      assertThat(three.queryThreads()).isEqualTo(OptionalInt.of(3));
      // DuckDB's default: a thread per core, as DuckDB counts them.
      assertThat(defaults.queryThreads().orElseThrow()).isPositive();
    }
  }
}
