package io.thallus.benchmarks.soak;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Batches whose string offsets lie, as an attacker sends them: each is a (BIGINT k, VARCHAR s) batch built with Arrow
 * and then corrupted in its offset buffer, so the bytes on the wire are what Arrow's own writer sends.
 */
final class CorruptBatches {
  static final Schema SCHEMA = new Schema(List.of(
      new Field("k", FieldType.nullable(new ArrowType.Int(64, true)), null),
      new Field("s", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

  /** How the offsets lie. */
  enum Lie {
    /** An offset far past the end of the data buffer. */
    JUMPS,
    /** A negative offset. */
    NEGATIVE,
    /** An offset below the one before it. */
    BACKWARDS,
    /** The last offset a little past the data: the server's memory after the body would land in the row. */
    PAST_THE_BODY
  }

  private CorruptBatches() {}

  /**
   * A batch of {@code rows} rows (2: the body travels inline; 8,192: out of line on every transport) whose offsets
   * lie as {@code lie} says. The caller closes it.
   */
  static VectorSchemaRoot of(BufferAllocator allocator, Lie lie, int rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
    try {
      BigIntVector keys = (BigIntVector) root.getVector("k");
      VarCharVector strings = (VarCharVector) root.getVector("s");
      root.allocateNew();
      for (int i = 0; i < rows; i++) {
        keys.setSafe(i, i);
        strings.setSafe(i, ("value " + i).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(rows);
      int at = rows / 2 + 1;
      int offset = switch (lie) {
        case JUMPS -> 192 << 10;
        case NEGATIVE -> -8;
        case BACKWARDS -> strings.getOffsetBuffer().getInt((long) (at - 1) * 4) - 3;
        case PAST_THE_BODY -> strings.getOffsetBuffer().getInt((long) rows * 4) + 4096;
      };
      strings.getOffsetBuffer().setInt((long) (lie == Lie.PAST_THE_BODY ? rows : at) * 4, offset);
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }
}
