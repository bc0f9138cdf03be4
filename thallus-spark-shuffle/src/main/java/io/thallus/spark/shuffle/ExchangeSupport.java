package io.thallus.spark.shuffle;

import org.apache.spark.SparkEnv;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/** Which of Spark's exchanges the Thallus exchange takes; Spark keeps the others, and says nothing is lost. */
final class ExchangeSupport {
  private ExchangeSupport() {}

  static boolean takes(ShuffleExchangeExec exchange) {
    return SparkEnv.get() != null && SparkEnv.get().shuffleManager() instanceof ThallusShuffleManager
        && partitioning(exchange.outputPartitioning())
        && columns(exchange.child().output());
  }

  /**
   * Hash and range partitioning (exactly Spark's classes: subclasses and key-grouped partitionings carry other
   * rules) and a single partition, whose ids {@link PartitionIds} gives as Spark does. Round-robin stays with
   * Spark: its ids depend on a sort that Spark's exchange makes itself.
   */
  static boolean partitioning(Partitioning partitioning) {
    return PartitionIds.supports(partitioning);
  }

  static boolean columns(scala.collection.immutable.Seq<Attribute> output) {
    if (output.isEmpty()) {
      // A batch of no columns carries only a count; Spark's exchange moves such rows as well.
      return false;
    }
    return output.forall(attribute -> type(attribute.dataType()));
  }

  /** The flat types that Arrow and Spark's ArrowColumnVector carry exactly; nested types and intervals stay. */
  static boolean type(DataType type) {
    return type instanceof BooleanType || type instanceof ByteType || type instanceof ShortType
        || type instanceof IntegerType || type instanceof LongType || type instanceof FloatType
        || type instanceof DoubleType || type instanceof DecimalType || type instanceof DateType
        || type instanceof TimestampType || type instanceof TimestampNTZType || type instanceof BinaryType
        // Strings of Spark's default collation only: a collated string's type would not survive the trip.
        || DataTypes.StringType.equals(type);
  }
}
