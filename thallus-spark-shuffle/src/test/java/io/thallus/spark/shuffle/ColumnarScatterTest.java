package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Columnar input scattered column by column gives what the row path gives for the same rows: the same values of every
 * claimed type (nulls, edge values, empty strings and binaries, decimals of both widths, dates, timestamps, booleans)
 * in the same partitions, in the same order, cut into the same batches; for input batches as Spark's ArrowWriter
 * makes them (decimal128 for every decimal), as the exchange's own reduce side reads them (compact decimals as longs),
 * and as Spark's on- and off-heap vectors (read through the getters); at 1, 7 and 200 partitions, with empty batches
 * and batches whose rows all go to one partition.
 */
class ColumnarScatterTest {
  private static final Seq<Attribute> INPUT = WriterRows.attributes(WriterRows.SCHEMA);
  private final BufferAllocator allocator = new RootAllocator();
  private final List<VectorSchemaRoot> toClose = new ArrayList<>();
  private final List<WritableColumnVector[]> writable = new ArrayList<>();

  @AfterEach
  void close() {
    toClose.forEach(VectorSchemaRoot::close);
    writable.forEach(columns -> {
      for (WritableColumnVector column : columns) {
        column.close();
      }
    });
    allocator.close(); // fails on a leaked buffer
  }

  /** Where the input batches come from. */
  enum Source { SPARK_ARROW, EXCHANGE_ARROW, ON_HEAP, OFF_HEAP }

  @Test
  void spark_arrow_batches_equal_the_row_path() throws Exception {
    for (int partitions : new int[] {1, 7, 200}) {
      check(WriterRows.generic(3000, partitions), partitions, 300, Source.SPARK_ARROW, 1000);
    }
  }

  @Test
  void the_exchanges_own_batches_equal_the_row_path() throws Exception {
    for (int partitions : new int[] {1, 7, 200}) {
      check(WriterRows.generic(3000, 10 + partitions), partitions, 300, Source.EXCHANGE_ARROW, 1000);
    }
  }

  @Test
  void on_heap_batches_read_through_getters_equal_the_row_path() throws Exception {
    for (int partitions : new int[] {1, 7, 200}) {
      check(WriterRows.generic(3000, 20 + partitions), partitions, 300, Source.ON_HEAP, 1000);
    }
  }

  @Test
  void off_heap_batches_read_through_getters_equal_the_row_path() throws Exception {
    for (int partitions : new int[] {1, 7, 200}) {
      check(WriterRows.generic(3000, 25 + partitions), partitions, 300, Source.OFF_HEAP, 1000);
    }
  }

  @Test
  void batches_larger_than_the_batch_size_and_of_one_row() throws Exception {
    check(WriterRows.generic(5000, 31), 7, 64, Source.SPARK_ARROW, 5000);
    check(WriterRows.generic(500, 32), 200, 64, Source.EXCHANGE_ARROW, 1);
  }

  @Test
  void every_row_in_one_partition_of_many() throws Exception {
    List<InternalRow> rows = WriterRows.generic(2500, 41);
    List<InternalRow> sameKeys = new ArrayList<>();
    for (InternalRow row : rows) {
      Object[] values = ((GenericInternalRow) row).values().clone();
      for (int key : KEYS) {
        values[key] = ((GenericInternalRow) rows.get(5)).values()[key];
      }
      sameKeys.add(new GenericInternalRow(values));
    }
    for (Source source : Source.values()) {
      CapturingSink sink = check(sameKeys, 200, 300, source, 1100);
      assertThat(sink.rowsByPartition.stream().filter(partition -> !partition.isEmpty()).count()).isEqualTo(1);
    }
  }

