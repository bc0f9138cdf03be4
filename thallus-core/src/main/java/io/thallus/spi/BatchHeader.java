package io.thallus.spi;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.List;

/**
 * Everything a BATCH message says about a batch except its transport-defined inline bytes: which stream, which
 * batch, and the layout of each part (dictionaries first, the records last). A transport that carries the batch
 * another way (ipc) may send no parts at all.
 */
public record BatchHeader(int streamId, long batchId, List<BatchPart> parts) {
  public BatchHeader {
    parts = List.copyOf(parts);
  }

  /** The bytes the parts' buffers add up to. */
  public long bufferBytes() {
    long total = 0;
    for (BatchPart part : parts) {
      for (BufferDescriptor buffer : part.buffers()) {
        total += buffer.length();
      }
    }
    return total;
  }

  /**
   * The one region every buffer lies in, for a transport that placed the body in one piece: its key, its first
   * address, and its length up to the end of the last buffer. Null when the batch has no bytes at all. A batch whose
   * buffers name more than one key is a protocol error.
   */
  public BufferDescriptor extent() {
    Integer key = null;
    long start = Long.MAX_VALUE;
    long end = 0;
    boolean anyBytes = false;
    for (BatchPart part : parts) {
      for (BufferDescriptor d : part.buffers()) {
        if (key == null) {
          key = d.key();
        } else if (d.key() != key) {
          throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + batchId + " spans more than one key");
        }
        anyBytes |= d.length() > 0;
        start = Math.min(start, d.address());
        end = Math.max(end, d.address() + d.length());
      }
    }
    if (!anyBytes) {
      return null;
    }
    if (start < 0 || end < start) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + batchId + " has a buffer outside any region: "
          + start + ".." + end);
    }
    return new BufferDescriptor(start, end - start, key);
  }
}
