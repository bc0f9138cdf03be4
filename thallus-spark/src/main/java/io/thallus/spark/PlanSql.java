package io.thallus.spark;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.Cross$;
import org.apache.spark.sql.catalyst.plans.ExistenceJoin;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.GlobalLimit;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LocalLimit;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.catalyst.plans.logical.Union;
import org.apache.spark.sql.catalyst.plans.logical.Window;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import org.apache.spark.sql.types.StructField;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A subtree of Spark's optimized logical plan as one DuckDB query, when every leaf is a Thallus scan of the same
 * server with the same connection options. Tables and views of the server's database are named in the SQL; each
 * dataset of files is bound under a view of its own ({@link JoinSources#viewName}) that its leaf reads as {@code
 * dataset}; a DuckDB database file can only be the request's dataset, so it joins only leaves of that file. Each
 * operator becomes a SELECT over its children's SELECTs; every column is named by its attribute's name and
 * expression id ({@code "l_orderkey#16"}), so names never clash and the query's columns are the subtree's output
 * attributes, in order. Joins of every kind Spark's optimizer leaves (inner, cross, outer, semi and anti as [NOT]
 * EXISTS, existence joins as an EXISTS column), aggregates, projections, filters, sorts (NULLS FIRST/LAST always
 * spelled out, as Spark ordered them), limits, UNION ALL, window functions ({@link PlanWindows}) and uncorrelated
 * scalar subqueries are written; anything else refuses the subtree ({@link PlanRefused}).
 */
final class PlanSql implements PlanExpressions.Subqueries {
  /** One translated subtree: its SQL, the connection every leaf shares, and a leaf to take the table from. */
  record Pushed(String sql, ReadConf conf, DataSourceV2ScanRelation leaf, boolean worthPushing) {}

  private final PlanExpressions expressions = new PlanExpressions(this);
  private ReadConf server;
  /** The datasets of files the request binds, by view name ({@link JoinSources#viewName}). */
  private final Map<String, String> named = new LinkedHashMap<>();
  /** A DuckDB database file some leaf reads as its dataset: then the request's dataset, for every leaf. */
  private String databaseFile;
  private boolean readsBesideDatabaseFile;
  private DataSourceV2ScanRelation firstLeaf;
  private int aliases;
  /** Whether the subtree does more than a single scan's own pushdown can (join, aggregate over a join, sort...). */
  private boolean worthPushing;

  private PlanSql() {}

  /** {@code plan} as one query, or {@link PlanRefused} saying why it cannot be. */
  static Pushed translate(LogicalPlan plan) {
    PlanSql translator = new PlanSql();
    String sql = translator.query(plan);
    Set<Long> seen = new HashSet<>();
    for (Attribute attribute : CollectionConverters.asJava(plan.output())) {
      if (!seen.add(attribute.exprId().id())) {
        throw new PlanRefused("the output holds " + attribute + " twice");
      }
    }
    if (translator.databaseFile != null && translator.readsBesideDatabaseFile) {
      throw new PlanRefused("a DuckDB database file is the request's dataset: other leaves cannot join it");
    }
    return new Pushed(sql, translator.server.withJoin(sql, translator.databaseFile, translator.named, null),
        translator.firstLeaf, translator.worthPushing);
  }

  @Override
  public String scalar(LogicalPlan plan) {
    if (plan.output().size() != 1) {
      throw new PlanRefused("scalar subquery of " + plan.output().size() + " columns");
    }
    worthPushing = true;
    return "(SELECT " + PlanExpressions.column(plan.output().head()) + " FROM (\n" + query(plan) + "\n) AS "
        + alias() + ")";
  }

  private String alias() {
    return "t" + aliases++;
  }

  /** A SELECT statement whose columns are {@code plan}'s output attributes. */
  private String query(LogicalPlan plan) {
    if (!plan.missingInput().isEmpty()) {
      throw new PlanRefused(plan.nodeName() + " refers to attributes outside it: " + plan.missingInput());
    }
    return switch (plan) {
      case DataSourceV2ScanRelation scan -> leaf(scan);
      case Project project when project.child() instanceof Sort sort -> {
        worthPushing = true;
        yield select(project.projectList()) + " FROM (\n" + query(sort.child()) + "\n) AS " + alias()
            + orderBy(sort);
      }
      case Project project -> select(project.projectList()) + " FROM (\n" + query(project.child()) + "\n) AS "
          + alias();
      case Filter filter -> "SELECT * FROM (\n" + query(filter.child()) + "\n) AS " + alias() + " WHERE "
          + expressions.sql(filter.condition());
      case Join join -> join(join);
      case Aggregate aggregate -> aggregate(aggregate);
      case Sort sort -> {
        worthPushing = true;
        yield "SELECT * FROM (\n" + query(sort.child()) + "\n) AS " + alias() + orderBy(sort);
      }
      case GlobalLimit limit -> limit(limit);
      case Union union -> union(union);
      case Window window -> window(window);
      default -> throw new PlanRefused("operator " + plan.nodeName() + " has no DuckDB translation");
    };
  }

