package io.thallus.security;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchValidator;
import io.thallus.spi.BatchContents;
import io.thallus.testing.SampleBatches;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.DictionaryUtility;

/**
 * The batch validator under Jazzer, with structure-aware mutations of real batches of every kind
 * ({@link SampleBatches}): the input picks a kind and a row count, then any number of edits (overwrite 1, 4 or 8
 * bytes of a buffer, shorten a buffer, set or nudge a field node's length or null count, the row count, a view
 * column's variadic buffer count), in the records or in the dictionary. The property: the validator refuses the batch
 * with INVALID_ARGUMENT, or the batch is safe to read: Arrow's own loader takes it and every value of every column
 * (dictionary values through their indices) reads through Arrow's getters with bounds checks on (this JVM leaves
 * {@code arrow.enable_unsafe_memory_access} false), with no IndexOutOfBoundsException or other failure. Anything else
 * is a finding.
 *
 * <p>Input layout: byte 0 the kind, byte 1 the rows (0-63), then edits of 8 bytes each: operation, target (bit 7: the
 * dictionary), position (2 bytes, big-endian), value (4 bytes, big-endian). In the test suite Jazzer replays the seed
 * corpus (src/test/resources/io/thallus/security/BatchFuzzTestInputs: every kind unedited, and each with a typical
 * lie); see docs/security.md, "Fuzzing", for the long run.
 */
class BatchFuzzTest {
  private static final SampleBatches.Kind[] KINDS = SampleBatches.Kind.values();
  private static final int EDIT = 8;

  static {
    if (Boolean.getBoolean("arrow.enable_unsafe_memory_access")) {
      throw new IllegalStateException("the fuzz target reads through Arrow's bounds checks, which this JVM turns off");
    }
  }

  @FuzzTest(maxDuration = "60s")
  void aMutatedBatchIsRefusedOrSafeToRead(byte[] input) {
    if (input.length < 2) {
      return;
    }
    SampleBatches.Kind kind = KINDS[(input[0] & 0xFF) % KINDS.length];
    int rows = (input[1] & 0xFF) % 64;
    try (BufferAllocator allocator = new RootAllocator();
         SampleBatches.Sample sample = SampleBatches.of(kind, rows, allocator)) {
      Mutable records = new Mutable(sample.contents().records());
      Mutable dictionary = sample.contents().dictionaries().isEmpty() ? null
          : new Mutable(sample.contents().dictionaries().getFirst().getDictionary());
      ByteBuffer edits = ByteBuffer.wrap(input, 2, input.length - 2);
      while (edits.remaining() >= EDIT) {
        int operation = edits.get() & 0xFF;
        int target = edits.get() & 0xFF;
        int position = edits.getShort() & 0xFFFF;
        int value = edits.getInt();
        Mutable part = (target & 0x80) != 0 && dictionary != null ? dictionary : records;
        part.edit(operation, target & 0x7F, position, value);
      }
      try (ArrowRecordBatch editedRecords = records.build();
           ArrowRecordBatch editedDictionary = dictionary == null ? null : dictionary.build()) {
        List<ArrowDictionaryBatch> dictionaries = editedDictionary == null ? List.of()
            : List.of(new ArrowDictionaryBatch(SampleBatches.DICTIONARY_ID, editedDictionary, false));
        BatchContents edited = new BatchContents(dictionaries, editedRecords);
        try {
          new BatchValidator(sample.schema()).check(edited);
        } catch (ThallusException refused) {
          if (refused.status().code() != StatusCode.INVALID_ARGUMENT) {
            throw new AssertionError("refused with " + refused.status().code(), refused);
          }
          return;
        }
        readEveryValue(sample.schema(), edited, allocator);
      }
    }
  }

