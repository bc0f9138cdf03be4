package io.thallus.cli;

import io.thallus.spi.BatchContents;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;

/** The ceiling for a same-host transport: one thread copying the same buffers into one reused destination. */
final class MemcpyBaseline implements AutoCloseable {
  private final List<BatchContents> prepared;
  private final Arena arena = Arena.ofConfined();
  private final MemorySegment destination;

  MemcpyBaseline(List<BatchContents> prepared) {
    this.prepared = prepared;
    long largest = prepared.stream().mapToLong(BatchContents::bufferBytes).max().orElse(8);
    // Page-aligned and touched once (allocation zeroes it), like a transport's reused receive buffers.
    destination = arena.allocate(largest, 4096);
  }

  double copySeconds() {
    long start = System.nanoTime();
    for (BatchContents batch : prepared) {
      long offset = 0;
      for (ArrowBuf buffer : batch.records().getBuffers()) {
        long length = buffer.readableBytes();
        MemoryUtil.copyMemory(buffer.memoryAddress(), destination.address() + offset, length);
        offset += length;
      }
    }
    return (System.nanoTime() - start) / 1e9;
  }

  @Override
  public void close() {
    arena.close();
  }
}