  private String leaf(DataSourceV2ScanRelation relation) {
    if (!(relation.scan() instanceof ThallusScan scan)) {
      throw new PlanRefused("a leaf is not a Thallus scan: " + relation.scan().description());
    }
    ReadConf conf = scan.conf();
    if (conf.sharded().isPresent()) {
      throw new PlanRefused("a leaf reads a sharded dataset: its parts are on several servers");
    }
    if (server == null) {
      server = conf;
      firstLeaf = relation;
    } else if (!sameConnection(server, conf)) {
      throw new PlanRefused("the leaves read different servers or with different connection options");
    }
    conf.namedDatasets().forEach(this::bind);
    String sql = scan.sql();
    String path = conf.datasetPath();
    if (path != null && JoinSources.isDatabaseFile(path)) {
      if (databaseFile != null && !databaseFile.equals(path)) {
        throw new PlanRefused("the leaves read two DuckDB database files");
      }
      databaseFile = path;
    } else {
      readsBesideDatabaseFile = true;
      if (path != null) {
        // Files: bound under a view of their own, which this leaf's SQL reads as 'dataset'.
        String view = JoinSources.viewName(path);
        bind(view, path);
        sql = "WITH dataset AS (SELECT * FROM " + Sql.identifier(view) + ")\nSELECT * FROM (\n" + sql
            + "\n) AS thallus_query";
      }
    }
    StructField[] fields = scan.readSchema().fields();
    List<? extends Attribute> output = CollectionConverters.asJava(relation.output());
    if (fields.length != output.size()) {
      throw new PlanRefused("a scan's columns do not match its relation's");
    }
    List<String> select = new ArrayList<>();
    for (int i = 0; i < fields.length; i++) {
      select.add(Sql.identifier(fields[i].name()) + " AS " + PlanExpressions.column(output.get(i)));
    }
    return "SELECT " + (select.isEmpty() ? "TRUE AS thallus_no_columns" : String.join(", ", select)) + " FROM (\n"
        + sql + "\n) AS " + alias();
  }

  private void bind(String view, String path) {
    String earlier = named.putIfAbsent(view, path);
    if (earlier != null && !earlier.equals(path)) {
      throw new PlanRefused("the dataset name " + view + " stands for two paths");
    }
  }

  /**
   * Whether two leaves' reads can be one request: every option the same (servers, credentials, transport, TLS,
   * batch size, pushdown switches) once their sources, which the query now names, are set aside.
   */
  private static boolean sameConnection(ReadConf a, ReadConf b) {
    return a.withJoin("", null, Map.of(), null).equals(b.withJoin("", null, Map.of(), null));
  }

  private String select(scala.collection.Seq<NamedExpression> list) {
    List<String> items = new ArrayList<>();
    for (NamedExpression item : CollectionConverters.asJava(list)) {
      items.add(expressions.sql((Expression) item) + " AS " + PlanExpressions.column(item.toAttribute()));
    }
    return "SELECT " + (items.isEmpty() ? "TRUE AS thallus_no_columns" : String.join(", ", items));
  }

  private String orderBy(Sort sort) {
    return "\nORDER BY " + expressions.sortKeys(sort.order());
  }

  private String limit(GlobalLimit limit) {
    if (!(limit.child() instanceof LocalLimit local) || !(limit.limitExpr() instanceof Literal global)
        || !(local.limitExpr() instanceof Literal each) || !(global.value() instanceof Integer n)
        || !n.equals(each.value())) {
      throw new PlanRefused("a limit other than LIMIT n");
    }
    worthPushing = true;
    LogicalPlan child = local.child();
    boolean sorted = child instanceof Sort || child instanceof Project p && p.child() instanceof Sort;
    // A sorted child's SELECT ends with its ORDER BY: the limit joins it, so the order holds.
    return (sorted ? query(child) : "SELECT * FROM (\n" + query(child) + "\n) AS " + alias()) + "\nLIMIT " + n;
  }

