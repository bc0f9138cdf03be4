package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.execution.arrow.ArrowFieldWriter;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

/**
 * {@link VarWidthWriter} against Spark's own {@code StringWriter} and {@code BinaryWriter}: the same rows through
 * both, batch after batch as {@code ThallusDataWriter} sends them (finish, clear, reset), and the vectors compared
 * buffer by buffer (validity bits, offsets, bytes) and value by value.
 */
class VarWidthWriterTest {
  private static final Schema SCHEMA = new Schema(List.of(Field.nullable("s", ArrowType.Utf8.INSTANCE),
      Field.nullable("b", ArrowType.Binary.INSTANCE)));
  private static final String[] PIECES = {"a", "é", "€", "😀", "xyz", "\u0000"};

  @Test
  void writesWhatSparksWritersWriteBatchAfterBatch() {
    Random random = new Random(42);
    try (BufferAllocator allocator = new RootAllocator();
         VectorSchemaRoot ours = VectorSchemaRoot.create(SCHEMA, allocator);
         VectorSchemaRoot spark = VectorSchemaRoot.create(SCHEMA, allocator)) {
      ArrowWriter ourWriter = new ArrowWriter(ours, new ArrowFieldWriter[] {
          VarWidthWriter.strings((VarCharVector) ours.getVector(0)),
          VarWidthWriter.binary((VarBinaryVector) ours.getVector(1))});
      ArrowWriter sparkWriter = ArrowWriter.create(spark);
      // The first batch opens with a value far larger than Arrow's first buffer; then a large batch, one of a single
      // NULL (the first value after a clear), one of empty values only, one of a single value.
      List<List<InternalRow>> batches = List.of(rows(random, 5_000, 100_000), rows(random, 20_000, 0),
          List.of(row(null, null)), List.of(row("", new byte[0]), row("", new byte[0])),
          List.of(row("é€😀", new byte[] {0, -1})), rows(random, 3_000, 0));
      int batch = 0;
      for (List<InternalRow> rows : batches) {
        for (InternalRow row : rows) {
          ourWriter.write(row);
          sparkWriter.write(row);
        }
        ourWriter.finish();
        sparkWriter.finish();
        assertThat(ours.getRowCount()).isEqualTo(rows.size());
        for (int column = 0; column < 2; column++) {
          assertSame((BaseVariableWidthVector) ours.getVector(column),
              (BaseVariableWidthVector) spark.getVector(column), rows.size(), "batch " + batch + " column " + column);
        }
        for (VectorSchemaRoot root : List.of(ours, spark)) {
          root.getFieldVectors().forEach(FieldVector::clear);
        }
        ourWriter.reset();
        sparkWriter.reset();
        batch++;
      }
    }
  }

  /** A string backed by memory outside the heap (as a row's may be) is copied from its address. */
  @Test
  void copiesStringsOffTheHeap() {
    byte[] bytes = "off-heap é€😀 and a bit more than 64 bytes, so both ways of copying are taken"
        .getBytes(StandardCharsets.UTF_8);
    try (BufferAllocator allocator = new RootAllocator();
         VarCharVector vector = new VarCharVector("s", allocator);
         ArrowBuf memory = allocator.buffer(bytes.length)) {
      memory.setBytes(0, bytes);
      VarWidthWriter writer = VarWidthWriter.strings(vector);
      for (int length : new int[] {bytes.length, 9, 0, 70}) {
        writer.write(new GenericInternalRow(new Object[] {UTF8String.fromAddress(null, memory.memoryAddress(),
            length)}), 0);
      }
      vector.setValueCount(writer.count());
      assertThat(vector.getObject(0).toString()).isEqualTo(new String(bytes, StandardCharsets.UTF_8));
      assertThat(vector.getObject(1).toString()).isEqualTo("off-heap ");
      assertThat(vector.getObject(2).toString()).isEmpty();
      assertThat(vector.get(3)).isEqualTo(java.util.Arrays.copyOf(bytes, 70));
    }
  }

  private static void assertSame(BaseVariableWidthVector ours, BaseVariableWidthVector spark, int count,
      String what) {
    assertThat(ours.getValueCount()).as(what).isEqualTo(count);
    assertThat(bytes(ours.getValidityBuffer(), (count + 7) / 8)).as(what + ": validity")
        .isEqualTo(bytes(spark.getValidityBuffer(), (count + 7) / 8));
    if (count > 0) {
      assertThat(bytes(ours.getOffsetBuffer(), 4L * (count + 1))).as(what + ": offsets")
          .isEqualTo(bytes(spark.getOffsetBuffer(), 4L * (count + 1)));
      int end = spark.getOffsetBuffer().getInt(4L * count);
      assertThat(bytes(ours.getDataBuffer(), end)).as(what + ": data").isEqualTo(bytes(spark.getDataBuffer(), end));
    }
    for (int i = 0; i < count; i++) {
      assertThat(ours.isNull(i)).as(what + ": null at " + i).isEqualTo(spark.isNull(i));
      assertThat(ours.getObject(i)).as(what + ": value " + i).isEqualTo(spark.getObject(i));
    }
  }

  private static byte[] bytes(ArrowBuf buffer, long length) {
    byte[] bytes = new byte[(int) length];
    buffer.getBytes(0, bytes);
    return bytes;
  }

  /** {@code count} rows of NULLs, empty and multi-byte values up to 5,000 characters; the first {@code first} long. */
  private static List<InternalRow> rows(Random random, int count, int first) {
    List<InternalRow> rows = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int length = i == 0 && first > 0 ? first : random.nextInt(8) == 0 ? random.nextInt(5_000) : random.nextInt(40);
      StringBuilder text = new StringBuilder();
      while (text.length() < length) {
        text.append(PIECES[random.nextInt(PIECES.length)]);
      }
      byte[] binary = new byte[random.nextInt(8) == 0 ? random.nextInt(3_000) : random.nextInt(20)];
      random.nextBytes(binary);
      rows.add(row(random.nextInt(10) == 0 ? null : text.toString(), random.nextInt(9) == 0 ? null : binary));
    }
    return rows;
  }

  private static InternalRow row(String text, byte[] binary) {
    return new GenericInternalRow(new Object[] {text == null ? null : UTF8String.fromString(text), binary});
  }
}
