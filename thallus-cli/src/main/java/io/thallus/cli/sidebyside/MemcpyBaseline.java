package io.thallus.cli.sidebyside;

import io.thallus.spi.BatchContents;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The ceiling for a same-host transport: one thread copying the same bytes, once, into memory of the same size that
 * is already faulted in (it is reused across runs, as transports reuse theirs). A smaller, reused destination would
 * stay in the CPU cache and flatter the copy.
 */
public final class MemcpyBaseline implements AutoCloseable {
  private final List<BatchContents> prepared;
  private final Arena arena = Arena.ofConfined();
  private final MemorySegment destination;

  public MemcpyBaseline(List<BatchContents> prepared) {
    this.prepared = prepared;
    long total = prepared.stream().mapToLong(BatchContents::bufferBytes).sum();
    // Page-aligned and touched once (allocation zeroes it).
    destination = arena.allocate(Math.max(total, 8), 4096);
  }

  public double copySeconds() {
    long start = System.nanoTime();
    long offset = 0;
    for (BatchContents batch : prepared) {
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
