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
   * Where each descriptor's buffer lies in a body packed in descriptor order (buffers one after the other, each on a
   * {@link PackedBody#ALIGNMENT} boundary): how a transport that gathers scattered buffers into one place of its own
   * lays them out, and how core finds them there ({@link FetchedBody#packed}).
   */
  public long[] packedOffsets() {
    int count = 0;
    for (BatchPart part : parts) {
      count += part.buffers().size();
    }
    long[] offsets = new long[count];
    long total = 0;
    int i = 0;
    for (BatchPart part : parts) {
      for (BufferDescriptor d : part.buffers()) {
        offsets[i++] = total;
        total = PackedBody.align(total + d.length());
      }
    }
    return offsets;
  }

  /** The bytes a body packed in descriptor order takes ({@link #packedOffsets}), up to its last buffer's aligned end. */
  public long packedLength() {
    long total = 0;
    for (BatchPart part : parts) {
      for (BufferDescriptor d : part.buffers()) {
        total = PackedBody.align(total + d.length());
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
