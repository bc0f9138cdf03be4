package io.thallus.spi;

import io.thallus.IngestMode;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One ingest as the engine receives it: the table (a name as SQL writes it, checked to be 1 to 3 dotted
 * identifiers), the mode, the batches' schema, and the session options ({@link QuerySpec#AUTOCOMMIT}).
 */
public record IngestSpec(String table, IngestMode mode, Schema schema, Map<String, String> options) {
  public IngestSpec {
    options = Map.copyOf(options);
  }
}
