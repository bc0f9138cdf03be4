package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection$;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The map side's writers against Spark: rows of every claimed type (nulls, edge values), written by our column
 * writers into partition batches, read back as the reduce side reads them, equal value for value to the rows
 * themselves and to what Spark's own ArrowWriter makes of them; partitions as Spark's hash partitioning puts them;
 * batches cut at the batch size; vectors grown past their first size.
 */
class PartitionedBatchBuilderTest {
  private final BufferAllocator allocator = new RootAllocator();
  private final List<VectorSchemaRoot> toClose = new ArrayList<>();

  @AfterEach
  void close() {
    toClose.forEach(VectorSchemaRoot::close);
    allocator.close(); // fails on a leaked buffer
  }

  @Test
  void spark_ArrowWriter_gives_the_rows_themselves() {
    List<InternalRow> rows = WriterRows.generic(3000, 1);
    ColumnarBatch batch = WriterRows.sparkArrowBatch(rows, 0, rows.size(), WriterRows.SCHEMA, allocator, toClose);
    for (int r = 0; r < rows.size(); r++) {
      assertThat(WriterRows.values(batch.getRow(r), WriterRows.TYPES))
          .as("row %d", r).isEqualTo(WriterRows.values(rows.get(r), WriterRows.TYPES));
    }
  }

  @Test
  void unsafe_rows_cross_value_for_value_in_their_partitions_and_batches() throws Exception {
    checkRowInput(WriterRows.unsafe(WriterRows.generic(5000, 2), WriterRows.SCHEMA), 7, 500);
  }

  @Test
  void generic_rows_cross_value_for_value() throws Exception {
    checkRowInput(WriterRows.generic(2000, 3), 3, 64);
  }

  @Test
  void one_partition_and_batches_of_one_size_exactly() throws Exception {
    checkRowInput(WriterRows.unsafe(WriterRows.generic(64 * 5, 4), WriterRows.SCHEMA), 1, 64);
  }

  @Test
  void columnar_input_crosses_as_its_rows_do() throws Exception {
    List<InternalRow> rows = WriterRows.generic(4000, 5);
    Seq<Attribute> input = WriterRows.attributes(WriterRows.SCHEMA);
    ExchangeLayout layout = layout(input, 11, 300);
    CapturingSink sink = new CapturingSink(layout);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, sink)) {
      for (int from = 0; from < rows.size(); from += 1500) {
        builder.append(WriterRows.sparkArrowBatch(rows, from, Math.min(rows.size(), from + 1500), WriterRows.SCHEMA,
            allocator, toClose));
      }
      builder.finish();
      assertThat(builder.rows()).isEqualTo(rows.size());
    }
    assertEqualsSpark(rows, input, layout, sink, 300);
  }

  private void checkRowInput(List<InternalRow> rows, int partitions, int batchRows) throws Exception {
    Seq<Attribute> input = WriterRows.attributes(WriterRows.SCHEMA);
    ExchangeLayout layout = layout(input, partitions, batchRows);
    if (partitions > 1) {
      assertThat(layout.partitionIds(0)).as("Spark's Murmur3 computed directly").isInstanceOf(Murmur3PartitionIds.class);
    }
    CapturingSink sink = new CapturingSink(layout);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, sink)) {
      for (InternalRow row : rows) {
        builder.append(row);
      }
      builder.finish();
      assertThat(builder.rows()).isEqualTo(rows.size());
    }
    assertEqualsSpark(rows, input, layout, sink, batchRows);
  }

  /** Keys of several types (long, string, decimal, date), so the partition id is Spark's Murmur3 over them. */
  private static ExchangeLayout layout(Seq<Attribute> input, int partitions, int batchRows) {
    Expression partitionId = partitions == 1 ? null : partitioning(input, partitions).partitionIdExpression();
    return new ExchangeLayout(input, partitionId, partitions, false, FrameCodec.LZ4, batchRows);
  }

  private static HashPartitioning partitioning(Seq<Attribute> input, int partitions) {
    return new HashPartitioning(CollectionConverters.asScala(List.<Expression>of(input.apply(4), input.apply(7),
        input.apply(13), input.apply(9))).toList(), partitions);
  }

  private void assertEqualsSpark(List<InternalRow> rows, Seq<Attribute> input, ExchangeLayout layout,
      CapturingSink sink, int batchRows) {
    int partitions = layout.partitions();
    List<List<List<Object>>> expected = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      expected.add(new ArrayList<>());
    }
    UnsafeProjection sparkIds = partitions == 1 ? null : UnsafeProjection$.MODULE$.create(
        CollectionConverters.asScala(List.of(partitioning(input, partitions).partitionIdExpression())).toList(),
        input);
    for (InternalRow row : rows) {
      int partition = sparkIds == null ? 0 : sparkIds.apply(row).getInt(0);
      expected.get(partition).add(WriterRows.values(row, WriterRows.TYPES));
    }
    for (int p = 0; p < partitions; p++) {
      assertThat(sink.rowsByPartition.get(p)).as("partition %d", p).isEqualTo(expected.get(p));
      List<Integer> sizes = sink.batchSizesByPartition.get(p);
      for (int b = 0; b < sizes.size(); b++) {
        if (b < sizes.size() - 1) {
          assertThat(sizes.get(b)).as("batch %d of partition %d", b, p).isEqualTo(batchRows);
        } else {
          assertThat(sizes.get(b)).isBetween(1, batchRows);
        }
      }
    }
    assertThat(sink.batchSizesByPartition.stream().mapToInt(List::size).sum())
        .as("some partition has more than one batch").isGreaterThan(partitions);
    assertThat(rows.size() / partitions).as("batches grew past their first size")
        .isGreaterThan(Math.min(batchRows, PartitionBatch.INITIAL_ROWS));
  }
}
