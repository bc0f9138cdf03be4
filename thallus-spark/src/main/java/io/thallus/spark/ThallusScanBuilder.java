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
import org.apache.spark.sql.connector.expressions.aggregate.Count;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.expressions.aggregate.Max;
import org.apache.spark.sql.connector.expressions.aggregate.Min;
import org.apache.spark.sql.connector.expressions.aggregate.Sum;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
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
 * SUM of integers (as BIGINT: an overflow fails, as in Spark's ANSI mode) and of decimals (as DECIMAL(p+10)).
 * SUM and AVG of floating point depend on the order of addition and stay in Spark; so do DISTINCT aggregates.
 */
final class ThallusScanBuilder implements SupportsPushDownV2Filters, SupportsPushDownRequiredColumns,
    SupportsPushDownAggregates, SupportsPushDownLimit, SupportsPushDownTopN {

  private final ReadConf conf;
  private final List<TypeMapping.Column> columns;
  private final Map<String, DataType> types = new LinkedHashMap<>();
  private StructType required;
  private Predicate[] pushedPredicates = new Predicate[0];
  private final List<String> filters = new ArrayList<>();
  private List<String> aggregateSelect;
  private List<String> groupBy = List.of();
  private StructType aggregateSchema;
  private String aggregateDescription;
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

  /** With one stream the server's aggregate is final; with several each gives a partial one Spark merges. */
  @Override
  public boolean supportCompletePushDown(Aggregation aggregation) {
    return conf.partitions() == 1;
  }

  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    if (!conf.pushDownAggregate()) {
      return false;
    }
    List<String> select = new ArrayList<>();
    List<String> groups = new ArrayList<>();
    List<StructField> fields = new ArrayList<>();
    for (Expression expression : aggregation.groupByExpressions()) {
      Optional<String> name = ExpressionSql.columnName(expression, types);
      if (name.isEmpty()) {
        return false;
      }
      groups.add(Sql.identifier(name.get()));
      select.add(Sql.identifier(name.get()));
      fields.add(DataTypes.createStructField(name.get(), types.get(name.get()), true));
    }
    int index = 0;
    for (AggregateFunc function : aggregation.aggregateExpressions()) {
      String alias = "thallus_agg_" + index++;
      Optional<Aggregate> aggregate = aggregate(function);
      if (aggregate.isEmpty()) {
        return false;
      }
      select.add(aggregate.get().sql() + " AS " + alias);
      fields.add(DataTypes.createStructField(alias, aggregate.get().type(), true));
    }
    aggregateSelect = select;
    groupBy = groups;
    aggregateSchema = new StructType(fields.toArray(StructField[]::new));
    aggregateDescription = String.join(", ", select) + (groups.isEmpty() ? "" : " GROUP BY " + String.join(", ", groups));
    return true;
  }

  private record Aggregate(String sql, DataType type) {}

  private Optional<Aggregate> aggregate(AggregateFunc function) {
    switch (function) {
      case CountStar c -> {
        return Optional.of(new Aggregate("count(*)", DataTypes.LongType));
      }
      case Count c when !c.isDistinct() -> {
        return ExpressionSql.columnName(c.column(), types)
            .map(name -> new Aggregate("count(" + Sql.identifier(name) + ")", DataTypes.LongType));
      }
      case Min m -> {
        return minMax("min", m.column());
      }
      case Max m -> {
        return minMax("max", m.column());
      }
      case Sum s when !s.isDistinct() -> {
        Optional<String> name = ExpressionSql.columnName(s.column(), types);
        if (name.isEmpty()) {
          return Optional.empty();
        }
        DataType type = types.get(name.get());
        String column = Sql.identifier(name.get());
        if (type instanceof ByteType || type instanceof ShortType || type instanceof IntegerType
            || type instanceof LongType) {
          return Optional.of(new Aggregate("CAST(sum(" + column + ") AS BIGINT)", DataTypes.LongType));
        }
        if (type instanceof DecimalType decimal) {
          int precision = Math.min(38, decimal.precision() + 10);
          return Optional.of(new Aggregate("CAST(sum(" + column + ") AS DECIMAL(" + precision + ","
              + decimal.scale() + "))", DataTypes.createDecimalType(precision, decimal.scale())));
        }
        return Optional.empty();
      }
      default -> {
        return Optional.empty();
      }
    }
  }

  private Optional<Aggregate> minMax(String function, Expression expression) {
    Optional<String> name = ExpressionSql.columnName(expression, types);
    if (name.isEmpty()) {
      return Optional.empty();
    }
    DataType type = types.get(name.get());
    // Floating point MIN/MAX would be exact too, but Spark and DuckDB order NaN and -0.0 in their own ways.
    boolean exact = ExpressionSql.comparable(type) && !(type instanceof FloatType) && !(type instanceof DoubleType)
        || type instanceof BinaryType || type instanceof BooleanType;
    if (!exact) {
      return Optional.empty();
    }
    return Optional.of(new Aggregate(function + "(" + Sql.identifier(name.get()) + ")", type));
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
    if (!conf.pushDownLimit() || aggregateSelect != null) {
      return false;
    }
    List<String> sql = new ArrayList<>();
    for (SortOrder order : orders) {
      Optional<String> translated = ExpressionSql.sortOrder(order, types);
      if (translated.isEmpty()) {
        return false;
      }
      sql.add(translated.get());
    }
    orderBy = sql;
    limit = OptionalInt.of(value);
    return true;
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
        orderBy, limit, schema);
    List<String> pushed = new ArrayList<>();
    for (Predicate predicate : pushedPredicates) {
      pushed.add(predicate.toString());
    }
    return new ThallusScan(conf, query, pushed, Optional.ofNullable(aggregateDescription));
  }
}