  /** Loads the batch as a receiver does and reads every value through Arrow's getters. */
  private static void readEveryValue(Schema schema, BatchContents contents, BufferAllocator allocator) {
    Map<Long, org.apache.arrow.vector.dictionary.Dictionary> dictionaries = new java.util.HashMap<>();
    List<Field> fields = new ArrayList<>();
    for (Field field : schema.getFields()) {
      fields.add(DictionaryUtility.toMemoryFormat(field, allocator, dictionaries));
    }
    try (VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(fields), allocator)) {
      try {
        for (ArrowDictionaryBatch batch : contents.dictionaries()) {
          FieldVector values = dictionaries.get(batch.getDictionaryId()).getVector();
          // Not closed: that would close the dictionary's vector, which the finally below closes after reading.
          VectorSchemaRoot one = new VectorSchemaRoot(List.of(values.getField()), List.of(values),
              batch.getDictionary().getLength());
          new VectorLoader(one).load(batch.getDictionary());
        }
        new VectorLoader(root).load(contents.records());
        for (FieldVector column : root.getFieldVectors()) {
          ValueVector values = column.getField().getDictionary() == null ? null
              : dictionaries.get(column.getField().getDictionary().getId()).getVector();
          for (int i = 0; i < column.getValueCount(); i++) {
            Object value;
            try {
              value = column.getObject(i);
            } catch (java.time.DateTimeException | ArithmeticException outOfRange) {
              // A value Java's types cannot hold (a timestamp past year 999999999): read, and out of range.
              continue;
            }
            if (values != null && value != null) {
              values.getObject(((Number) value).intValue());
            }
          }
        }
      } catch (RuntimeException e) {
        throw new AssertionError("the validator passed a batch that cannot be read: " + e, e);
      } finally {
        dictionaries.values().forEach(d -> d.getVector().close());
      }
    }
  }

  /** A batch's nodes and buffers, edited in place (each buffer a copy), then rebuilt. */
  private static final class Mutable {
    private final int length;
    private int editedLength;
    private final List<ArrowFieldNode> nodes;
    private final List<ArrowBuf> buffers;
    private final List<Long> variadic;

    Mutable(ArrowRecordBatch batch) {
      length = batch.getLength();
      editedLength = length;
      nodes = new ArrayList<>(batch.getNodes());
      buffers = new ArrayList<>(batch.getBuffers());
      variadic = new ArrayList<>(batch.getVariadicBufferCounts());
    }

    void edit(int operation, int target, int position, int value) {
      ArrowBuf buffer = buffers.isEmpty() ? null : buffers.get(target % buffers.size());
      int node = nodes.isEmpty() ? -1 : target % nodes.size();
      switch (operation % 10) {
        case 0 -> {
          if (buffer != null && buffer.capacity() >= 4) {
            buffer.setInt(position % (buffer.capacity() - 3), value);
          }
        }
        case 1 -> {
          if (buffer != null && buffer.capacity() >= 1) {
            buffer.setByte(position % buffer.capacity(), value);
          }
        }
        case 2 -> {
          if (buffer != null && buffer.capacity() >= 8) {
            buffer.setLong(position % (buffer.capacity() - 7), (long) value << (position & 31));
          }
        }
        case 3 -> {
          if (buffer != null) {
            // Shortened: a slice the validator sees as the whole buffer.
            buffers.set(target % buffers.size(), buffer.slice(0, position % (buffer.capacity() + 1)));
          }
        }
        case 4 -> {
          if (node >= 0) {
            nodes.set(node, new ArrowFieldNode(value, nodes.get(node).getNullCount()));
          }
        }
        case 5 -> {
          if (node >= 0) {
            nodes.set(node, new ArrowFieldNode(nodes.get(node).getLength() + (byte) value,
                nodes.get(node).getNullCount()));
          }
        }
        case 6 -> {
          if (node >= 0) {
            nodes.set(node, new ArrowFieldNode(nodes.get(node).getLength(), (byte) value));
          }
        }
        case 7 -> editedLength = value;
        case 8 -> editedLength = length + (byte) value;
        default -> {
          if (!variadic.isEmpty()) {
            variadic.set(target % variadic.size(), (long) (byte) value);
          }
        }
      }
    }

    ArrowRecordBatch build() {
      return new ArrowRecordBatch(editedLength, nodes, buffers, NoCompressionCodec.DEFAULT_BODY_COMPRESSION,
          variadic, false);
    }
  }
}
