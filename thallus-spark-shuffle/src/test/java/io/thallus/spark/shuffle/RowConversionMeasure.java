package io.thallus.spark.shuffle;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection$;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.execution.arrow.ArrowFieldWriter;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.execution.arrow.ArrowWriter$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A micro-measure (not a test: run with {@code -Dthallus.measure=true}) of the map side's conversion, ns per row:
 * partition id and rows into per-partition Arrow batches, the batches handed to a sink that drops them (no encoding).
 * "before" is the path this replaced (Spark's generated Murmur3 projection per row, Spark's ArrowWriter with
 * setSafe per value); "after" is ours; the others split the difference and try an alternative.
 */
@EnabledIfSystemProperty(named = "thallus.measure", matches = "true")
class RowConversionMeasure {
  private static final int PARTITIONS = 200;
  private static final int BATCH_ROWS = 8192;

  @Test
  void measure() throws Exception {
    int rows = Integer.getInteger("thallus.measure.rows", 2_000_000);
    report(rows, "synthetic (long, long; key long)", syntheticRows(rows), new DataType[] {
        DataTypes.LongType, DataTypes.LongType}, new int[] {0});
    report(rows, "lineitem-like (long, int, dec(12,2) x2, date, string; key long)", lineitemRows(rows), new DataType[] {
        DataTypes.LongType, DataTypes.IntegerType, DataTypes.createDecimalType(12, 2),
        DataTypes.createDecimalType(12, 2), DataTypes.DateType, DataTypes.StringType}, new int[] {0});
  }

  private void report(int count, String workload, Iterable<InternalRow> rows, DataType[] types, int[] keys) throws Exception {
    StructType schema = WriterRows.schema(types);
    Seq<Attribute> input = WriterRows.attributes(schema);
    List<Expression> keyColumns = new ArrayList<>();
    for (int key : keys) {
      keyColumns.add(input.apply(key));
    }
    Expression partitionId = new HashPartitioning(CollectionConverters.asScala(keyColumns).toList(), PARTITIONS)
        .partitionIdExpression();
    ExchangeLayout layout = new ExchangeLayout(input, partitionId, PARTITIONS, false, FrameCodec.LZ4, BATCH_ROWS);
    String[] modes = {"before: Spark projection + ArrowWriter", "Spark projection + our writers",
        "after: our Murmur3 + our writers", "alternative: rows to one staging batch, then scattered"};
    double[][] nanos = new double[modes.length][];
    for (int m = 0; m < modes.length; m++) {
      nanos[m] = new double[7];
    }
    // Alternate the modes round by round, starting each round with the next one, so that a change in the machine's
    // load (and whatever one mode leaves behind for the next, garbage or code) hits them alike.
    for (int round = 0; round < 7; round++) {
      for (int step = 0; step < modes.length; step++) {
        int m = (round + step) % modes.length;
        nanos[m][round] = (double) run(m, rows, layout, schema, partitionId, input) / count;
      }
    }
    System.out.printf("%n%s, %d rows, %d partitions, batches of %d%n", workload, count, PARTITIONS, BATCH_ROWS);
    for (int m = 0; m < modes.length; m++) {
      double[] measured = Arrays.copyOfRange(nanos[m], 2, 7); // the first two rounds warm up
      Arrays.sort(measured);
      System.out.printf("  %-58s %7.1f ns/row (min %.1f)%n", modes[m], measured[2], measured[0]);
    }
  }

