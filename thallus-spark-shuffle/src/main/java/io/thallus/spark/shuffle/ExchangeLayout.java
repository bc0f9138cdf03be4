package io.thallus.spark.shuffle;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import scala.collection.immutable.Seq;

/**
 * What map and reduce tasks must agree on about one exchange: the rows' columns, how a row finds its reduce
 * partition, and how batches are cut and compressed. It travels to executors inside the shuffle dependency.
 */
final class ExchangeLayout implements Serializable {
  private static final long serialVersionUID = 1L;
  /** Timestamps cross as microseconds since the epoch; the zone only labels the Arrow type, on both sides. */
  private static final String ARROW_TIME_ZONE = "UTC";

  private final StructType schema;
  private final Seq<Attribute> input;
  private final Expression partitionId;
  private final int partitions;
  private final boolean columnarInput;
  private final FrameCodec codec;
  private final int batchRows;

  /**
   * @param partitionId Spark's own partition id expression of the exchange's partitioning (for hash partitioning
   *     {@code pmod(murmur3hash(keys, 42), n)}, so ids equal those of Spark's exchange), or null for one partition
   */
  ExchangeLayout(Seq<Attribute> input, Expression partitionId, int partitions, boolean columnarInput,
      FrameCodec codec, int batchRows) {
    List<StructField> fields = new ArrayList<>();
    scala.jdk.javaapi.CollectionConverters.asJava(input).forEach(attribute -> fields.add(
        // Positional names: a join's output may repeat a name, which an Arrow schema from Spark refuses.
        new StructField("c" + fields.size(), attribute.dataType(), true, Metadata.empty())));
    this.schema = new StructType(fields.toArray(StructField[]::new));
    this.input = input;
    this.partitionId = partitionId;
    this.partitions = partitions;
    this.columnarInput = columnarInput;
    this.codec = codec;
    this.batchRows = batchRows;
  }

  /** The Arrow schema of the batches: Spark's mapping, but compact decimals as int64 ({@link CompactDecimals}). */
  Schema arrowSchema() {
    StructField[] fields = schema.fields().clone();
    for (int i = 0; i < fields.length; i++) {
      if (fields[i].dataType() instanceof DecimalType decimal && CompactDecimals.compact(decimal)) {
        fields[i] = new StructField(fields[i].name(), DataTypes.LongType, true, Metadata.empty());
      }
    }
    return ArrowUtils.toArrowSchema(new StructType(fields), ARROW_TIME_ZONE, false, false);
  }

  /** Spark's column vectors over {@code root}'s vectors. */
  ColumnVector[] columns(VectorSchemaRoot root) {
    ColumnVector[] columns = new ColumnVector[schema.fields().length];
    for (int i = 0; i < columns.length; i++) {
      FieldVector vector = root.getVector(i);
      columns[i] = schema.fields()[i].dataType() instanceof DecimalType decimal && CompactDecimals.compact(decimal)
          ? new CompactDecimals.Vector((BigIntVector) vector, decimal)
          : new ArrowColumnVector(vector);
    }
    return columns;
  }

  DataType[] types() {
    DataType[] types = new DataType[schema.fields().length];
    for (int i = 0; i < types.length; i++) {
      types[i] = schema.fields()[i].dataType();
    }
    return types;
  }

  /**
   * How one map task finds each row's reduce partition: Spark's Murmur3 pmod computed directly where the keys are
   * input columns ({@link Murmur3PartitionIds}), else Spark's generated projection of the expression.
   */
  RowPartitionIds partitionIds(int taskPartition) {
    if (partitionId == null) {
      return RowPartitionIds.single();
    }
    Murmur3PartitionIds direct = Murmur3PartitionIds.of(partitionId,
        scala.jdk.javaapi.CollectionConverters.asJava(input));
    if (direct != null) {
      return direct;
    }
    UnsafeProjection projection = UnsafeProjection$.MODULE$.create(
        scala.jdk.javaapi.CollectionConverters.asScala(List.of(partitionId)).toList(), input);
    projection.initialize(taskPartition);
    return RowPartitionIds.projected(projection);
  }

  int partitions() {
    return partitions;
  }

  boolean columnarInput() {
    return columnarInput;
  }

  FrameCodec codec() {
    return codec;
  }

  int batchRows() {
    return batchRows;
  }
}
