package io.thallus.cli;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.server.ShardDeclaration;

/** {@code serve --shard NAME=PART:PATH}: a part of a sharded dataset this server holds (docs/sharding.md). */
final class ShardOption {
  private ShardOption() {}

  /** The declaration {@code text} writes; the name, part id and path are checked as the server checks them. */
  static ShardDeclaration parse(String text) {
    int equals = text.indexOf('=');
    int colon = equals < 0 ? -1 : text.indexOf(':', equals + 1);
    if (equals <= 0 || colon < 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "--shard takes NAME=PART:PATH (e.g. "
          + "lineitem=p0:lineitem/part0), got '" + text + "'");
    }
    return new ShardDeclaration(text.substring(0, equals), text.substring(equals + 1, colon),
        text.substring(colon + 1));
  }
}
