package io.thallus.spi;

import java.util.List;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;

/**
 * The layout of one record batch inside a BATCH message: its field nodes and buffers in Arrow's IPC order
 * (the order {@code VectorUnloader} produces and {@code VectorLoader} consumes), so every type round-trips.
 * A dictionary batch carries its dictionary id; the record batch itself has {@link #RECORDS}.
 */
public record BatchPart(long dictionaryId, boolean delta, long length, List<ArrowFieldNode> nodes,
    List<BufferDescriptor> buffers) {
  /** The dictionary id of the part that holds the batch's records. */
  public static final long RECORDS = -1;

  public BatchPart {
    nodes = List.copyOf(nodes);
    buffers = List.copyOf(buffers);
  }

  public boolean isDictionary() {
    return dictionaryId != RECORDS;
  }
}
