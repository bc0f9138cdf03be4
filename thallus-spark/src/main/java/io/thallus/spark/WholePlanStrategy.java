package io.thallus.spark;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.ReturnAnswer;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Plans the largest subtree of the optimized plan whose leaves are all Thallus scans of one server as one scan of one
 * DuckDB query ({@link PlanSql}). Spark asks its strategies top-down, so the first subtree taken is the largest; a
 * subtree refused (see {@link PlanRefused}) is planned by Spark as usual, and its children are offered again. A
 * subtree that is only a scan with projections and filters is left to the scan's own pushdown, which can read in
 * several partitions. Switched off by {@value #ENABLED}{@code =false}.
 */
final class WholePlanStrategy extends SparkStrategy {
  /** The session conf that turns the strategy off (on by default once the extension is installed). */
  static final String ENABLED = "spark.thallus.wholePlan.enabled";
  private static final Logger LOG = LoggerFactory.getLogger(WholePlanStrategy.class);

  @Override
  public Seq<SparkPlan> apply(LogicalPlan plan) {
    if (!Boolean.parseBoolean(SQLConf.get().getConfString(ENABLED, "true"))) {
      return none();
    }
    LogicalPlan target = plan instanceof ReturnAnswer answer ? answer.child() : plan;
    if (target.children().isEmpty()) {
      return none();
    }
    Optional<DataSourceV2ScanRelation> pushed;
    try {
      pushed = replacement(target);
    } catch (PlanRefused refused) {
      LOG.debug("whole-plan pushdown refused for {}: {}", target.nodeName(), refused.getMessage());
      return none();
    }
    if (pushed.isEmpty()) {
      return none();
    }
    return CollectionConverters.asScala(List.of(planLater(pushed.get()))).toList();
  }

  /** Why {@code plan} (an optimized plan) is not pushed whole, or empty if it is. For tests and diagnostics. */
  static Optional<String> refusal(LogicalPlan plan) {
    try {
      return replacement(plan).isPresent() ? Optional.empty() : Optional.of("nothing beyond one scan's pushdown");
    } catch (PlanRefused refused) {
      return Optional.of(refused.getMessage());
    }
  }

  /** One scan relation computing {@code plan}'s output, or empty when the scan's own pushdown already does. */
  static Optional<DataSourceV2ScanRelation> replacement(LogicalPlan plan) {
    PlanSql.Pushed pushed = PlanSql.translate(plan);
    if (!pushed.worthPushing()) {
      return Optional.empty();
    }
    List<AttributeReference> output = new ArrayList<>();
    List<TypeMapping.Column> columns = new ArrayList<>();
    List<String> select = new ArrayList<>();
    List<StructField> fields = new ArrayList<>();
    for (Attribute attribute : CollectionConverters.asJava(plan.output())) {
      if (!(attribute instanceof AttributeReference reference)) {
        throw new PlanRefused("output " + attribute + " is not an attribute reference");
      }
      PlanExpressions.checkType(attribute.dataType(), attribute);
      String name = attribute.name() + "#" + attribute.exprId().id();
      output.add(reference);
      columns.add(new TypeMapping.Column(name, Sql.identifier(name), attribute.dataType()));
      select.add(Sql.identifier(name));
      fields.add(new StructField(name, attribute.dataType(), true, org.apache.spark.sql.types.Metadata.empty()));
    }
    StructType schema = new StructType(fields.toArray(StructField[]::new));
    ScanQuery query = new ScanQuery(pushed.sql(), columns, select, List.of(), List.of(), List.of(),
        OptionalInt.empty(), schema);
    ThallusScan scan = new ThallusScan(pushed.conf(), query, List.of(), Optional.empty(), Optional.empty());
    PlanScan whole = new PlanScan(scan, operators(plan));
    DataSourceV2ScanRelation leaf = pushed.leaf();
    return Optional.of(new DataSourceV2ScanRelation(leaf.relation(), whole,
        CollectionConverters.asScala(output).toList(), Option.empty(), Option.empty(),
        CollectionConverters.asScala(List.<org.apache.spark.sql.catalyst.expressions.Expression>of()).toList()));
  }

  /** The kinds of operator the query replaces, for EXPLAIN. */
  private static String operators(LogicalPlan plan) {
    Set<String> names = new LinkedHashSet<>();
    collect(plan, names);
    return String.join(", ", names);
  }

  private static void collect(LogicalPlan plan, Set<String> names) {
    names.add(plan.nodeName());
    for (LogicalPlan child : CollectionConverters.asJava(plan.children())) {
      collect(child, names);
    }
  }

  private static Seq<SparkPlan> none() {
    return CollectionConverters.asScala(List.<SparkPlan>of()).toList();
  }
}
