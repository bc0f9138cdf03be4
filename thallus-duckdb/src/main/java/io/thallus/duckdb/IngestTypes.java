package io.thallus.duckdb;

import java.util.Set;

/**
 * Which column types an append accepts for a table column of another type: only conversions DuckDB makes exactly or
 * checks value by value at insert time (an overflow or a string that is no valid value fails the ingest), never one
 * that would round or truncate silently. Arrow has no HUGEINT, UUID or ENUM, so their values arrive as DECIMAL(38,0),
 * VARCHAR and dictionary-encoded VARCHAR, and go into such columns.
 */
final class IngestTypes {
  private static final Set<String> INTEGERS = Set.of("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
      "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT");

  private IngestTypes() {}

  static boolean fits(String incoming, String target) {
    if (incoming.equals(target)) {
      return true;
    }
    if (incoming.equals("VARCHAR")) {
      return target.startsWith("ENUM(") || target.equals("UUID");
    }
    int incomingScale = scale(incoming);
    int targetScale = scale(target);
    // Integers into integers or decimals, decimals into decimals of at least their scale: overflow is checked.
    return incomingScale >= 0 && targetScale >= 0 && targetScale >= incomingScale
        && (targetScale == 0 || DuckDBTypes.decimal(target).isPresent());
  }

  /** The digits after the point of an exact numeric type, or -1 for a type that is none. */
  private static int scale(String type) {
    if (INTEGERS.contains(type)) {
      return 0;
    }
    return DuckDBTypes.decimal(type).map(DuckDBTypes.Decimal::scale).orElse(-1);
  }
}
