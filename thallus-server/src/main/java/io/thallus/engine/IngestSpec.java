package io.thallus.engine;

import io.thallus.IngestMode;
import java.util.Objects;
import java.util.Optional;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One ingest as the engine receives it: the table (a name as SQL writes it, checked to be 1 to 3 dotted
 * identifiers), the mode, the batches' schema, and the transaction it writes in. With {@code insertStatement}, the
 * batches are rows of parameters for that {@code INSERT INTO t [(columns)] VALUES (?, ...)} (see
 * {@link io.thallus.IngestRequest#forInsert}): inserted by position and cast as the INSERT casts, instead of matched
 * to the table's columns by name.
 */
public record IngestSpec(String table, IngestMode mode, Schema schema, TransactionMode transaction,
    Optional<String> insertStatement) {
  public IngestSpec {
    Objects.requireNonNull(transaction, "transaction");
    Objects.requireNonNull(insertStatement, "insertStatement");
  }

  /** An ingest in a transaction of its own, matched to the table's columns by name. */
  public IngestSpec(String table, IngestMode mode, Schema schema) {
    this(table, mode, schema, TransactionMode.AUTOCOMMIT, Optional.empty());
  }
}
