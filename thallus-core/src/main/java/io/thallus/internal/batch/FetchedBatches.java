package io.thallus.internal.batch;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.FetchedBody;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;

/** Batches on fetched bodies, the same way on either side of a connection (client reads, server ingests). */
public final class FetchedBatches {
  private FetchedBatches() {}

  /**
   * The batch on a fetched body, without copying: the body becomes one Arrow allocation of {@code allocator} (so it
   * counts against that budget while the batch lives), and the batch's buffers slices of it. When the consumer
   * releases the last of them, the transport gets the bytes back. {@code peerHolds}: the sender keeps the body until
   * told; then {@code reportReleased} runs once the sender may reuse it — at once for a copy, on the consumer's
   * release for bytes that are the sender's own (shared memory).
   */
  public static BatchContents rebuild(BatchHeader header, FetchedBody body, BufferAllocator allocator,
      boolean peerHolds, Runnable reportReleased) {
    boolean reportNow = peerHolds && !body.borrowsPeerMemory();
    boolean reportOnRelease = peerHolds && body.borrowsPeerMemory();
    ArrowBuf whole;
    try {
      whole = allocator.wrapForeignAllocation(new ForeignAllocation(body.length(), body.address()) {
        @Override
        protected void release0() {
          body.release();
          if (reportOnRelease) {
            reportReleased.run();
          }
        }
      });
    } catch (RuntimeException e) {
      body.release();
      if (peerHolds) {
        reportReleased.run();
      }
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "no room in the memory budget ("
          + allocator.getLimit() + " bytes) for batch " + header.batchId() + " (" + body.length() + " bytes): "
          + e.getMessage(), e);
    }
    BatchContents contents;
    try (whole) {
      if (body.packed()) {
        long[] offsets = header.packedOffsets();
        int[] next = {0};
        contents = BatchLayouts.assemble(header, d -> slice(whole, header, offsets[next[0]++], d.length()));
      } else {
        contents = BatchLayouts.assemble(header, d -> slice(whole, header, d.address() - body.first(), d.length()));
      }
    }
    if (reportNow) {
      reportReleased.run();
    }
    return contents;
  }

  private static ArrowBuf slice(ArrowBuf whole, BatchHeader header, long offset, long length) {
    if (offset < 0 || length < 0 || offset + length > whole.capacity()) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " of stream "
          + header.streamId() + " names bytes " + offset + ".." + (offset + length) + " of a body of "
          + whole.capacity());
    }
    return whole.slice(offset, length);
  }
}
