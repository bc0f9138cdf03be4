package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.ArrayList;
import java.util.List;

/** The parts of a table name as SQL writes it ({@code t}, {@code s.t}, {@code "My Schema"."t"}), unquoted. */
final class TableNames {
  private TableNames() {}

  static List<String> parts(String name) {
    List<String> parts = new ArrayList<>();
    StringBuilder part = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (quoted) {
        if (c == '"' && i + 1 < name.length() && name.charAt(i + 1) == '"') {
          part.append('"');
          i++;
        } else if (c == '"') {
          quoted = false;
        } else {
          part.append(c);
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == '.') {
        parts.add(part.toString());
        part.setLength(0);
      } else {
        part.append(c);
      }
    }
    parts.add(part.toString());
    if (quoted || parts.size() > 3 || parts.stream().anyMatch(String::isEmpty)) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "\"" + name + "\" is not a table name");
    }
    return parts;
  }
}
