package io.thallus.cli.sidebyside;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.DatasetDescription;
import io.thallus.StatementDescription;
import io.thallus.StatementKind;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * The benchmarks' wrapping engine: its sessions do everything the engine underneath's sessions do (the JDBC driver's
 * executeBatch asks the server to describe its statement; a wrapper that forgot to pass that on failed the JDBC
 * session benchmark with UNIMPLEMENTED).
 */
class PreparedQueryEngineTest {
  private static QuerySpec spec(String sql) {
    return new QuerySpec(sql, Optional.empty(), 1024, Map.of());
  }

  @Test
  void sessionsDescribeStatementsAndNamesAsTheEngineUnderneath() {
    try (BufferAllocator memory = new RootAllocator();
         PreparedQueryEngine engine = new PreparedQueryEngine(DuckDBEngine.create(), memory);
         EngineSession session = engine.openSession()) {
      try (QueryResult created = session.execute(spec("CREATE TABLE t AS SELECT range AS id FROM range(10)"), memory,
          new CancelSignal())) {
        for (var batch = created.next(); batch != null; batch = created.next()) {
          batch.close();
        }
      }
      StatementDescription insert = session.describeStatement(spec("INSERT INTO t VALUES (?)"), memory,
          new CancelSignal());
      assertThat(insert.kind()).isEqualTo(StatementKind.UPDATE);
      assertThat(insert.parameterCount()).isEqualTo(1);
      StatementDescription query = session.describeStatement(spec("SELECT id + 1 AS next FROM t"), memory,
          new CancelSignal());
      assertThat(query.kind()).isEqualTo(StatementKind.QUERY);
      assertThat(query.result().getFields()).extracting(field -> field.getName()).containsExactly("next");
      DatasetDescription table = session.describe("t", Optional.empty(), memory, new CancelSignal());
      assertThat(table.schema().getFields()).extracting(field -> field.getName()).containsExactly("id");
    }
  }
}
