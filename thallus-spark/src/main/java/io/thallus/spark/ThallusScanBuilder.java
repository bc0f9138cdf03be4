package io.thallus.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.Avg;
import org.apache.spark.sql.connector.expressions.aggregate.Count;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.expressions.aggregate.Max;
import org.apache.spark.sql.connector.expressions.aggregate.Min;
import org.apache.spark.sql.connector.expressions.aggregate.Sum;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownJoin;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownTopN;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Collects what Spark pushes into the scan. Everything pushed must give Spark's own answer, so aggregates are
 * taken only where DuckDB's result is exact and typed as Spark's: COUNT, COUNT(*), MIN and MAX of comparable types,
 * SUM of integers (as BIGINT: an overflow fails, as in Spark's ANSI mode) and of decimals (as DECIMAL(p+10)), over
 * columns or the value expressions {@link ExpressionSql} translates; AVG as SUM and COUNT that Spark divides; DISTINCT
 * where the server's aggregate is final. SUM and AVG of floating point depend on the order of addition and stay in
 * Spark.
 */
final class ThallusScanBuilder implements SupportsPushDownV2Filters, SupportsPushDownRequiredColumns,
    SupportsPushDownAggregates, SupportsPushDownLimit, SupportsPushDownTopN, SupportsPushDownJoin {

  // A pushed join makes this builder the join's: its connection reads the join's SQL, its columns are the join's.
  private ReadConf conf;
  private List<TypeMapping.Column> columns;
  private final Map<String, DataType> types = new LinkedHashMap<>();
  private StructType required;
  private Predicate[] pushedPredicates = new Predicate[0];
  private final List<String> filters = new ArrayList<>();
  private List<String> aggregateSelect;
  private List<String> groupBy = List.of();
  private StructType aggregateSchema;
  private Map<String, DataType> aggregateTypes;
  /** The aggregate's select list and grouping in DuckDB's own decimal types, or null when they are the same. */
  private List<String> aggregateNarrowSelect;
  private List<String> narrowGroupBy;
  /** The pushed aggregate's outputs by the text of the expression they compute (top-N names them that way). */
  private Map<String, String> aggregateOutputs;
  private String aggregateDescription;
  private String joinDescription;
  private List<String> orderBy = List.of();
  private OptionalInt limit = OptionalInt.empty();

  ThallusScanBuilder(ReadConf conf, List<TypeMapping.Column> columns) {
    this.conf = conf;
    this.columns = columns;
    for (TypeMapping.Column column : columns) {
      types.put(column.name(), column.sparkType());
    }
    this.required = TypeMapping.schema(columns);
  }

  /**
   * Two reads join on the server when they reach the same servers the same way and one request can bind what both
   * read ({@link JoinSources}: the server's database, the same dataset, or files of each under a view of their own):
   * the join then runs in one DuckDB query. With several partitions the left side must be a table or Parquet files
   * read whole (or a join split by one, {@link #splitSource}) and the right side no split join: each partition joins
   * its share of that source with the whole right side, so the partitions together hold every row of the join once.
   */
  @Override
  public boolean isOtherSideCompatibleForJoin(SupportsPushDownJoin other) {
    return other instanceof ThallusScanBuilder that && conf.sharded().isEmpty() && that.conf.sharded().isEmpty()
        && conf.partitions() == that.conf.partitions()
        && (conf.partitions() == 1 || splitSource(conf.baseSql()).isPresent() && that.conf.driving().isEmpty())
        && aggregateSelect == null && that.aggregateSelect == null && limit.isEmpty() && that.limit.isEmpty()
        && conf.urls().equals(that.conf.urls()) && conf.credentials().equals(that.conf.credentials())
        && java.util.Objects.equals(conf.transportName(), that.conf.transportName()) && conf.tls() == that.conf.tls()
        && JoinSources.of(conf, that.conf).isPresent();
  }

  /**
   * {@code SELECT * FROM (left's columns, renamed as Spark asks) JOIN (right's) ON condition}, each side with the
   * filters already pushed into it; later filters, aggregates and top-N apply to the join's result.
   */
  @Override
  public boolean pushDownJoin(SupportsPushDownJoin other, org.apache.spark.sql.connector.join.JoinType joinType,
      ColumnWithAlias[] leftColumns, ColumnWithAlias[] rightColumns, Predicate condition) {
    ThallusScanBuilder right = (ThallusScanBuilder) other;
    String join = switch (joinType) {
      case INNER_JOIN -> "JOIN";
      case LEFT_OUTER_JOIN -> "LEFT JOIN";
      case RIGHT_OUTER_JOIN -> "RIGHT JOIN";
      default -> null;
    };
    if (join == null) {
      return false;
    }
    Optional<JoinSources.Bound> sources = JoinSources.of(conf, right.conf);
    if (sources.isEmpty()) {
      return false;
    }
    String leftBase = sources.get().leftBase();
    DrivingSource driving = null;
    if (conf.partitions() > 1) {
      // Split by the left side's rows: a right outer join would need the right side's rows split instead.
      Optional<DrivingSource> split = splitSource(leftBase);
      if (split.isEmpty() || joinType == org.apache.spark.sql.connector.join.JoinType.RIGHT_OUTER_JOIN
          || right.conf.driving().isPresent()) {
        return false;
      }
      driving = split.get();
      if (conf.driving().isEmpty()) {
        leftBase = "SELECT * FROM " + ScanQuery.DRIVING;
      }
    }
    List<TypeMapping.Column> joined = new ArrayList<>();
    Map<String, DataType> joinedTypes = new LinkedHashMap<>();
    String leftSql = side(leftBase, leftColumns, joined, joinedTypes);
    String rightSql = right.side(sources.get().rightBase(), rightColumns, joined, joinedTypes);
    if (leftSql == null || rightSql == null) {
      return false;
    }
    Optional<String> on = ExpressionSql.predicate(condition, joinedTypes);
    if (on.isEmpty()) {
      return false;
    }
    String sql = "SELECT * FROM (\n" + leftSql + "\n) AS thallus_left " + join + " (\n" + rightSql
        + "\n) AS thallus_right ON " + on.get();
    conf = conf.withJoin(sql, sources.get().datasetOrNull(), sources.get().named(), driving);
    columns = joined;
    types.clear();
    joinedTypes.forEach(types::put);
    required = TypeMapping.schema(joined);
    filters.clear();
    pushedPredicates = new Predicate[0];
    joinDescription = (joinDescription == null ? "" : joinDescription + "; ") + join + " ON " + on.get();
    return true;
  }

  /**
   * What can split this read when it is a join's left side, read in the join as {@code base}: the table it reads
   * (of the server's database, or of its DuckDB dataset), the Parquet dataset it reads whole (by row groups), or
   * the driving source of the join it already is.
   */
  private Optional<DrivingSource> splitSource(String base) {
    if (conf.driving().isPresent()) {
      return conf.driving();
    }
    if (conf.query().isPresent()) {
      return Optional.empty();
    }
    boolean filesDataset = conf.dataset().isPresent() && !JoinSources.isDatabaseFile(conf.dataset().get());
    if (!filesDataset) {
      return conf.table().map(table -> DrivingSource.table(table, base));
    }
    return conf.table().isEmpty() ? Optional.of(DrivingSource.files(conf.dataset().get(), base)) : Optional.empty();
  }

  /**
   * This side's SQL over {@code base} (what it reads in the join's request) with its pushed filters, selecting
   * {@code wanted} under their join names; null if it cannot.
   */
  private String side(String base, ColumnWithAlias[] wanted, List<TypeMapping.Column> joined,
      Map<String, DataType> joinedTypes) {
    List<String> select = new ArrayList<>();
    for (ColumnWithAlias column : wanted) {
      DataType type = types.get(column.colName());
      if (type == null) {
        return null;
      }
      String name = column.alias() != null ? column.alias() : column.colName();
      select.add(Sql.identifier(column.colName()) + (column.alias() != null ? " AS " + Sql.identifier(name) : ""));
      joined.add(new TypeMapping.Column(name, Sql.identifier(name), type));
      joinedTypes.put(name, type);
    }
    ScanQuery side = new ScanQuery(base, columns, select, List.copyOf(filters), List.of(), List.of(),
        OptionalInt.empty(), null);
    return side.sql(new PartitionSpec.Whole());
  }

  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    if (!conf.pushDownFilters()) {
      return predicates;
    }
    List<Predicate> pushed = new ArrayList<>();
    List<Predicate> remaining = new ArrayList<>();
    for (Predicate predicate : predicates) {
      Optional<String> sql = ExpressionSql.predicate(predicate, types);
      if (sql.isPresent()) {
        filters.add(sql.get());
        pushed.add(predicate);
      } else {
        remaining.add(predicate);
      }
    }
    pushedPredicates = pushed.toArray(Predicate[]::new);
    return remaining.toArray(Predicate[]::new);
  }

  @Override
  public Predicate[] pushedPredicates() {
    return pushedPredicates;
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    this.required = requiredSchema;
  }

  /**
   * With one stream the server's aggregate is final; with several each gives a partial one Spark merges. AVG is
   * never final here: Spark then asks for SUM and COUNT instead and divides with its own decimal rules.
   */
  @Override
  public boolean supportCompletePushDown(Aggregation aggregation) {
    if (conf.partitions() != 1) {
      return false;
    }
    for (AggregateFunc function : aggregation.aggregateExpressions()) {
      if (function instanceof Avg) {
        return false;
      }
    }
    return true;
  }

  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    if (!conf.pushDownAggregate()) {
      return false;
    }
    List<String> select = new ArrayList<>();
    List<String> groups = new ArrayList<>();
    List<String> narrowSelect = new ArrayList<>();
    List<String> narrowGroups = new ArrayList<>();
    List<StructField> fields = new ArrayList<>();
    Map<String, DataType> outputTypes = new LinkedHashMap<>();
    Map<String, String> outputs = new LinkedHashMap<>();
    int index = 0;
    for (Expression expression : aggregation.groupByExpressions()) {
      Optional<String> name = ExpressionSql.columnName(expression, types);
      if (name.isPresent()) {
        outputs.put(expression.toString(), name.get());
        groups.add(Sql.identifier(name.get()));
        select.add(Sql.identifier(name.get()));
        narrowGroups.add(Sql.identifier(name.get()));
        narrowSelect.add(Sql.identifier(name.get()));
        fields.add(DataTypes.createStructField(name.get(), types.get(name.get()), true));
        outputTypes.put(name.get(), types.get(name.get()));
        continue;
      }
      // A key computed from columns: grouped by its value, which keeps Spark's type.
      Optional<ExpressionSql.Typed> key = ExpressionSql.valueOf(expression, types)
          .filter(typed -> ExpressionSql.comparable(typed.type()));
      if (key.isEmpty()) {
        return false;
      }
      String alias = "thallus_group_" + index++;
      outputs.put(expression.toString(), alias);
      groups.add(key.get().sql());
      select.add(key.get().sql() + " AS " + alias);
      narrowGroups.add(key.get().narrow());
      narrowSelect.add(key.get().narrowAsSpark() + " AS " + alias);
      fields.add(DataTypes.createStructField(alias, key.get().type(), true));
      outputTypes.put(alias, key.get().type());
    }
    index = 0;
    for (AggregateFunc function : aggregation.aggregateExpressions()) {
      String alias = "thallus_agg_" + index++;
      Optional<Aggregate> aggregate = aggregate(function);
      if (aggregate.isEmpty()) {
        return false;
      }
      select.add(aggregate.get().sql() + " AS " + alias);
      narrowSelect.add(aggregate.get().narrow() + " AS " + alias);
      fields.add(DataTypes.createStructField(alias, aggregate.get().type(), true));
      outputTypes.put(alias, aggregate.get().type());
      outputs.put(function.toString(), alias);
    }
    aggregateSelect = select;
    groupBy = groups;
    boolean narrower = !narrowSelect.equals(select) || !narrowGroups.equals(groups);
    aggregateNarrowSelect = narrower ? narrowSelect : null;
    narrowGroupBy = narrower ? narrowGroups : null;
    aggregateSchema = new StructType(fields.toArray(StructField[]::new));
    aggregateTypes = outputTypes;
    aggregateOutputs = outputs;
    aggregateDescription = String.join(", ", select)
        + (groups.isEmpty() ? "" : " GROUP BY " + String.join(", ", groups));
    return true;
  }

  /** An aggregate in both forms of {@link ExpressionSql.Typed}, each giving Spark's type. */
  private record Aggregate(String sql, String narrow, DataType type) {
    Aggregate(String sql, DataType type) {
      this(sql, sql, type);
    }
  }

  /**
   * An aggregate whose DuckDB value is Spark's. DISTINCT only when the server's aggregate is final (one stream):
   * partial distinct counts cannot be merged.
   */
  private Optional<Aggregate> aggregate(AggregateFunc function) {
    switch (function) {
      case CountStar c -> {
        return Optional.of(new Aggregate("count(*)", DataTypes.LongType));
      }
      case Count c -> {
        if (c.isDistinct() && conf.partitions() != 1) {
          return Optional.empty();
        }
        String distinct = c.isDistinct() ? "DISTINCT " : "";
        return ExpressionSql.valueOf(c.column(), types)
            .map(value -> new Aggregate("count(" + distinct + value.sql() + ")",
                "count(" + distinct + value.narrow() + ")", DataTypes.LongType));
      }
      case Min m -> {
        return minMax("min", m.column());
      }
      case Max m -> {
        return minMax("max", m.column());
      }
      case Sum s -> {
        if (s.isDistinct() && conf.partitions() != 1) {
          return Optional.empty();
        }
        Optional<ExpressionSql.Typed> value = ExpressionSql.valueOf(s.column(), types);
        if (value.isEmpty()) {
          return Optional.empty();
        }
        DataType type = value.get().type();
        String distinct = s.isDistinct() ? "DISTINCT " : "";
        String argument = distinct + value.get().sql();
        String narrowArgument = distinct + value.get().narrow();
        if (type instanceof ByteType || type instanceof ShortType || type instanceof IntegerType
            || type instanceof LongType) {
          return Optional.of(new Aggregate("CAST(sum(" + argument + ") AS BIGINT)",
              "CAST(sum(" + narrowArgument + ") AS BIGINT)", DataTypes.LongType));
        }
        if (type instanceof DecimalType decimal) {
          // DuckDB sums decimals in 128 bits whatever their type; the narrow argument has Spark's scale or more.
          DecimalType result = DataTypes.createDecimalType(Math.min(38, decimal.precision() + 10), decimal.scale());
          String cast = " AS " + ExpressionSql.duckType(result) + ")";
          return Optional.of(new Aggregate("CAST(sum(" + argument + ")" + cast,
              "CAST(sum(" + narrowArgument + ")" + cast, result));
        }
        return Optional.empty();
      }
      default -> {
        return Optional.empty();
      }
    }
  }

  private Optional<Aggregate> minMax(String function, Expression expression) {
    Optional<ExpressionSql.Typed> value = ExpressionSql.valueOf(expression, types);
    if (value.isEmpty()) {
      return Optional.empty();
    }
    DataType type = value.get().type();
    // Floating point MIN/MAX would be exact too, but Spark and DuckDB order NaN and -0.0 in their own ways.
    boolean exact = ExpressionSql.comparable(type) && !(type instanceof FloatType) && !(type instanceof DoubleType)
        || type instanceof BinaryType || type instanceof BooleanType;
    if (!exact) {
      return Optional.empty();
    }
    String narrow = function + "(" + value.get().narrow() + ")";
    return Optional.of(new Aggregate(function + "(" + value.get().sql() + ")",
        value.get().narrow().equals(value.get().sql()) ? narrow
            : "CAST(" + narrow + " AS " + ExpressionSql.duckType(type) + ")", type));
  }

  @Override
  public boolean pushLimit(int value) {
    if (!conf.pushDownLimit()) {
      return false;
    }
    limit = OptionalInt.of(value);
    return true;
  }

  /**
   * Spark still applies the limit (or top-N) itself: each partition's stream is limited, not the scan as a whole,
   * and with one partition the extra operator over at most {@code n} rows costs nothing.
   */
  @Override
  public boolean isPartiallyPushed() {
    return true;
  }

  @Override
  public boolean pushTopN(SortOrder[] orders, int value) {
    if (!conf.pushDownLimit()) {
      return false;
    }
    List<String> sql = new ArrayList<>();
    for (SortOrder order : orders) {
      Optional<String> translated;
      if (aggregateSelect != null) {
        // Over a pushed aggregate Spark names a sort key by the expression it computes (a group key or an
        // aggregate function); the server sorts by the output column that holds it.
        String output = aggregateOutputs.get(order.expression().toString());
        translated = output == null ? Optional.empty() : ExpressionSql.sortOrder(
            new OutputSortOrder(org.apache.spark.sql.connector.expressions.Expressions.column(output), order),
            aggregateTypes);
      } else {
        translated = ExpressionSql.sortOrder(order, types);
      }
      if (translated.isEmpty()) {
        return false;
      }
      sql.add(translated.get());
    }
    orderBy = sql;
    limit = OptionalInt.of(value);
    return true;
  }

  /** {@code order}'s direction and null placement over another expression. */
  private record OutputSortOrder(Expression expression, SortOrder order) implements SortOrder {
    @Override
    public org.apache.spark.sql.connector.expressions.SortDirection direction() {
      return order.direction();
    }

    @Override
    public org.apache.spark.sql.connector.expressions.NullOrdering nullOrdering() {
      return order.nullOrdering();
    }
  }

  @Override
  public Scan build() {
    List<String> select;
    StructType schema;
    if (aggregateSelect != null) {
      select = aggregateSelect;
      schema = aggregateSchema;
    } else {
      select = new ArrayList<>();
      List<StructField> fields = new ArrayList<>();
      for (StructField field : required.fields()) {
        // Whole columns even where Spark pruned inside a struct: the server sends whole columns.
        select.add(Sql.identifier(field.name()));
        fields.add(DataTypes.createStructField(field.name(), types.get(field.name()), true));
      }
      schema = new StructType(fields.toArray(StructField[]::new));
    }
    ScanQuery query = new ScanQuery(conf.baseSql(), columns, List.copyOf(select), List.copyOf(filters), groupBy,
        orderBy, limit, schema, aggregateSelect == null ? null : aggregateNarrowSelect,
        aggregateSelect == null ? null : narrowGroupBy, conf.driving().orElse(null));
    // EXPLAIN shows the filters as the SQL they became (a date as DATE '1998-09-02', not Spark's day number).
    return new ThallusScan(conf, query, List.copyOf(filters), Optional.ofNullable(aggregateDescription),
        Optional.ofNullable(joinDescription));
  }
}
