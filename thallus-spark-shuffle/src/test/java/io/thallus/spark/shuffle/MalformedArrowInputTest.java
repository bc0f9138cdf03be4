package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Input batches the scatter must not trust: Arrow vectors whose buffers were loaded by hand as Arrow's VectorLoader
 * loads them (which checks no buffer length against the values), too small for their values or with offsets that
 * leave their data. Each is refused with the column and the problem named, before any buffer is read by address
 * (without the check, these batches read far past their buffers: a crash or foreign memory in the shuffle), whether
 * the bad column is a hash key (hashed first) or only copied. The same vectors well formed are read directly. And a
 * Spark writable vector of another decimal type than the exchange's column is read at its own type.
 */
class MalformedArrowInputTest {
  private static final DataType[] TYPES = {DataTypes.LongType, DataTypes.StringType};
  private static final Seq<Attribute> INPUT = WriterRows.attributes(WriterRows.schema(TYPES));
  private final BufferAllocator allocator = new RootAllocator();
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable closeable : toClose.reversed()) {
      closeable.close();
    }
    allocator.close(); // fails on a leaked buffer
  }

  @Test
  void string_offsets_past_the_data_are_refused() throws Exception {
    // 4 data bytes; the one value claims to end 1 GiB in.
    FieldVector strings = strings("c1", 1, new int[] {0, 1 << 30}, 4);
    for (int key : new int[] {1, 0}) {
      assertRefused(key, longs("c0", 1, 0, 1, 8), strings, "'c1' of STRING", "last offset 1073741824 is past its");
    }
  }

  @Test
  void string_offsets_that_go_backwards_or_start_below_zero_are_refused() throws Exception {
    FieldVector backwards = strings("c1", 2, new int[] {0, 3, 1}, 8);
    FieldVector negative = strings("c1", 1, new int[] {-64, 2}, 8);
    for (int key : new int[] {1, 0}) {
      assertRefused(key, longs("c0", 2, 0, 1, 16), backwards, "'c1' of STRING", "offsets go backwards at row 1");
      assertRefused(key, longs("c0", 1, 0, 1, 8), negative, "'c1' of STRING", "first offset is -64");
    }
  }

  @Test
  void a_string_column_with_fewer_offsets_than_rows_is_refused() throws Exception {
    // 4096 values claimed over 2 offsets (8 bytes).
    FieldVector strings = strings("c1", 4096, new int[] {0, 0}, 8);
    for (int key : new int[] {1, 0}) {
      assertRefused(key, longs("c0", 4096, 0, 512, 8 * 4096), strings, "'c1' of STRING",
          "offset buffer holds 8 bytes, not the 16388 its rows need");
    }
  }

  @Test
  void a_long_column_over_a_short_buffer_is_refused() throws Exception {
    // 4096 longs claimed over 64 bytes.
    FieldVector longs = longs("c0", 4096, 0, 512, 64);
    for (int key : new int[] {0, 1}) {
      assertRefused(key, longs, wellFormedStrings(4096), "'c0' of BIGINT",
          "data buffer holds 64 bytes, not the 32768 its rows need");
    }
  }

  @Test
  void a_validity_buffer_short_of_the_values_is_refused() throws Exception {
    // Some value null, so the validity buffer is the one given: 8 bytes for 4096 values.
    FieldVector longs = longs("c0", 4096, 1, 8, 8 * 4096);
    for (int key : new int[] {0, 1}) {
      assertRefused(key, longs, wellFormedStrings(4096), "'c0' of BIGINT",
          "validity buffer holds 8 bytes, not the 512 its rows need");
    }
  }

  @Test
  void well_formed_buffers_loaded_the_same_way_are_read_directly() throws Exception {
    FieldVector longs = longs("c0", 3, 1, 1, 24);
    longs.getValidityBuffer().setByte(0, 0b101);
    longs.getDataBuffer().setLong(0, 11);
    longs.getDataBuffer().setLong(16, 33);
    FieldVector strings = strings("c1", 3, new int[] {0, 2, 2, 5}, 5);
    strings.getDataBuffer().setBytes(0, "abcde".getBytes(StandardCharsets.UTF_8));
    ColumnarBatch batch = batch(3, longs, strings);
    assertThat(ColumnSource.of(batch.column(0), TYPES[0], 3).layout).isEqualTo(ColumnSource.Layout.FIXED);
    assertThat(ColumnSource.of(batch.column(1), TYPES[1], 3).layout).isEqualTo(ColumnSource.Layout.VARIABLE);
    ExchangeLayout layout = layout(TYPES, INPUT, -1);
    CapturingSink sink = new CapturingSink(layout);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, sink)) {
      builder.append(batch);
      builder.finish();
    }
    assertThat(sink.rowsByPartition.get(0)).containsExactly(List.of(11L, "string ab"),
        Arrays.asList(null, "string "), List.of(33L, "string cde"));
  }

  @Test
  void a_writable_decimal_vector_of_another_type_is_read_at_its_own() throws Exception {
    // Spark's on-heap vector of decimal(18,2) holds longs; the exchange's column is decimal(9,2), whose own
    // vectors hold ints: the values are read as the vector holds them, and one that does not fit 9 digits is null.
    DecimalType column = DataTypes.createDecimalType(9, 2);
    DataType[] types = {column};
    ExchangeLayout layout = layout(types, WriterRows.attributes(WriterRows.schema(types)), -1);
    OnHeapColumnVector wide = new OnHeapColumnVector(3, DataTypes.createDecimalType(18, 2));
    toClose.add(wide);
    wide.putLong(0, 12345);
    wide.putLong(1, -999_999_999L);
    wide.putLong(2, 1_000_000_000_00L); // 12 digits: past decimal(9,2)
    CapturingSink sink = new CapturingSink(layout);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, sink)) {
      builder.append(new ColumnarBatch(new ColumnVector[] {wide}, 3));
      builder.finish();
    }
    assertThat(sink.rowsByPartition.get(0)).containsExactly(List.of(new BigDecimal("123.45")),
        List.of(new BigDecimal("-9999999.99")), Arrays.asList((Object) null));
  }

  private void assertRefused(int key, FieldVector longs, FieldVector strings, String column, String problem)
      throws Exception {
    int rows = longs.getValueCount();
    ExchangeLayout layout = layout(TYPES, INPUT, key);
    try (PartitionedBatchBuilder builder =
             new PartitionedBatchBuilder(layout, layout.partitionIds(0), allocator, new CapturingSink(layout))) {
      assertThatThrownBy(() -> builder.append(batch(rows, longs, strings)))
          .as("key column %d", key).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("malformed Arrow input column " + column).hasMessageContaining(problem);
    }
  }

  private static ColumnarBatch batch(int rows, FieldVector... vectors) {
    ColumnVector[] columns = new ColumnVector[vectors.length];
    for (int c = 0; c < columns.length; c++) {
      columns[c] = new ArrowColumnVector(vectors[c]);
    }
    return new ColumnarBatch(columns, rows);
  }

  /** Hash partitioned by column {@code key} into 7, or one partition where {@code key} is negative. */
  private static ExchangeLayout layout(DataType[] types, Seq<Attribute> input, int key) {
    Expression partitionId = key < 0 ? null
        : new HashPartitioning(CollectionConverters.asScala(List.of((Expression) input.apply(key)))
            .toList(), 7).partitionIdExpression();
    return new ExchangeLayout(input, partitionId, key < 0 ? 1 : 7, true, FrameCodec.LZ4, 300);
  }

  /** A long vector of {@code values} values over buffers of the given sizes. */
  private BigIntVector longs(String name, int values, int nulls, int validityBytes, int dataBytes) {
    BigIntVector vector = own(new BigIntVector(name, allocator));
    load(vector, new ArrowFieldNode(values, nulls), validityBytes, null, dataBytes);
    return vector;
  }

  /** A string vector of {@code values} values over the given offsets and {@code dataBytes} zero bytes. */
  private VarCharVector strings(String name, int values, int[] offsets, int dataBytes) {
    VarCharVector vector = own(new VarCharVector(name, allocator));
    load(vector, new ArrowFieldNode(values, 0), (values + 7) / 8, offsets, dataBytes);
    return vector;
  }

  private VarCharVector wellFormedStrings(int rows) {
    VarCharVector vector = own(new VarCharVector("c1", allocator));
    vector.allocateNew(rows);
    for (int r = 0; r < rows; r++) {
      vector.setSafe(r, ("s" + r).getBytes(StandardCharsets.UTF_8));
    }
    vector.setValueCount(rows);
    return vector;
  }

  /**
   * As Arrow's VectorLoader loads a vector: its buffers as given (validity bits all set, data zero), no length
   * checked against the field node.
   */
  private void load(FieldVector vector, ArrowFieldNode node, int validityBytes, int[] offsets, int dataBytes) {
    List<ArrowBuf> buffers = new ArrayList<>();
    try {
      ArrowBuf validity = allocator.buffer(Math.max(validityBytes, 1));
      buffers.add(validity);
      validity.setOne(0, (int) validity.capacity());
      if (offsets != null) {
        ArrowBuf offsetBuffer = allocator.buffer(4L * offsets.length);
        buffers.add(offsetBuffer);
        for (int i = 0; i < offsets.length; i++) {
          offsetBuffer.setInt(4L * i, offsets[i]);
        }
      }
      ArrowBuf data = allocator.buffer(dataBytes);
      buffers.add(data);
      data.setZero(0, data.capacity());
      vector.loadFieldBuffers(node, buffers);
    } finally {
      buffers.forEach(ArrowBuf::close); // the vector holds its own references
    }
  }

  private <T extends AutoCloseable> T own(T closeable) {
    toClose.add(closeable);
    return closeable;
  }
}
