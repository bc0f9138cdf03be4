package io.thallus.internal.protocol;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code INSERT INTO t [(columns)] VALUES (?, ..., ?)}: a statement whose rows of parameters insert as one
 * {@code INSERT INTO t [(columns)] SELECT * FROM <rows>}, the rows being an Arrow stream DuckDB scans. Recognized the
 * same way by the client (to send such rows on the write path) and by the server (to run them).
 */
public final class InsertStatements {
  /**
   * Groups: the target table (maybe qualified or quoted), its column list, the placeholders. The repeats are
   * possessive: Java runs a greedy repeat of an alternation or of a variable-length group by recursing once per
   * repetition, which overflowed the stack on a quoted name of a few thousand characters or as many placeholders.
   */
  private static final Pattern INSERT_VALUES = Pattern.compile("(?is)\\s*INSERT\\s+INTO\\s+("
      + "(?:\"(?:[^\"]++|\"\")*+\"|[\\w$]++)(?:\\s*\\.\\s*(?:\"(?:[^\"]++|\"\")*+\"|[\\w$]++)){0,2})"
      + "\\s*(\\([^()]*+\\))?\\s*VALUES\\s*(\\(\\s*\\?(?:\\s*,\\s*\\?)*+\\s*\\))\\s*;?\\s*");

  /** A recognized statement: its target, its column list (null for none) and how many placeholders it has. */
  public record Insert(String target, String columns, int placeholders) {
    /** The statement that inserts the rows of {@code relation} (one column per placeholder, in order). */
    public String selectingFrom(String relation) {
      return "INSERT INTO " + target + (columns == null ? "" : " " + columns) + " SELECT * FROM " + relation;
    }
  }

  private InsertStatements() {}

  public static Optional<Insert> parse(String sql) {
    Matcher insert = INSERT_VALUES.matcher(sql);
    if (!insert.matches()) {
      return Optional.empty();
    }
    int placeholders = (int) insert.group(3).chars().filter(c -> c == '?').count();
    return Optional.of(new Insert(insert.group(1), insert.group(2), placeholders));
  }
}
