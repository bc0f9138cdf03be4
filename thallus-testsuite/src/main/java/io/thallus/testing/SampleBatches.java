package io.thallus.testing;

import io.thallus.spi.BatchContents;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ViewVarCharVector;
import org.apache.arrow.vector.complex.DenseUnionVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.ListViewVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.RunEndEncodedVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.UnionVector;
import org.apache.arrow.vector.complex.impl.UnionMapWriter;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.holders.NullableBigIntHolder;
import org.apache.arrow.vector.holders.NullableIntHolder;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.Types.MinorType;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Valid Arrow batches of one column {@code c} of every kind, as a receiver rebuilds them: the schema as it travels
 * (a dictionary-encoded column with its values' type) and the batch with each buffer a copy of its own, exactly as
 * long as the bytes the sender sends. For the validator's fuzz target (which overwrites them) and benchmark.
 */
public final class SampleBatches {
  private SampleBatches() {}

  public enum Kind {
    BIGINT, DOUBLE, VARCHAR, LARGE_VARCHAR, VIEW_VARCHAR, BOOLEAN, DECIMAL, TIMESTAMP, LIST, LARGE_LIST,
    FIXED_SIZE_LIST, LIST_VIEW, STRUCT, MAP, SPARSE_UNION, DENSE_UNION, DICTIONARY, RUN_END
  }

  /** Dictionary id of the {@link Kind#DICTIONARY} column. */
  public static final long DICTIONARY_ID = 1;
  private static final int DICTIONARY_SIZE = 10;

  /** A batch and its schema; closing it frees the batch's buffers. */
  public record Sample(Schema schema, BatchContents contents) implements AutoCloseable {
    @Override
    public void close() {
      contents.close();
    }
  }

  /** A valid batch of {@code rows} rows of {@code kind} (some of them null where the kind has nulls). */
  public static Sample of(Kind kind, int rows, BufferAllocator allocator) {
    List<ArrowDictionaryBatch> dictionaries = new ArrayList<>();
    Schema schema;
    ArrowRecordBatch records;
    if (kind == Kind.DICTIONARY) {
      try (VarCharVector words = strings(DICTIONARY_SIZE, allocator, false)) {
        dictionaries.add(new ArrowDictionaryBatch(DICTIONARY_ID, exact(new VectorSchemaRoot(List.of(words)),
            allocator), false));
      }
      DictionaryEncoding encoding = new DictionaryEncoding(DICTIONARY_ID, false, new ArrowType.Int(32, true));
      try (IntVector indices = new IntVector(new Field("c", new FieldType(true, new ArrowType.Int(32, true),
          encoding), null), allocator)) {
        indices.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          if (i % 7 == 3) {
            indices.setNull(i);
          } else {
            indices.set(i, (i * 7) % DICTIONARY_SIZE);
          }
        }
        indices.setValueCount(rows);
        records = exact(new VectorSchemaRoot(List.of(indices)), allocator);
      }
      schema = new Schema(List.of(new Field("c", new FieldType(true, ArrowType.Utf8.INSTANCE, encoding), null)));
    } else {
      try (FieldVector column = column(kind, rows, allocator)) {
        VectorSchemaRoot root = new VectorSchemaRoot(List.of(column));
        schema = root.getSchema();
        records = exact(root, allocator);
      }
    }
    return new Sample(schema, new BatchContents(dictionaries, records));
  }

  /** The root's batch with each buffer copied into one exactly as long as its bytes. */
  private static ArrowRecordBatch exact(VectorSchemaRoot root, BufferAllocator allocator) {
    try (ArrowRecordBatch unloaded = new VectorUnloader(root).getRecordBatch()) {
      List<ArrowBuf> copies = new ArrayList<>();
      try {
        for (ArrowBuf buffer : unloaded.getBuffers()) {
          // An empty large list's unloaded offsets claim 8 bytes its buffer does not have: send what there is.
          long length = Math.min(buffer.readableBytes(), buffer.capacity());
          ArrowBuf copy = allocator.buffer(length);
          copy.setBytes(0, buffer, 0, length);
          // Its bytes are readable, as a sender's buffers are (what is packed and compressed is the readable bytes).
          copy.writerIndex(length);
          copies.add(copy);
        }
        return new ArrowRecordBatch(unloaded.getLength(), unloaded.getNodes(), copies,
            NoCompressionCodec.DEFAULT_BODY_COMPRESSION, unloaded.getVariadicBufferCounts(), false);
      } finally {
        copies.forEach(ArrowBuf::close);
      }
    }
  }

  private static VarCharVector strings(int rows, BufferAllocator allocator, boolean nulls) {
    VarCharVector vector = new VarCharVector("c", allocator);
    vector.allocateNew((long) rows * 12, rows);
    for (int i = 0; i < rows; i++) {
      if (nulls && i % 7 == 3) {
        vector.setNull(i);
      } else {
        vector.setSafe(i, ("value " + i).getBytes(StandardCharsets.UTF_8));
      }
    }
    vector.setValueCount(rows);
    return vector;
  }

  private static FieldVector column(Kind kind, int rows, BufferAllocator allocator) {
    return switch (kind) {
      case BIGINT -> {
        BigIntVector vector = new BigIntVector("c", allocator);
        vector.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          if (i % 7 == 3) {
            vector.setNull(i);
          } else {
            vector.set(i, i * 31L);
          }
        }
        vector.setValueCount(rows);
        yield vector;
      }
      case DOUBLE -> {
        Float8Vector vector = new Float8Vector("c", allocator);
        vector.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          vector.set(i, i * 0.5);
        }
        vector.setValueCount(rows);
        yield vector;
      }
      case VARCHAR -> strings(rows, allocator, true);
      case LARGE_VARCHAR -> {
        LargeVarCharVector vector = new LargeVarCharVector("c", allocator);
        vector.allocateNew((long) rows * 12, rows);
        for (int i = 0; i < rows; i++) {
          vector.setSafe(i, ("value " + i).getBytes(StandardCharsets.UTF_8));
        }
        vector.setValueCount(rows);
        yield vector;
      }
      case VIEW_VARCHAR -> {
        ViewVarCharVector vector = new ViewVarCharVector("c", allocator);
        vector.allocateNew();
        for (int i = 0; i < rows; i++) {
          if (i % 7 == 3) {
            vector.setNull(i);
          } else {
            // Short values live in their view, longer ones in a data buffer.
            vector.setSafe(i, ((i % 2 == 0 ? "v" : "a value longer than twelve bytes ") + i)
                .getBytes(StandardCharsets.UTF_8));
          }
        }
        vector.setValueCount(rows);
        yield vector;
      }
      case BOOLEAN -> {
        BitVector vector = new BitVector("c", allocator);
        vector.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          vector.set(i, i % 3 == 0 ? 1 : 0);
        }
        vector.setValueCount(rows);
        yield vector;
      }
      case DECIMAL -> {
        DecimalVector vector = new DecimalVector("c", allocator, 18, 2);
        vector.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          vector.set(i, i * 101L);
        }
        vector.setValueCount(rows);
        yield vector;
      }
      case TIMESTAMP -> {
        TimeStampMicroVector vector = new TimeStampMicroVector("c", allocator);
        vector.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          vector.set(i, 1_700_000_000_000_000L + i * 1_000_000L);
        }
        vector.setValueCount(rows);
        yield vector;
      }
      case LIST -> {
        ListVector vector = ListVector.empty("c", allocator);
        var writer = vector.getWriter();
        for (int i = 0; i < rows; i++) {
          writer.setPosition(i);
          writer.startList();
          for (int j = 0; j < i % 5; j++) {
            writer.writeInt(i + j);
          }
          writer.endList();
        }
        writer.setValueCount(rows);
        yield vector;
      }
      case LARGE_LIST -> {
        LargeListVector vector = LargeListVector.empty("c", allocator);
        var writer = vector.getWriter();
        for (int i = 0; i < rows; i++) {
          writer.setPosition(i);
          writer.startList();
          for (int j = 0; j < i % 3; j++) {
            writer.writeBigInt(i + j);
          }
          writer.endList();
        }
        writer.setValueCount(rows);
        yield vector;
      }
      case FIXED_SIZE_LIST -> {
        FixedSizeListVector vector = FixedSizeListVector.empty("c", 3, allocator);
        vector.addOrGetVector(FieldType.nullable(MinorType.INT.getType()));
        IntVector values = (IntVector) vector.getDataVector();
        vector.allocateNew();
        values.allocateNew(rows * 3);
        for (int i = 0; i < rows * 3; i++) {
          values.setSafe(i, i);
        }
        values.setValueCount(rows * 3);
        for (int i = 0; i < rows; i++) {
          vector.setNotNull(i);
        }
        vector.setValueCount(rows);
        yield vector;
      }
      case LIST_VIEW -> {
        ListViewVector vector = ListViewVector.empty("c", allocator);
        var writer = vector.getWriter();
        for (int i = 0; i < rows; i++) {
          writer.setPosition(i);
          writer.startListView();
          for (int j = 0; j < i % 4; j++) {
            writer.writeInt(i * j);
          }
          writer.endListView();
        }
        writer.setValueCount(rows);
        yield vector;
      }
      case STRUCT -> {
        StructVector vector = StructVector.empty("c", allocator);
        IntVector a = vector.addOrGet("a", FieldType.nullable(MinorType.INT.getType()), IntVector.class);
        VarCharVector b = vector.addOrGet("b", FieldType.nullable(MinorType.VARCHAR.getType()), VarCharVector.class);
        vector.allocateNew();
        for (int i = 0; i < rows; i++) {
          if (i % 7 == 3) {
            vector.setNull(i);
          } else {
            vector.setIndexDefined(i);
          }
          a.setSafe(i, i);
          b.setSafe(i, ("b" + i).getBytes(StandardCharsets.UTF_8));
        }
        a.setValueCount(rows);
        b.setValueCount(rows);
        vector.setValueCount(rows);
        yield vector;
      }
      case MAP -> {
        // Made from its field, so even a map of no rows has its entries (a writer adds them only as it writes).
        Field entries = new Field(MapVector.DATA_VECTOR_NAME, FieldType.notNullable(ArrowType.Struct.INSTANCE),
            List.of(Field.notNullable(MapVector.KEY_NAME, MinorType.BIGINT.getType()),
                Field.nullable(MapVector.VALUE_NAME, MinorType.BIGINT.getType())));
        MapVector vector = (MapVector) new Field("c", FieldType.nullable(new ArrowType.Map(false)), List.of(entries))
            .createVector(allocator);
        vector.allocateNew();
        UnionMapWriter writer = vector.getWriter();
        for (int i = 0; i < rows; i++) {
          writer.setPosition(i);
          writer.startMap();
          for (int j = 0; j < i % 3; j++) {
            writer.startEntry();
            writer.key().bigInt().writeBigInt(j);
            writer.value().bigInt().writeBigInt(i * j);
            writer.endEntry();
          }
          writer.endMap();
        }
        writer.setValueCount(rows);
        yield vector;
      }
      case SPARSE_UNION -> {
        UnionVector vector = UnionVector.empty("c", allocator);
        vector.allocateNew();
        NullableIntHolder small = new NullableIntHolder();
        small.isSet = 1;
        NullableBigIntHolder large = new NullableBigIntHolder();
        large.isSet = 1;
        for (int i = 0; i < rows; i++) {
          if (i % 2 == 0) {
            small.value = i;
            vector.setType(i, MinorType.INT);
            vector.setSafe(i, small);
          } else {
            large.value = i;
            vector.setType(i, MinorType.BIGINT);
            vector.setSafe(i, large);
          }
        }
        vector.setValueCount(rows);
        yield vector;
      }
      case DENSE_UNION -> {
        DenseUnionVector vector = DenseUnionVector.empty("c", allocator);
        vector.allocateNew();
        byte ints = vector.registerNewTypeId(Field.nullable("i", MinorType.INT.getType()));
        byte longs = vector.registerNewTypeId(Field.nullable("l", MinorType.BIGINT.getType()));
        IntVector intValues = new IntVector("i", allocator);
        BigIntVector longValues = new BigIntVector("l", allocator);
        vector.addVector(ints, intValues);
        vector.addVector(longs, longValues);
        intValues = (IntVector) vector.getVectorByType(ints);
        longValues = (BigIntVector) vector.getVectorByType(longs);
        int intCount = 0;
        int longCount = 0;
        for (int i = 0; i < rows; i++) {
          if (vector.getOffsetBuffer().capacity() < (i + 1) * 4L || vector.getTypeBuffer().capacity() < i + 1) {
            vector.reAlloc();
          }
          if (i % 3 == 0) {
            vector.setTypeId(i, longs);
            longValues.setSafe(longCount, i);
            vector.getOffsetBuffer().setInt(i * 4L, longCount++);
          } else {
            vector.setTypeId(i, ints);
            intValues.setSafe(intCount, i);
            vector.getOffsetBuffer().setInt(i * 4L, intCount++);
          }
        }
        intValues.setValueCount(intCount);
        longValues.setValueCount(longCount);
        vector.setValueCount(rows);
        yield vector;
      }
      case RUN_END -> {
        Field field = new Field("c", FieldType.notNullable(ArrowType.RunEndEncoded.INSTANCE),
            List.of(Field.notNullable("run_ends", MinorType.INT.getType()),
                Field.nullable("values", MinorType.BIGINT.getType())));
        RunEndEncodedVector vector = (RunEndEncodedVector) field.createVector(allocator);
        vector.allocateNew();
        int runs = (rows + 2) / 3;
        IntVector ends = (IntVector) vector.getRunEndsVector();
        BigIntVector values = (BigIntVector) vector.getValuesVector();
        ends.allocateNew(runs);
        values.allocateNew(runs);
        for (int r = 0; r < runs; r++) {
          ends.set(r, Math.min(rows, (r + 1) * 3));
          values.set(r, r);
        }
        ends.setValueCount(runs);
        values.setValueCount(runs);
        vector.setValueCount(rows);
        yield vector;
      }
      case DICTIONARY -> throw new IllegalArgumentException("a dictionary column is built with its dictionary");
    };
  }
}
