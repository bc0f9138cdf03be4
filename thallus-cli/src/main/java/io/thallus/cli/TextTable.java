package io.thallus.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** A plain text table with aligned columns: numbers to the right, text to the left. */
final class TextTable {
  private final List<String> headers;
  private final List<List<String>> rows = new ArrayList<>();

  TextTable(List<String> headers) {
    this.headers = List.copyOf(headers);
  }

  void add(List<String> row) {
    rows.add(List.copyOf(row));
  }

  void print(PrintStream out) {
    int[] widths = new int[headers.size()];
    for (int c = 0; c < widths.length; c++) {
      widths[c] = headers.get(c).length();
      for (List<String> row : rows) {
        widths[c] = Math.max(widths[c], row.get(c).length());
      }
    }
    out.println(line(headers, widths));
    StringBuilder rule = new StringBuilder();
    for (int c = 0; c < widths.length; c++) {
      rule.append(c == 0 ? "" : "-+-").append("-".repeat(widths[c]));
    }
    out.println(rule);
    for (List<String> row : rows) {
      out.println(line(row, widths));
    }
  }

  private static String line(List<String> cells, int[] widths) {
    StringBuilder line = new StringBuilder();
    for (int c = 0; c < cells.size(); c++) {
      String cell = cells.get(c);
      boolean numeric = !cell.isEmpty() && (Character.isDigit(cell.charAt(0)) || cell.charAt(0) == '-')
          && cell.chars().allMatch(ch -> Character.isDigit(ch) || ".,-x%".indexOf(ch) >= 0);
      String padding = " ".repeat(widths[c] - cell.length());
      line.append(c == 0 ? "" : " | ").append(numeric ? padding + cell : cell + padding);
    }
    return line.toString().stripTrailing();
  }
}
