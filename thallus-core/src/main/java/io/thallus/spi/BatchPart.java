package io.thallus.spi;

import java.util.List;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;

/**
 * The layout of one record batch inside a BATCH message: its field nodes and buffers in Arrow's IPC order
 * (the order {@code VectorUnloader} produces and {@code VectorLoader} consumes), so every type round-trips.
 * A dictionary batch carries its dictionary id; the record batch itself has {@link #RECORDS}.
 *
 * <p>{@code variadicBufferCounts} says, for each view column (string_view, binary_view) in that order, how many of
 * the buffers after its views are its data buffers: the one thing the buffers and the schema cannot tell, and what
 * Arrow's loader needs to load such a column. Empty for a batch without view columns.
 */
public record BatchPart(long dictionaryId, boolean delta, long length, List<ArrowFieldNode> nodes,
    List<BufferDescriptor> buffers, List<Long> variadicBufferCounts) {
  /** The dictionary id of the part that holds the batch's records. */
  public static final long RECORDS = -1;

  public BatchPart {
    nodes = List.copyOf(nodes);
    buffers = List.copyOf(buffers);
    variadicBufferCounts = variadicBufferCounts == null ? List.of() : List.copyOf(variadicBufferCounts);
  }

  /** A part of a batch without view columns. */
  public BatchPart(long dictionaryId, boolean delta, long length, List<ArrowFieldNode> nodes,
      List<BufferDescriptor> buffers) {
    this(dictionaryId, delta, length, nodes, buffers, List.of());
  }

  public boolean isDictionary() {
    return dictionaryId != RECORDS;
  }

  /** The same part with its buffers where a transport placed them (everything else, variadic counts included, kept). */
  public BatchPart withBuffers(List<BufferDescriptor> placed) {
    return new BatchPart(dictionaryId, delta, length, nodes, placed, variadicBufferCounts);
  }
}