  private long run(int mode, Iterable<InternalRow> rows, ExchangeLayout layout, StructType schema, Expression partitionId,
      Seq<Attribute> input) throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      long started = System.nanoTime();
      switch (mode) {
        case 0 -> before(rows, layout, schema, partitionId, input, allocator);
        case 1 -> ours(rows, layout, RowPartitionIds.projected(projection(partitionId, input)), allocator, false);
        case 2 -> ours(rows, layout, layout.partitionIds(0), allocator, false);
        default -> ours(rows, layout, layout.partitionIds(0), allocator, true);
      }
      return System.nanoTime() - started;
    }
  }

  private static UnsafeProjection projection(Expression partitionId, Seq<Attribute> input) {
    UnsafeProjection projection = UnsafeProjection$.MODULE$.create(
        CollectionConverters.asScala(List.of(partitionId)).toList(), input);
    projection.initialize(0);
    return projection;
  }

  private static void ours(Iterable<InternalRow> rows, ExchangeLayout layout, RowPartitionIds ids,
      BufferAllocator allocator, boolean staged) throws Exception {
    try (PartitionedBatchBuilder builder = new PartitionedBatchBuilder(layout, ids, allocator, new DroppingSink())) {
      if (!staged) {
        for (InternalRow row : rows) {
          builder.append(row);
        }
      } else {
        try (PartitionBatch staging = new PartitionBatch(layout.arrowSchema(), layout.types(), allocator, 4096)) {
          for (InternalRow row : rows) {
            if (staging.append(row) == 4096) {
              VectorSchemaRoot root = staging.finish();
              builder.append(new ColumnarBatch(layout.columns(root), root.getRowCount()));
              staging.reset();
            }
          }
        }
      }
      builder.finish();
    }
  }

  /** The replaced path, as it was: Spark's projection for the id, Spark's ArrowWriter per partition. */
  private static void before(Iterable<InternalRow> rows, ExchangeLayout layout, StructType schema, Expression partitionId,
      Seq<Attribute> input, BufferAllocator allocator) {
    UnsafeProjection ids = projection(partitionId, input);
    Schema arrow = layout.arrowSchema();
    VectorSchemaRoot[] roots = new VectorSchemaRoot[PARTITIONS];
    ArrowWriter[] writers = new ArrowWriter[PARTITIONS];
    int[] counts = new int[PARTITIONS];
    try {
      for (InternalRow row : rows) {
        int p = ids.apply(row).getInt(0);
        if (writers[p] == null) {
          roots[p] = VectorSchemaRoot.create(arrow, allocator);
          writers[p] = sparkWriter(roots[p], schema);
        }
        writers[p].write(row);
        if (++counts[p] == BATCH_ROWS) {
          writers[p].finish();
          writers[p].reset();
          counts[p] = 0;
        }
      }
      for (int p = 0; p < PARTITIONS; p++) {
        if (writers[p] != null) {
          writers[p].finish();
        }
      }
    } finally {
      for (VectorSchemaRoot root : roots) {
        if (root != null) {
          root.close();
        }
      }
    }
  }

  private static ArrowWriter sparkWriter(VectorSchemaRoot root, StructType schema) {
    ArrowFieldWriter[] writers = new ArrowFieldWriter[schema.fields().length];
    for (int i = 0; i < writers.length; i++) {
      FieldVector vector = root.getVector(i);
      vector.allocateNew();
      writers[i] = schema.fields()[i].dataType() instanceof DecimalType decimal && CompactDecimals.compact(decimal)
          ? new OldCompactDecimalWriter((BigIntVector) vector, decimal)
          : ArrowWriter$.MODULE$.createFieldWriter(vector);
    }
    return new ArrowWriter(root, writers);
  }

  /** The compact-decimal writer the old path had (setSafe of the unscaled long). */
  private static final class OldCompactDecimalWriter extends ArrowFieldWriter {
    private final BigIntVector vector;
    private final int precision;
    private final int scale;

    OldCompactDecimalWriter(BigIntVector vector, DecimalType type) {
      this.vector = vector;
      this.precision = type.precision();
      this.scale = type.scale();
    }

    @Override
    public ValueVector valueVector() {
      return vector;
    }

    @Override
    public void setNull() {
      vector.setNull(count());
    }

    @Override
    public void setValue(SpecializedGetters input, int ordinal) {
      vector.setSafe(count(), input.getDecimal(ordinal, precision, scale).toUnscaledLong());
    }
  }

  /** One UnsafeRow, refilled for each row, as Spark's generated code hands rows on (range, project). */
  private static Iterable<InternalRow> syntheticRows(int count) {
    return () -> new java.util.Iterator<>() {
      private final UnsafeRow row = new UnsafeRow(2);
      private long id;

      {
        row.pointTo(new byte[24], 24);
      }

      @Override
      public boolean hasNext() {
        return id < count;
      }

      @Override
      public InternalRow next() {
        row.setLong(0, id * 7 + 3);
        row.setLong(1, id % 1000);
        id++;
        return row;
      }
    };
  }

  /** 4096 distinct rows, cycled {@code count} times over (an upstream operator's rows are hot in cache). */
  private static Iterable<InternalRow> lineitemRows(int count) {
    List<InternalRow> pool = lineitemPool(4096);
    return () -> new java.util.Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < count;
      }

      @Override
      public InternalRow next() {
        return pool.get(next++ & 4095);
      }
    };
  }

  private static List<InternalRow> lineitemPool(int count) {
    UnsafeProjection toUnsafe = UnsafeProjection$.MODULE$.create(new DataType[] {DataTypes.LongType,
        DataTypes.IntegerType, DataTypes.createDecimalType(12, 2), DataTypes.createDecimalType(12, 2),
        DataTypes.DateType, DataTypes.StringType});
    Random random = new Random(7);
    List<InternalRow> rows = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      rows.add(toUnsafe.apply(new GenericInternalRow(new Object[] {(long) random.nextInt(6_000_000),
          random.nextInt(200_000), Decimal.apply(random.nextInt(5000), 12, 2),
          Decimal.apply(random.nextInt(10_000_000), 12, 2), 8000 + random.nextInt(2500),
          UTF8String.fromString("comment " + Integer.toString(random.nextInt(), 36).repeat(1 + i % 3))})).copy());
    }
    return rows;
  }

  /** Drops the batches: the measure is the conversion, not the encoding. */
  static final class DroppingSink implements ShuffleStore.MapOutputSink {
    @Override
    public void add(int partition, VectorSchemaRoot batch) {}

    @Override
    public long[] commit() {
      return new long[PARTITIONS];
    }

    @Override
    public long rawBytes() {
      return 0;
    }

    @Override
    public long encodeNanos() {
      return 0;
    }

    @Override
    public void close() {}
  }
}
