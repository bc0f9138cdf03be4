package io.thallus.duckdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Optional;
import org.apache.arrow.memory.RootAllocator;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The part limit of an answer, on a real DuckDB with the limit lowered: past it the answer is a refusal by name. */
class DatasetDescriberTest {
  @TempDir
  Path root;

  @Test
  void moreFilesOrRowRangesThanTheLimitAreRefused() throws Exception {
    try (RootAllocator allocator = new RootAllocator();
         DuckDBConnection connection = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      Path files = root.toRealPath();
      for (String name : new String[] {"a", "b", "c"}) {
        statement.execute("COPY (SELECT range AS id FROM range(10)) TO '" + files.resolve(name + ".parquet")
            + "' (FORMAT parquet)");
      }
      statement.execute("CREATE TEMP VIEW dataset AS SELECT * FROM " + DatasetFiles.of(files).source());
      statement.execute("CREATE TABLE big AS SELECT range AS id FROM range(300000)");

      DatasetDescription three = new DatasetDescriber(connection, files, new CancelSignal(), 3)
          .describe("dataset", Optional.of(files), allocator);
      assertThat(three.parts()).hasSize(3);
      assertThat(three.rows()).isEqualTo(30);
      assertThatThrownBy(() -> new DatasetDescriber(connection, files, new CancelSignal(), 2)
          .describe("dataset", Optional.of(files), allocator))
          .isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.code())
              .isEqualTo(StatusCode.OUT_OF_RANGE))
          .hasMessageContaining("has more than 2 files");

      assertThat(new DatasetDescriber(connection, files, new CancelSignal(), 3)
          .describe("big", Optional.empty(), allocator).parts()).hasSize(3);
      assertThatThrownBy(() -> new DatasetDescriber(connection, files, new CancelSignal(), 2)
          .describe("big", Optional.empty(), allocator))
          .isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.code())
              .isEqualTo(StatusCode.OUT_OF_RANGE))
          .hasMessageContaining("has more than 2 row ranges");
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void jsonFilesAreCountedRowByRow() throws Exception {
    try (RootAllocator allocator = new RootAllocator();
         DuckDBConnection connection = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      Path files = root.toRealPath();
      Path json = files.resolve("rows.ndjson");
      statement.execute("COPY (SELECT range AS id, 'r' || range AS name FROM range(42)) TO '" + json
          + "' (FORMAT json)");
      statement.execute("CREATE TEMP VIEW dataset AS SELECT * FROM " + DatasetFiles.of(json).source());
      DatasetDescription description = new DatasetDescriber(connection, files, new CancelSignal())
          .describe("dataset", Optional.of(json), allocator);
      assertThat(description.kind()).isEqualTo(DatasetDescription.Kind.FILES);
      DatasetDescription.FilePart file = (DatasetDescription.FilePart) description.parts().get(0);
      assertThat(file.rows()).isEqualTo(42);
      assertThat(file.rowGroupRows()).isEmpty();
      assertThat(file.bytes()).isEqualTo(java.nio.file.Files.size(json));
    }
  }
}
