package io.thallus.duckdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.spi.BatchContents;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * DuckDB's batches come in through Arrow's C data import, which leaked the array's struct (and DuckDB's batch) when
 * a budget refused it. A batch its stream's budget has no room for now fails with {@link OutOfMemoryException} and
 * leaves nothing behind: the budget closes clean. One that fits is accounted in the stream's budget.
 */
class RefusedImportTest {
  private static final String SQL = "SELECT i FROM range(300000) t(i)";
  private static DuckDBEngine engine;

  @BeforeAll
  static void start() {
    engine = DuckDBEngine.builder().build();
  }

  @AfterAll
  static void stop() {
    engine.close();
  }

  @Test
  void aBatchTheBudgetHasNoRoomForFailsAndTheBudgetClosesClean() {
    try (BufferAllocator root = new RootAllocator()) {
      BufferAllocator small = root.newChildAllocator("small", 0, 64 << 10);
      try (QueryResult result = engine.execute(new QuerySpec(SQL, Optional.empty(), 100_000, Map.of()), small)) {
        assertThatThrownBy(result::next).isInstanceOf(OutOfMemoryException.class)
            .hasMessageContaining("does not fit in small");
      }
      small.close(); // throws if the refused import left a struct or a buffer accounted there
      assertThat(root.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void aBatchThatFitsIsAccountedInTheStreamsBudgetAndHoldsDuckDBsValues() {
    try (BufferAllocator root = new RootAllocator();
         BufferAllocator stream = root.newChildAllocator("stream", 0, 64 << 20)) {
      long sum = 0;
      long rows = 0;
      try (QueryResult result = engine.execute(new QuerySpec(SQL, Optional.empty(), 100_000, Map.of()), stream)) {
        for (BatchContents next = result.next(); next != null; next = result.next()) {
          try (BatchContents batch = next; VectorSchemaRoot loaded = VectorSchemaRoot.create(result.schema(), root)) {
            assertThat(stream.getAllocatedMemory()).as("the batch, in the stream's budget")
                .isGreaterThanOrEqualTo(batch.rowCount() * 8L);
            new VectorLoader(loaded).load(batch.records());
            BigIntVector values = (BigIntVector) loaded.getVector(0);
            for (int i = 0; i < loaded.getRowCount(); i++) {
              sum += values.get(i);
            }
            rows += loaded.getRowCount();
          }
        }
      }
      assertThat(rows).isEqualTo(300_000);
      assertThat(sum).isEqualTo(300_000L * 299_999 / 2);
      assertThat(stream.getAllocatedMemory()).isZero();
      assertThat(root.getChildAllocators()).as("the import's allocator closed with the result")
          .containsExactly(stream);
    }
  }

  @Test
  void aBatchThatOutlivesItsResultKeepsTheImportUntilItIsReleased() {
    try (BufferAllocator root = new RootAllocator();
         BufferAllocator stream = root.newChildAllocator("stream", 0, 64 << 20)) {
      BatchContents kept;
      try (QueryResult result = engine.execute(new QuerySpec(SQL, Optional.empty(), 100_000, Map.of()), stream)) {
        kept = result.next();
      }
      assertThat(kept.rowCount()).isEqualTo(100_000);
      assertThat(root.getChildAllocators()).as("Arrow's copy of DuckDB's array lives as long as the batch")
          .hasSize(2);
      kept.close();
      assertThat(root.getChildAllocators()).containsExactly(stream);
      assertThat(stream.getAllocatedMemory()).isZero();
    }
  }
}
