package io.thallus.spi;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * One query as the engine receives it. {@code dataset} is already resolved inside the server's data root and
 * known to exist.
 */
public record QuerySpec(String sql, Optional<Path> dataset, int batchRows, Map<String, String> options) {
  public QuerySpec {
    options = Map.copyOf(options);
  }
}
