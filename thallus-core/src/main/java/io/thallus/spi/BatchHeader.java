package io.thallus.spi;

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
}
