package io.thallus.engine;

import io.thallus.spi.BatchContents;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A running statement's answer: its schema, then its batches one by one; or, for a statement without rows, its
 * {@link #updateCounts}.
 */
public interface QueryResult extends AutoCloseable {
  /** The result's schema in Arrow IPC message form: a dictionary-encoded field has its value type. */
  Schema schema();

  /** The next batch (the caller owns it), or {@code null} at the end. Blocks while the engine produces it. */
  BatchContents next();

  /** Asks a running {@link #next()} to stop soon; safe from any thread. */
  void cancel();

  /**
   * For a statement that answers no rows (INSERT, UPDATE, DDL, ...): the rows it changed. Then {@link #schema()} has
   * no fields and {@link #next()} answers no batch; the server tells its client the counts.
   */
  default Optional<UpdateCounts> updateCounts() {
    return Optional.empty();
  }

  @Override
  void close();

  /** The answer of a statement without rows: {@code counts} and nothing else. */
  static QueryResult of(UpdateCounts counts) {
    return new QueryResult() {
      @Override
      public Schema schema() {
        return new Schema(List.of());
      }

      @Override
      public BatchContents next() {
        return null;
      }

      @Override
      public void cancel() {}

      @Override
      public Optional<UpdateCounts> updateCounts() {
        return Optional.of(counts);
      }

      @Override
      public void close() {}
    };
  }
}
