package io.thallus.spark.shuffle;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarBatchRow;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A micro-measure (not a test: run with {@code -Dthallus.measure=true}) of the map side's columnar input, ns per row:
 * batches of 8192 rows into 200 partition batches of 8192, the full ones handed to a sink that drops them. "row by
 * row" is the path the scatter replaced (partition ids per batch, then each row appended to its partition's batch
 * through the getters of the input's column vectors, here over a {@link ColumnarBatchRow}); "scatter" is
 * {@link PartitionedBatchBuilder#append(ColumnarBatch)}. Inputs: Arrow batches as the exchange's reduce side reads
 * them (what a second exchange over the first one takes), and Spark's on-heap vectors (its Parquet reader's), which
 * the scatter reads through the getters. Both paths compute the partition ids alike (once per batch; from an Arrow
 * key column's buffers, from other columns through the getters), so the ratio is that of the copy; the ids alone are
 * measured too, and from Arrow input also as the replaced path read them (through the getters).
 */
@EnabledIfSystemProperty(named = "thallus.measure", matches = "true")
class ColumnarScatterMeasure {
  private static final int PARTITIONS = 200;
  private static final int BATCH_ROWS = 8192;
  private static final int INPUT_BATCHES = 16;
  private static final int ROUNDS = 9;
  private static final int WARM_UP = 2;

  @Test
  void measure() throws Exception {
    int rows = Integer.getInteger("thallus.measure.rows", 2_000_000);
    try (BufferAllocator allocator = new RootAllocator()) {
      report(rows, "synthetic (long, long; key long)", new DataType[] {DataTypes.LongType, DataTypes.LongType},
          ColumnarScatterMeasure::syntheticRow, allocator);
      report(rows, "lineitem-like (long, int, dec(12,2) x2, date, string; key long)", new DataType[] {
          DataTypes.LongType, DataTypes.IntegerType, DataTypes.createDecimalType(12, 2),
          DataTypes.createDecimalType(12, 2), DataTypes.DateType, DataTypes.StringType},
          ColumnarScatterMeasure::lineitemRow, allocator);
    }
  }

  interface RowMaker {
    InternalRow row(int id, Random random);
  }

  private void report(int count, String workload, DataType[] types, RowMaker maker, BufferAllocator allocator)
      throws Exception {
    StructType schema = WriterRows.schema(types);
    Seq<Attribute> input = WriterRows.attributes(schema);
    Expression partitionId = new HashPartitioning(
        CollectionConverters.asScala(List.<Expression>of(input.apply(0))).toList(), PARTITIONS).partitionIdExpression();
    ExchangeLayout layout = new ExchangeLayout(input, partitionId, PARTITIONS, true, FrameCodec.LZ4, BATCH_ROWS);
    List<PartitionBatch> arrowOwners = new ArrayList<>();
    List<OnHeapColumnVector[]> onHeapOwners = new ArrayList<>();
    try {
      List<ColumnarBatch> arrow = new ArrayList<>();
      List<ColumnarBatch> onHeap = new ArrayList<>();
      Random random = new Random(7);
      for (int b = 0; b < INPUT_BATCHES; b++) {
        List<InternalRow> rows = new ArrayList<>(BATCH_ROWS);
        for (int r = 0; r < BATCH_ROWS; r++) {
          rows.add(maker.row(b * BATCH_ROWS + r, random));
        }
        arrow.add(exchangeBatch(rows, layout, allocator, arrowOwners));
        onHeap.add(onHeapBatch(rows, schema, types, onHeapOwners));
      }
      List<ColumnarBatch> arrowThroughGetters = arrow.stream().map(ColumnarScatterMeasure::throughGetters).toList();
      String[] modes = {"Arrow input, row by row (before)", "Arrow input, scatter (after)",
          "on-heap input, row by row (before)", "on-heap input, scatter (after)", "Arrow input, partition ids only",
          "on-heap input, partition ids only (getters)", "Arrow input, ids through the getters (as before)"};
      double[][] nanos = new double[modes.length][ROUNDS];
      // Modes alternate round by round, each round starting with the next one, so that a change in the machine's load
      // (and what one mode leaves behind for the next) hits them alike.
      for (int round = 0; round < ROUNDS; round++) {
        for (int step = 0; step < modes.length; step++) {
          int m = (round + step) % modes.length;
          List<ColumnarBatch> batches = m < 2 || m == 4 ? arrow : m == 6 ? arrowThroughGetters : onHeap;
          long started = System.nanoTime();
          if (m >= 4) {
            idsOnly(batches, count, layout);
          } else if (m % 2 == 0) {
            rowByRow(batches, count, layout, allocator);
          } else {
            scatter(batches, count, layout, allocator);
          }
          nanos[m][round] = (double) (System.nanoTime() - started) / count;
        }
      }
      System.out.printf("%n%s, %d rows in batches of %d, %d partitions, output batches of %d%n", workload, count,
          BATCH_ROWS, PARTITIONS, BATCH_ROWS);
      double[] medians = new double[modes.length];
      for (int m = 0; m < modes.length; m++) {
        double[] measured = Arrays.copyOfRange(nanos[m], WARM_UP, ROUNDS);
        Arrays.sort(measured);
        medians[m] = measured[measured.length / 2];
        System.out.printf("  %-50s %7.1f ns/row (min %.1f, max %.1f)%n", modes[m], medians[m], measured[0],
            measured[measured.length - 1]);
      }
      System.out.printf("  scatter / row by row: Arrow %.2fx faster, on-heap %.2fx faster%n",
          medians[0] / medians[1], medians[2] / medians[3]);
    } finally {
      arrowOwners.forEach(PartitionBatch::close);
      onHeapOwners.forEach(columns -> Arrays.stream(columns).forEach(OnHeapColumnVector::close));
    }
  }

  /** The replaced path: ids for the whole batch, then each row through the column vectors' getters. */
  private static void rowByRow(List<ColumnarBatch> input, int count, ExchangeLayout layout, BufferAllocator allocator) {
    RowPartitionIds partitionIds = layout.partitionIds(0);
    PartitionBatch[] batches = new PartitionBatch[PARTITIONS];
    int[] ids = new int[BATCH_ROWS];
    try {
      for (int done = 0, b = 0; done < count; done += BATCH_ROWS, b++) {
        ColumnarBatch batch = input.get(b % input.size());
        int rows = Math.min(batch.numRows(), count - done);
        ColumnVector[] columns = columnsOf(batch);
        partitionIds.of(ColumnSource.of(columns, layout.types(), rows), rows, ids);
        ColumnarBatchRow row = new ColumnarBatchRow(columns);
        for (int r = 0; r < rows; r++) {
          int p = ids[r];
          PartitionBatch to = batches[p];
          if (to == null) {
            to = batches[p] = new PartitionBatch(layout.arrowSchema(), layout.types(), allocator, BATCH_ROWS);
          }
          row.rowId = r;
          if (to.append(row) == BATCH_ROWS) {
            to.finish();
            to.reset();
          }
        }
      }
      for (PartitionBatch batch : batches) {
        if (batch != null && batch.rows() > 0) {
          batch.finish();
        }
      }
    } finally {
      for (PartitionBatch batch : batches) {
        if (batch != null) {
          batch.close();
        }
      }
    }
  }

  /** What the partition ids alone take (both paths compute them the same way, once per batch). */
  private static void idsOnly(List<ColumnarBatch> input, int count, ExchangeLayout layout) {
    RowPartitionIds partitionIds = layout.partitionIds(0);
    int[] ids = new int[BATCH_ROWS];
    for (int done = 0, b = 0; done < count; done += BATCH_ROWS, b++) {
      ColumnarBatch batch = input.get(b % input.size());
      int rows = Math.min(batch.numRows(), count - done);
      partitionIds.of(ColumnSource.of(columnsOf(batch), layout.types(), rows), rows, ids);
    }
  }

  private static void scatter(List<ColumnarBatch> input, int count, ExchangeLayout layout, BufferAllocator allocator)
      throws Exception {
    try (PartitionedBatchBuilder builder = new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator,
        new RowConversionMeasure.DroppingSink())) {
      for (int done = 0, b = 0; done < count; done += BATCH_ROWS, b++) {
        ColumnarBatch batch = input.get(b % input.size());
        int rows = Math.min(batch.numRows(), count - done);
        builder.append(rows == batch.numRows() ? batch : new ColumnarBatch(columnsOf(batch), rows));
      }
      builder.finish();
    }
  }

  /** The batch with each column behind a pass-through vector, which the ids read through the getters. */
  private static ColumnarBatch throughGetters(ColumnarBatch batch) {
    ColumnVector[] columns = columnsOf(batch);
    for (int c = 0; c < columns.length; c++) {
      columns[c] = new PassThrough(columns[c]);
    }
    return new ColumnarBatch(columns, batch.numRows());
  }

  private static ColumnVector[] columnsOf(ColumnarBatch batch) {
    ColumnVector[] columns = new ColumnVector[batch.numCols()];
    for (int c = 0; c < columns.length; c++) {
      columns[c] = batch.column(c);
    }
    return columns;
  }

  /** Rows as the exchange's reduce side reads them: our Arrow batch, compact decimals as longs. */
  private static ColumnarBatch exchangeBatch(List<InternalRow> rows, ExchangeLayout layout, BufferAllocator allocator,
      List<PartitionBatch> owners) {
    PartitionBatch written = new PartitionBatch(layout.arrowSchema(), layout.types(), allocator, rows.size());
    owners.add(written);
    for (InternalRow row : rows) {
      written.append(row);
    }
    VectorSchemaRoot root = written.finish();
    return new ColumnarBatch(layout.columns(root), rows.size());
  }

  /** Rows as Spark's on-heap column vectors (its vectorized Parquet reader's). */
  private static ColumnarBatch onHeapBatch(List<InternalRow> rows, StructType schema, DataType[] types,
      List<OnHeapColumnVector[]> owners) {
    OnHeapColumnVector[] columns = OnHeapColumnVector.allocateColumns(rows.size(), schema);
    owners.add(columns);
    for (int r = 0; r < rows.size(); r++) {
      InternalRow row = rows.get(r);
      for (int c = 0; c < types.length; c++) {
        switch (types[c]) {
          case DecimalType d -> columns[c].putDecimal(r, row.getDecimal(c, d.precision(), d.scale()), d.precision());
          case org.apache.spark.sql.types.StringType ignored ->
              columns[c].putByteArray(r, row.getUTF8String(c).getBytes());
          case org.apache.spark.sql.types.IntegerType ignored -> columns[c].putInt(r, row.getInt(c));
          case org.apache.spark.sql.types.DateType ignored -> columns[c].putInt(r, row.getInt(c));
          default -> columns[c].putLong(r, row.getLong(c));
        }
      }
    }
    return new ColumnarBatch(columns, rows.size());
  }

  /** A column vector that hands every call to another: not Arrow to the map side, so read by its getters. */
  private static final class PassThrough extends ColumnVector {
    private final ColumnVector to;

    PassThrough(ColumnVector to) {
      super(to.dataType());
      this.to = to;
    }

    @Override
    public void close() {}

    @Override
    public boolean hasNull() {
      return to.hasNull();
    }

    @Override
    public int numNulls() {
      return to.numNulls();
    }

    @Override
    public boolean isNullAt(int rowId) {
      return to.isNullAt(rowId);
    }

    @Override
    public boolean getBoolean(int rowId) {
      return to.getBoolean(rowId);
    }

    @Override
    public byte getByte(int rowId) {
      return to.getByte(rowId);
    }

    @Override
    public short getShort(int rowId) {
      return to.getShort(rowId);
    }

    @Override
    public int getInt(int rowId) {
      return to.getInt(rowId);
    }

    @Override
    public long getLong(int rowId) {
      return to.getLong(rowId);
    }

    @Override
    public float getFloat(int rowId) {
      return to.getFloat(rowId);
    }

    @Override
    public double getDouble(int rowId) {
      return to.getDouble(rowId);
    }

    @Override
    public org.apache.spark.sql.vectorized.ColumnarArray getArray(int rowId) {
      return to.getArray(rowId);
    }

    @Override
    public org.apache.spark.sql.vectorized.ColumnarMap getMap(int ordinal) {
      return to.getMap(ordinal);
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
      return to.getDecimal(rowId, precision, scale);
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      return to.getUTF8String(rowId);
    }

    @Override
    public byte[] getBinary(int rowId) {
      return to.getBinary(rowId);
    }

    @Override
    public ColumnVector getChild(int ordinal) {
      return to.getChild(ordinal);
    }
  }

  private static InternalRow syntheticRow(int id, Random random) {
    return new GenericInternalRow(new Object[] {id * 7L + 3, (long) (id % 1000)});
  }

  private static InternalRow lineitemRow(int id, Random random) {
    return new GenericInternalRow(new Object[] {(long) random.nextInt(6_000_000), random.nextInt(200_000),
        Decimal.apply(random.nextInt(5000), 12, 2), Decimal.apply(random.nextInt(10_000_000), 12, 2),
        8000 + random.nextInt(2500),
        UTF8String.fromString("comment " + Integer.toString(random.nextInt(), 36).repeat(1 + id % 3))});
  }
}
