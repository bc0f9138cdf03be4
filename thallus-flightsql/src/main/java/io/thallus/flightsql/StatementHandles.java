package io.thallus.flightsql;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The statement handle in a ticket: the id of the planned statement on this server and, after a newline, its SQL.
 * Flight clients treat the handle as opaque bytes; a Thallus client handed the ticket reads the SQL from it and runs
 * the statement on a Thallus lane (see {@link FastLanes}). The SQL is the client's own. The id is a capability (128
 * random bits): a call with any credentials this server accepts and the id reads the statement, in its session.
 * Handles are bounded per session and per server, least recently used first out ({@link Statements.Table}).
 */
final class StatementHandles {
  /** The id of a statement that ran when it was planned (one without rows): its ticket yields no rows. */
  static final String RAN = "ran";

  private StatementHandles() {}

  static byte[] encode(String id, String sql) {
    return (id + "\n" + sql).getBytes(StandardCharsets.UTF_8);
  }

  static String id(byte[] handle) {
    String text = new String(handle, StandardCharsets.UTF_8);
    int newline = text.indexOf('\n');
    return newline < 0 ? text : text.substring(0, newline);
  }

  static Optional<String> sql(byte[] handle) {
    String text = new String(handle, StandardCharsets.UTF_8);
    int newline = text.indexOf('\n');
    return newline < 0 ? Optional.empty() : Optional.of(text.substring(newline + 1));
  }
}
