package io.thallus.spi;

import io.thallus.BatchCompression;
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
 *
 * <p>{@code compression} says how each of the part's buffers is stored ({@link BatchCompression}): as it is, or as
 * Arrow's compressed body buffer (8-byte little-endian uncompressed length, -1 for "stored as is", then the codec's
 * bytes). A transport moves the bytes the descriptors name and never looks inside them.
 */
public record BatchPart(long dictionaryId, boolean delta, long length, List<ArrowFieldNode> nodes,
    List<BufferDescriptor> buffers, List<Long> variadicBufferCounts, BatchCompression compression) {
  /** The dictionary id of the part that holds the batch's records. */
  public static final long RECORDS = -1;

  public BatchPart {
    nodes = List.copyOf(nodes);
    buffers = List.copyOf(buffers);
    variadicBufferCounts = variadicBufferCounts == null ? List.of() : List.copyOf(variadicBufferCounts);
    compression = compression == null ? BatchCompression.NONE : compression;
  }

  /** An uncompressed part. */
  public BatchPart(long dictionaryId, boolean delta, long length, List<ArrowFieldNode> nodes,
      List<BufferDescriptor> buffers, List<Long> variadicBufferCounts) {
    this(dictionaryId, delta, length, nodes, buffers, variadicBufferCounts, BatchCompression.NONE);
  }

  /** A part of a batch without view columns. */
  public BatchPart(long dictionaryId, boolean delta, long length, List<ArrowFieldNode> nodes,
      List<BufferDescriptor> buffers) {
    this(dictionaryId, delta, length, nodes, buffers, List.of());
  }

  public boolean isDictionary() {
    return dictionaryId != RECORDS;
  }

  /** Whether the part's buffers are compressed. */
  public boolean isCompressed() {
    return compression != BatchCompression.NONE;
  }

  /**
   * The same part with its buffers where a transport placed them (everything else, variadic counts and compression
   * included, kept).
   */
  public BatchPart withBuffers(List<BufferDescriptor> placed) {
    return new BatchPart(dictionaryId, delta, length, nodes, placed, variadicBufferCounts, compression);
  }
}
