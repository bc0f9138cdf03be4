package io.thallus.internal.batch;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.FieldVector;

/**
 * Checks that Arrow can unload a caller's vectors at all, before it tries. Unloading sizes each buffer from the
 * vector's own offsets (a string column's data buffer ends at its last offset); a negative or oversized last offset
 * makes Arrow's {@code ArrowRecordBatch} fail halfway, after it has taken a reference on the buffers before the bad
 * one, and those references are then never given back. So a corrupt root is refused here, naming the column, with
 * nothing taken; the full check of what is sent ({@link BatchValidator}) runs on the unloaded batch.
 */
public final class UnloadCheck {
  private UnloadCheck() {}

  /** INVALID_ARGUMENT naming the column when a buffer of {@code vectors} (children included) would size wrong. */
  public static void check(List<FieldVector> vectors) {
    for (FieldVector vector : vectors) {
      check(vector, vector.getName());
    }
  }

  private static void check(FieldVector vector, String path) {
    // getFieldBuffers sets each buffer's reader and writer index from the vector's value count and offsets, as
    // unloading does; it takes no reference.
    for (ArrowBuf buffer : vector.getFieldBuffers()) {
      long end = buffer.writerIndex();
      if (end < buffer.readerIndex() || end > buffer.capacity()) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "column \"" + path + "\": its offsets or length "
            + "make a buffer end at " + end + ", outside the buffer's " + buffer.capacity() + " bytes");
      }
    }
    for (FieldVector child : vector.getChildrenFromFields()) {
      check(child, path + "." + child.getName());
    }
  }
}
