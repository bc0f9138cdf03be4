package io.thallus.server;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * That this server holds one part of a sharded dataset ({@link ThallusServer.Builder#shard}): the dataset's
 * {@code name} (the name clients describe and the Spark catalog shows), the part's {@code partId} (the same on every
 * server holding a copy of the part) and its {@code path} under the server's data root (a Parquet file, a directory
 * of them or a glob; CSV and JSON as a dataset reads them). The path is resolved inside the data root when the server
 * starts; one leading outside it, or missing, stops the start. See docs/sharding.md.
 */
public record ShardDeclaration(String name, String partId, String path) {
  /** What a sharded dataset's name may be: an SQL identifier of up to 128 characters. */
  public static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");

  public ShardDeclaration {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(partId, "partId");
    Objects.requireNonNull(path, "path");
    if (!NAME.matcher(name).matches()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "sharded dataset name '" + name + "' is not a plain "
          + "SQL identifier (a letter or '_', then letters, digits or '_', at most 128)");
    }
    if (!DatasetDescription.ShardPart.ID.matcher(partId).matches()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "part id '" + partId + "' of sharded dataset " + name
          + " is not 1 to 128 letters, digits, '.', '_' or '-'");
    }
    if (path.isBlank() || path.length() > 4096) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "part " + partId + " of sharded dataset " + name
          + " needs a path under the data root (1 to 4096 characters)");
    }
  }
}