  private String aggregate(Aggregate aggregate) {
    worthPushing = true;
    List<String> items = new ArrayList<>();
    for (NamedExpression item : CollectionConverters.asJava(aggregate.aggregateExpressions())) {
      items.add(expressions.aggregateResult((Expression) item) + " AS " + PlanExpressions.column(item.toAttribute()));
    }
    List<String> groups = new ArrayList<>();
    for (Expression group : CollectionConverters.asJava(aggregate.groupingExpressions())) {
      if (PlanExpressions.isFloating(group.dataType())) {
        // Spark normalises NaN and -0.0 in grouping keys only when it plans the aggregate physically.
        throw new PlanRefused("grouping by " + group.dataType().simpleString() + ": Spark groups NaN and -0.0 as it "
            + "normalises them");
      }
      groups.add(expressions.sql(group));
    }
    if (items.isEmpty()) {
      throw new PlanRefused("an aggregate with no output");
    }
    return "SELECT " + String.join(", ", items) + " FROM (\n" + query(aggregate.child()) + "\n) AS " + alias()
        + (groups.isEmpty() ? "" : "\nGROUP BY " + String.join(", ", groups));
  }

  private String join(Join join) {
    worthPushing = true;
    JoinType type = join.joinType();
    String left = query(join.left());
    String right = query(join.right());
    String condition = join.condition().isDefined() ? expressions.sql(join.condition().get()) : null;
    String leftAlias = alias();
    String rightAlias = alias();
    String keyword;
    if (type == Inner$.MODULE$ || type == Cross$.MODULE$) {
      keyword = condition == null ? "CROSS JOIN" : "JOIN";
    } else if (type == LeftOuter$.MODULE$) {
      keyword = "LEFT JOIN";
    } else if (type == RightOuter$.MODULE$) {
      keyword = "RIGHT JOIN";
    } else if (type == FullOuter$.MODULE$) {
      keyword = "FULL JOIN";
    } else {
      String exists = "EXISTS (SELECT 1 FROM (\n" + right + "\n) AS " + rightAlias
          + (condition == null ? "" : " WHERE " + condition) + ")";
      String from = " FROM (\n" + left + "\n) AS " + leftAlias;
      if (type == LeftSemi$.MODULE$) {
        return "SELECT *" + from + " WHERE " + exists;
      }
      if (type == LeftAnti$.MODULE$) {
        // Spark writes NOT IN's null awareness into the condition ((a = b) OR (a = b) IS NULL): it holds here too.
        return "SELECT *" + from + " WHERE NOT " + exists;
      }
      if (type instanceof ExistenceJoin existence) {
        return "SELECT *, " + exists + " AS " + PlanExpressions.column(existence.exists()) + from;
      }
      throw new PlanRefused("join type " + type + " has no DuckDB translation");
    }
    return "SELECT * FROM (\n" + left + "\n) AS " + leftAlias + " " + keyword + " (\n" + right + "\n) AS "
        + rightAlias + (keyword.equals("CROSS JOIN") ? "" : " ON " + (condition == null ? "TRUE" : condition));
  }

  /** Spark's window functions as DuckDB's, each with Spark's partitioning, order and frame ({@link PlanWindows}). */
  private String window(Window window) {
    worthPushing = true;
    List<String> items = new ArrayList<>();
    for (NamedExpression item : CollectionConverters.asJava(window.windowExpressions())) {
      Expression e = (Expression) item;
      while (e instanceof org.apache.spark.sql.catalyst.expressions.Alias alias) {
        e = alias.child();
      }
      if (!(e instanceof org.apache.spark.sql.catalyst.expressions.WindowExpression function)) {
        throw new PlanRefused("a window expression that is not one window function: " + e.sql());
      }
      items.add(PlanWindows.sql(function, expressions) + " AS " + PlanExpressions.column(item.toAttribute()));
    }
    return "SELECT *, " + String.join(", ", items) + " FROM (\n" + query(window.child()) + "\n) AS " + alias();
  }

  private String union(Union union) {
    if (union.byName() || union.allowMissingCol()) {
      throw new PlanRefused("UNION BY NAME");
    }
    worthPushing = true;
    List<Attribute> output = CollectionConverters.asJava(union.output());
    List<String> parts = new ArrayList<>();
    for (LogicalPlan child : CollectionConverters.asJava(union.children())) {
      List<Attribute> columns = CollectionConverters.asJava(child.output());
      List<String> select = new ArrayList<>();
      for (int i = 0; i < output.size(); i++) {
        if (!columns.get(i).dataType().equals(output.get(i).dataType())) {
          throw new PlanRefused("UNION of different types");
        }
        select.add(PlanExpressions.column(columns.get(i)) + " AS " + PlanExpressions.column(output.get(i)));
      }
      parts.add("(SELECT " + String.join(", ", select) + " FROM (\n" + query(child) + "\n) AS " + alias() + ")");
    }
    return String.join("\nUNION ALL\n", parts);
  }
}
