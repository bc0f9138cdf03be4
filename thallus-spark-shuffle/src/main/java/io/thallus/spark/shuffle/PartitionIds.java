package io.thallus.spark.shuffle;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.RangePartitioner;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.CreateStruct;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection$;
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering;
import org.apache.spark.sql.catalyst.expressions.objects.Invoke;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.RangePartitioning;
import org.apache.spark.sql.catalyst.plans.physical.SinglePartition$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.ObjectType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.MutablePair;
import scala.Product2;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

/**
 * How a row of the exchange finds its reduce partition: an expression over the exchange's input that gives the id,
 * evaluated on each row by the map task, and equal to the id Spark's own exchange gives the row.
 *
 * <ul>
 *   <li>Hash partitioning: Spark's {@code partitionIdExpression}, {@code pmod(murmur3hash(keys, 42), n)}.
 *   <li>Range partitioning ({@code ORDER BY}): Spark's {@link RangePartitioner}, made as Spark's exchange makes it:
 *       its bounds come from a sampling job over the sort keys of the input (run here, on the driver, when the
 *       shuffle's dependency is made), with Spark's sample size and Spark's ordering of the keys; the id is the
 *       partitioner's {@code getPartition} of the row's sort keys. The same input gives the same sample (Spark
 *       seeds it by partition) and so the same bounds and ids.
 *   <li>A single partition: null (every row goes to partition 0).
 * </ul>
 */
final class PartitionIds {
  private PartitionIds() {}

  /** Whether {@link #of} can give ids for {@code partitioning} (exactly Spark's classes: subclasses carry rules). */
  static boolean supports(Partitioning partitioning) {
    return partitioning.getClass() == HashPartitioning.class || partitioning.getClass() == RangePartitioning.class
        || partitioning == SinglePartition$.MODULE$;
  }

  /**
   * The partition id expression of {@code partitioning} over {@code output}, or null for a single partition.
   *
   * @param input the exchange's input (rows, or batches where {@code columnarInput}), sampled for range bounds
   */
  static Expression of(Partitioning partitioning, RDD<?> input, boolean columnarInput, Seq<Attribute> output) {
    if (partitioning instanceof HashPartitioning hash && hash.getClass() == HashPartitioning.class) {
      return hash.partitionIdExpression();
    }
    if (partitioning instanceof RangePartitioning range && range.getClass() == RangePartitioning.class) {
      return rangePartitionId(range, input, columnarInput, output);
    }
    if (partitioning == SinglePartition$.MODULE$) {
      return null;
    }
    throw new IllegalArgumentException("The Thallus exchange does not take " + partitioning);
  }

  private static Expression rangePartitionId(RangePartitioning range, RDD<?> input, boolean columnarInput,
      Seq<Attribute> output) {
    List<SortOrder> orders = CollectionConverters.asJava(range.ordering());
    List<Expression> keys = new ArrayList<>();
    List<SortOrder> keyOrdering = new ArrayList<>();
    for (SortOrder order : orders) {
      Expression key = order.child();
      // The ordering of the key row, as Spark's exchange orders it: each sort key bound to its place in the row.
      keyOrdering.add(new SortOrder(new BoundReference(keys.size(), key.dataType(), key.nullable()),
          order.direction(), order.nullOrdering(), order.sameOrderExpressions()));
      keys.add(key);
    }
    Seq<Expression> keySeq = CollectionConverters.asScala(keys).toList();
    @SuppressWarnings({"unchecked", "rawtypes"})
    RDD<Product2<InternalRow, Object>> sample = (RDD) ((RDD<Object>) input).mapPartitionsInternal(
        new SortKeys(keySeq, output, columnarInput), false, ClassTag$.MODULE$.apply(Product2.class));
    RangePartitioner<InternalRow, Object> partitioner = new RangePartitioner<>(range.numPartitions(), sample, true,
        SQLConf.get().rangeExchangeSampleSizePerPartition(),
        new LazilyGeneratedOrdering(CollectionConverters.asScala(keyOrdering).toList()),
        ClassTag$.MODULE$.apply(InternalRow.class));
    // partitioner.getPartition(struct(keys...)): the partitioner travels in the expression, as a literal object.
    return new Invoke(new Literal(partitioner, new ObjectType(RangePartitioner.class)), "getPartition",
        DataTypes.IntegerType,
        CollectionConverters.asScala(List.<Expression>of(CreateStruct.apply(keySeq))).toList(),
        CollectionConverters.asScala(List.<org.apache.spark.sql.types.AbstractDataType>of()).toList(), false, false,
        true);
  }

  /** Each input row's sort keys (copied: the sampler keeps them), as the key of a pair, as Spark's sample takes. */
  private static final class SortKeys
      extends AbstractFunction1<Iterator<Object>, Iterator<Product2<InternalRow, Object>>> implements Serializable {
    private static final long serialVersionUID = 1L;
    private final Seq<Expression> keys;
    private final Seq<Attribute> output;
    private final boolean columnarInput;

    SortKeys(Seq<Expression> keys, Seq<Attribute> output, boolean columnarInput) {
      this.keys = keys;
      this.output = output;
      this.columnarInput = columnarInput;
    }

    @Override
    public Iterator<Product2<InternalRow, Object>> apply(Iterator<Object> input) {
      UnsafeProjection projection = UnsafeProjection$.MODULE$.create(keys, output);
      MutablePair<InternalRow, Object> pair = new MutablePair<>();
      Iterator<InternalRow> rows = columnarInput
          ? input.flatMap(batch -> CollectionConverters.asScala(((ColumnarBatch) batch).rowIterator()))
          : input.map(row -> (InternalRow) row);
      return rows.map(row -> pair.update(projection.apply(row).copy(), null));
    }
  }
}
