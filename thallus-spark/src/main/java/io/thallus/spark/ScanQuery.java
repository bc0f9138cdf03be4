package io.thallus.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.stream.Collectors;
import org.apache.spark.sql.types.StructType;

/**
 * The SQL one scan sends, with every pushdown applied. The user's query (or table, or dataset) is wrapped, never
 * edited:
 *
 * <pre>
 * [WITH dataset AS (one partition's files)]
 * SELECT select list                                   -- pruned columns, or group-by columns and aggregates
 * FROM (SELECT casts FROM (base) AS thallus_source) AS thallus_scan
 * WHERE pushed filters AND partition predicate
 * GROUP BY ... ORDER BY ... LIMIT n
 * </pre>
 *
 * Filters and sorts refer to the cast columns, the values Spark sees, so they mean in DuckDB what they mean in Spark.
 */
record ScanQuery(
    String base,
    List<TypeMapping.Column> columns,
    List<String> select,
    List<String> filters,
    List<String> groupBy,
    List<String> orderBy,
    OptionalInt limit,
    StructType readSchema,
    List<String> narrowSelectOrNull,
    List<String> narrowGroupByOrNull,
    DrivingSource drivingOrNull) implements Serializable {

  /**
   * The name a split join's {@code base} reads its driving source by: a CTE that each partition defines as its share
   * of it ({@link DrivingSource#rows}), the whole source for the scan as a whole.
   */
  static final String DRIVING = "thallus_driving";

  /** A scan of no driving table. */
  ScanQuery(String base, List<TypeMapping.Column> columns, List<String> select, List<String> filters,
      List<String> groupBy, List<String> orderBy, OptionalInt limit, StructType readSchema,
      List<String> narrowSelectOrNull, List<String> narrowGroupByOrNull) {
    this(base, columns, select, filters, groupBy, orderBy, limit, readSchema, narrowSelectOrNull, narrowGroupByOrNull,
        null);
  }

  /** A scan without a narrow form (see {@link ExpressionSql.Typed}). */
  ScanQuery(String base, List<TypeMapping.Column> columns, List<String> select, List<String> filters,
      List<String> groupBy, List<String> orderBy, OptionalInt limit, StructType readSchema) {
    this(base, columns, select, filters, groupBy, orderBy, limit, readSchema, null, null, null);
  }

  /** Stands in for an empty select list (Spark's {@code count()} needs rows, no columns); never read. */
  static final String NO_COLUMNS = "TRUE AS thallus_no_columns";

  /** The SQL of the whole scan, or of one partition when {@code partition} narrows it: Spark's types throughout. */
  String sql(PartitionSpec partition) {
    return render(select, groupBy, partition);
  }

  /**
   * The same aggregate in DuckDB's own decimal types (faster; the same values, or an overflow where the exact SQL
   * would not overflow), when it differs. Only an aggregate has one: nothing of it is sent before the whole input
   * is read, so after an overflow the partition runs {@link #sql} instead with nothing to take back.
   */
  java.util.Optional<String> narrowSql(PartitionSpec partition) {
    return narrowSelectOrNull == null ? java.util.Optional.empty()
        : java.util.Optional.of(render(narrowSelectOrNull, narrowGroupByOrNull, partition));
  }

  private String render(List<String> select, List<String> groupBy, PartitionSpec partition) {
    StringBuilder sql = new StringBuilder();
    List<String> ctes = new ArrayList<>();
    if (drivingOrNull != null) {
      // A split join: the partition narrows its driving source only; the join's SQL (and any 'dataset' it reads,
      // the other side's included) stays as it is.
      ctes.add(DRIVING + " AS (" + drivingOrNull.rows(partition) + ")");
    } else {
      partition.datasetCte().ifPresent(cte -> ctes.add("dataset AS (" + cte + ")"));
    }
    if (!ctes.isEmpty()) {
      sql.append("WITH ").append(String.join(", ", ctes)).append("\n");
    }
    sql.append("SELECT ").append(select.isEmpty() ? NO_COLUMNS : String.join(", ", select));
    String casts = columns.stream().map(TypeMapping.Column::selectSql).collect(Collectors.joining(", "));
    sql.append("\nFROM (SELECT ").append(casts).append(" FROM (\n")
        .append(drivingOrNull != null ? base : partition.base(base))
        .append("\n) AS thallus_source) AS thallus_scan");
    List<String> where = new ArrayList<>(filters);
    partition.predicate(columns).ifPresent(where::add);
    if (!where.isEmpty()) {
      sql.append("\nWHERE ").append(String.join(" AND ", where));
    }
    if (!groupBy.isEmpty()) {
      sql.append("\nGROUP BY ").append(String.join(", ", groupBy));
    }
    if (!orderBy.isEmpty()) {
      sql.append("\nORDER BY ").append(String.join(", ", orderBy));
    }
    limit.ifPresent(n -> sql.append("\nLIMIT ").append(n));
    return sql.toString();
  }
}
