package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.apache.spark.sql.catalyst.expressions.Literal$;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection$;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Our partition ids equal Spark's: for every claimed type as a key alone and for keys of several types, with nulls
 * and edge values (NaN, -0.0, extremes, long strings, wide decimals), over UnsafeRows, generic rows and Arrow
 * column vectors, at several partition counts; keys that are not input columns go to Spark's projection.
 */
class Murmur3PartitionIdsTest {
  private final BufferAllocator allocator = new RootAllocator();
  private final List<VectorSchemaRoot> toClose = new ArrayList<>();
  private final List<InternalRow> generic = WriterRows.generic(3000, 11);
  private final List<InternalRow> unsafe = WriterRows.unsafe(generic, WriterRows.SCHEMA);
  private final Seq<Attribute> input = WriterRows.attributes(WriterRows.SCHEMA);
  private OnHeapColumnVector[] onHeap;

  @AfterEach
  void close() {
    toClose.forEach(VectorSchemaRoot::close);
    if (onHeap != null) {
      Arrays.stream(onHeap).forEach(ColumnVector::close);
    }
    allocator.close();
  }

  @Test
  void every_claimed_type_alone_as_the_key() {
    for (int column = 0; column < WriterRows.TYPES.length; column++) {
      for (int partitions : new int[] {1, 7, 200}) {
        check(List.of(input.apply(column)), partitions);
      }
    }
  }

  @Test
  void keys_of_several_types() {
    check(List.of(input.apply(4), input.apply(7)), 200);
    check(List.of(input.apply(13), input.apply(9), input.apply(0), input.apply(5)), 13);
    List<Expression> all = new ArrayList<>();
    for (int column = WriterRows.TYPES.length - 1; column >= 0; column--) {
      all.add(input.apply(column));
    }
    check(all, 200);
  }

  @Test
  void keys_that_are_not_input_columns_go_to_sparks_projection() {
    Expression partitionId = partitioning(List.of(Literal$.MODULE$.apply(5), input.apply(3)), 9)
        .partitionIdExpression();
    assertThat(Murmur3PartitionIds.of(partitionId, CollectionConverters.asJava(input))).isNull();
    ExchangeLayout layout = new ExchangeLayout(input, partitionId, 9, false, FrameCodec.LZ4, 64);
    RowPartitionIds ids = layout.partitionIds(0);
    UnsafeProjection spark = sparkIds(partitionId);
    for (InternalRow row : unsafe) {
      assertThat(ids.of(row)).isEqualTo(spark.apply(row).getInt(0));
    }
  }

  @Test
  void pmod_by_multiplication_equals_sparks_pmod() {
    Random random = new Random(3);
    int[] counts = {1, 2, 3, 7, 199, 200, 1000, 4096, 65_537, 1 << 30, Integer.MAX_VALUE - 1, Integer.MAX_VALUE};
    for (int partitions : counts) {
      Murmur3PartitionIds ids = Murmur3PartitionIds.of(partitioning(List.of(input.apply(3)), partitions)
          .partitionIdExpression(), CollectionConverters.asJava(input));
      int[] edges = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, Integer.MIN_VALUE + 1, Integer.MAX_VALUE - 1,
          partitions, -partitions, partitions - 1, -(partitions - 1), partitions + 1, -(partitions + 1)};
      for (int i = 0; i < 200_000; i++) {
        int hash = i < edges.length ? edges[i] : random.nextInt();
        int remainder = hash % partitions;
        int spark = remainder < 0 ? (remainder + partitions) % partitions : remainder;
        assertThat(ids.pmod(hash)).as("pmod(%d, %d)", hash, partitions).isEqualTo(spark);
      }
    }
  }

  private void check(List<Expression> keys, int partitions) {
    Expression partitionId = partitioning(keys, partitions).partitionIdExpression();
    Murmur3PartitionIds ours = Murmur3PartitionIds.of(partitionId, CollectionConverters.asJava(input));
    assertThat(ours).as("keys %s", keys).isNotNull();
    UnsafeProjection spark = sparkIds(partitionId);
    for (int r = 0; r < unsafe.size(); r++) {
      int expected = spark.apply(unsafe.get(r)).getInt(0);
      assertThat(ours.of(unsafe.get(r))).as("keys %s, unsafe row %d", keys, r).isEqualTo(expected);
      assertThat(ours.of(generic.get(r))).as("keys %s, generic row %d", keys, r).isEqualTo(expected);
    }
    // Spark's Arrow batches (decimal128 for every decimal) and the exchange's own (compact decimals as longs), read
    // from their buffers; Spark's on-heap vectors, read through their getters.
    ExchangeLayout layout = new ExchangeLayout(input, partitionId, partitions, true, FrameCodec.LZ4, 64);
    checkColumnar(keys, ours, spark, generic, List.of(
        WriterRows.sparkArrowBatch(generic, 0, generic.size(), WriterRows.SCHEMA, allocator, toClose),
        WriterRows.exchangeArrowBatch(generic, 0, generic.size(), layout, allocator, toClose),
        onHeapBatch()));
    // The rows with no null in any key: an Arrow key column without nulls is hashed without reading its validity.
    List<Integer> ordinals = keys.stream().map(key -> CollectionConverters.asJava(input).indexOf(key)).toList();
    List<InternalRow> noNulls = generic.stream().filter(row -> ordinals.stream().noneMatch(row::isNullAt)).toList();
    checkColumnar(keys, ours, spark, noNulls, List.of(
        WriterRows.sparkArrowBatch(noNulls, 0, noNulls.size(), WriterRows.SCHEMA, allocator, toClose),
        WriterRows.exchangeArrowBatch(noNulls, 0, noNulls.size(), layout, allocator, toClose)));
  }

  private static void checkColumnar(List<Expression> keys, Murmur3PartitionIds ours, UnsafeProjection spark,
      List<InternalRow> rows, List<ColumnarBatch> batches) {
    assertThat(rows).hasSizeGreaterThan(100);
    for (ColumnarBatch batch : batches) {
      ColumnVector[] columns = new ColumnVector[batch.numCols()];
      for (int c = 0; c < columns.length; c++) {
        columns[c] = batch.column(c);
      }
      int[] ids = new int[batch.numRows()];
      ours.of(ColumnSource.of(columns, WriterRows.TYPES, batch.numRows()), batch.numRows(), ids);
      for (int r = 0; r < ids.length; r++) {
        assertThat(ids[r]).as("keys %s, columnar row %d of %s", keys, r, columns[0].getClass().getSimpleName())
            .isEqualTo(spark.apply(rows.get(r)).getInt(0));
      }
    }
  }

  /** The rows as Spark's on-heap vectors, made once (closed after the test). */
  private ColumnarBatch onHeapBatch() {
    if (onHeap == null) {
      onHeap = WriterRows.onHeapColumns(generic, 0, generic.size());
    }
    return new ColumnarBatch(onHeap, generic.size());
  }

  private UnsafeProjection sparkIds(Expression partitionId) {
    return UnsafeProjection$.MODULE$.create(CollectionConverters.asScala(List.of(partitionId)).toList(), input);
  }

  private static HashPartitioning partitioning(List<Expression> keys, int partitions) {
    return new HashPartitioning(CollectionConverters.asScala(keys).toList(), partitions);
  }
}