  @Test
  void empty_batches_add_nothing() throws Exception {
    ExchangeLayout layout = layout(7, 300);
    CapturingSink sink = new CapturingSink(layout);
    List<InternalRow> rows = WriterRows.generic(10, 51);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, sink)) {
      for (Source source : Source.values()) {
        builder.append(batch(rows, 0, 0, source, layout));
      }
      builder.finish();
      assertThat(builder.rows()).isZero();
    }
    assertThat(sink.batchSizesByPartition).allSatisfy(sizes -> assertThat(sizes).isEmpty());
  }

  @Test
  void batches_of_no_columns_are_cut_at_the_batch_size() throws Exception {
    // A count over a scan may shuffle rows of no columns: only the row counts cross.
    ExchangeLayout layout = new ExchangeLayout(WriterRows.attributes(WriterRows.schema(new DataType[0])), null, 1,
        true, FrameCodec.LZ4, 300);
    CapturingSink sink = new CapturingSink(layout);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, sink)) {
      builder.append(new ColumnarBatch(new ColumnVector[0], 1000));
      builder.append(new ColumnarBatch(new ColumnVector[0], 250));
      builder.finish();
      assertThat(builder.rows()).isEqualTo(1250);
    }
    assertThat(sink.batchSizesByPartition.get(0)).containsExactly(300, 300, 300, 300, 50);
  }

  @Test
  void arrow_columns_of_every_claimed_type_are_read_from_their_buffers() {
    List<InternalRow> rows = WriterRows.generic(20, 61);
    ExchangeLayout layout = layout(7, 300);
    for (Source source : Source.values()) {
      ColumnarBatch batch = batch(rows, 0, rows.size(), source, layout);
      for (int c = 0; c < WriterRows.TYPES.length; c++) {
        ColumnSource.Layout read = ColumnSource.of(batch.column(c), WriterRows.TYPES[c], rows.size()).layout;
        if (source == Source.ON_HEAP || source == Source.OFF_HEAP) {
          assertThat(read).as("%s column %d", source, c).isEqualTo(ColumnSource.Layout.GETTERS);
        } else {
          assertThat(read).as("%s column %d", source, c).isNotEqualTo(ColumnSource.Layout.GETTERS);
        }
      }
    }
  }

  @Test
  void an_arrow_column_shorter_than_its_batch_is_refused() {
    List<InternalRow> rows = WriterRows.generic(20, 62);
    ColumnarBatch batch = batch(rows, 0, rows.size(), Source.SPARK_ARROW, layout(7, 300));
    assertThatThrownBy(() -> ColumnSource.of(batch.column(4), WriterRows.TYPES[4], 21))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holds 20 values");
  }

  @Test
  void a_batch_of_other_columns_is_refused() throws Exception {
    ExchangeLayout layout = layout(7, 300);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, new CapturingSink(layout))) {
      ColumnarBatch narrow = new ColumnarBatch(new ColumnVector[] {onHeapColumns(WriterRows.generic(4, 52), 0, 4)[0]},
          4);
      assertThatThrownBy(() -> builder.append(narrow)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("1 columns").hasMessageContaining("16");
    }
  }

  /** Columns 4, 7, 13 and 9 (long, string, decimal(18,4), date) are the keys. */
  private static final int[] KEYS = {4, 7, 13, 9};

  /**
   * Runs {@code rows} through the row path and, as batches of {@code inputBatch} rows from {@code source}, through
   * the scatter; asserts both give the same partitions, values and batch sizes; returns the scatter's output.
   */
  private CapturingSink check(List<InternalRow> rows, int partitions, int batchRows, Source source, int inputBatch)
      throws Exception {
    ExchangeLayout layout = layout(partitions, batchRows);
    CapturingSink byRows = new CapturingSink(layout);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, byRows)) {
      for (InternalRow row : rows) {
        builder.append(row);
      }
      builder.finish();
    }
    CapturingSink scattered = new CapturingSink(layout);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, scattered)) {
      for (int from = 0; from < rows.size(); from += inputBatch) {
        builder.append(batch(rows, from, Math.min(rows.size(), from + inputBatch), source, layout));
      }
      builder.finish();
      assertThat(builder.rows()).isEqualTo(rows.size());
    }
    for (int p = 0; p < partitions; p++) {
      assertThat(scattered.rowsByPartition.get(p)).as("%s, %d partitions: partition %d", source, partitions, p)
          .isEqualTo(byRows.rowsByPartition.get(p));
      assertThat(scattered.batchSizesByPartition.get(p)).as("batch sizes of partition %d", p)
          .isEqualTo(byRows.batchSizesByPartition.get(p));
    }
    assertThat(byRows.rowsByPartition.stream().mapToInt(List::size).sum()).isEqualTo(rows.size());
    return scattered;
  }

  private ColumnarBatch batch(List<InternalRow> rows, int from, int to, Source source, ExchangeLayout layout) {
    return switch (source) {
      case SPARK_ARROW -> WriterRows.sparkArrowBatch(rows, from, to, WriterRows.SCHEMA, allocator, toClose);
      case EXCHANGE_ARROW -> exchangeBatch(rows, from, to, layout);
      case ON_HEAP -> new ColumnarBatch(onHeapColumns(rows, from, to), to - from);
      case OFF_HEAP -> new ColumnarBatch(owned(WriterRows.offHeapColumns(rows, from, to)), to - from);
    };
  }

  /** Rows as the reduce side reads a batch of the exchange (compact decimals as longs), written by our own writers. */
  private ColumnarBatch exchangeBatch(List<InternalRow> rows, int from, int to, ExchangeLayout layout) {
    ColumnarBatch batch = WriterRows.exchangeArrowBatch(rows, from, to, layout, allocator, toClose);
    ColumnVector[] columns = new ColumnVector[batch.numCols()];
    for (int c = 0; c < columns.length; c++) {
      columns[c] = batch.column(c);
    }
    assertThat(columns).hasAtLeastOneElementOfType(CompactDecimals.Vector.class)
        .hasAtLeastOneElementOfType(ArrowColumnVector.class);
    return batch;
  }

  /** Rows as Spark's on-heap vectors (what its vectorized Parquet reader gives): no Arrow buffers to read. */
  private OnHeapColumnVector[] onHeapColumns(List<InternalRow> rows, int from, int to) {
    return owned(WriterRows.onHeapColumns(rows, from, to));
  }

  private <T extends WritableColumnVector> T[] owned(T[] columns) {
    writable.add(columns);
    return columns;
  }

  private static ExchangeLayout layout(int partitions, int batchRows) {
    List<Expression> keys = new ArrayList<>();
    for (int key : KEYS) {
      keys.add(INPUT.apply(key));
    }
    Expression partitionId = partitions == 1 ? null
        : new HashPartitioning(CollectionConverters.asScala(keys).toList(), partitions).partitionIdExpression();
    return new ExchangeLayout(INPUT, partitionId, partitions, true, FrameCodec.LZ4, batchRows);
  }
}
