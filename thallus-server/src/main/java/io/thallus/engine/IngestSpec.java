package io.thallus.engine;

import io.thallus.IngestMode;
import io.thallus.internal.protocol.Protocol;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One ingest as the engine receives it: the table (a name as SQL writes it, checked to be 1 to 3 dotted
 * identifiers), the mode, the batches' schema, and the session options ({@link QuerySpec#AUTOCOMMIT}).
 */
public record IngestSpec(String table, IngestMode mode, Schema schema, Map<String, String> options) {
  /**
   * The option that makes the batches rows of parameters for this {@code INSERT INTO t [(columns)] VALUES (?, ...)}
   * (see {@link io.thallus.IngestRequest#forInsert}): inserted by position and cast as the INSERT casts, instead of
   * matched to the table's columns by name.
   */
  public static final String INSERT_STATEMENT = Protocol.OPTION_INSERT_STATEMENT;

  public IngestSpec {
    options = Map.copyOf(options);
  }
}
