package io.thallus.jdbc;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** The statements a connection made and not yet closed, in the order made: the connection closes them, newest first. */
final class OpenStatements {
  private final Set<ThallusStatement> statements = Collections.synchronizedSet(new LinkedHashSet<>());

  <T extends ThallusStatement> T add(T statement) {
    statements.add(statement);
    return statement;
  }

  void remove(ThallusStatement statement) {
    statements.remove(statement);
  }

  /** Closes every open statement, newest first; answers the first failure (null for none) after trying them all. */
  SQLException closeAll() {
    List<ThallusStatement> open;
    synchronized (statements) {
      open = new ArrayList<>(statements);
    }
    Collections.reverse(open);
    SQLException failure = null;
    for (ThallusStatement statement : open) {
      try {
        statement.close();
      } catch (SQLException e) {
        failure = failure == null ? e : failure;
      }
    }
    return failure;
  }
}
