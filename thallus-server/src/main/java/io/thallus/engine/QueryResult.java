package io.thallus.engine;

import io.thallus.spi.BatchContents;
import org.apache.arrow.vector.types.pojo.Schema;

/** A running query: its schema, then its batches one by one. */
public interface QueryResult extends AutoCloseable {
  /** The result's schema in Arrow IPC message form: a dictionary-encoded field has its value type. */
  Schema schema();

  /** The next batch (the caller owns it), or {@code null} at the end. Blocks while the engine produces it. */
  BatchContents next();

  /** Asks a running {@link #next()} to stop soon; safe from any thread. */
  void cancel();

  @Override
  void close();
}
