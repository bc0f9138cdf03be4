package io.thallus.internal.transport.shm;

import io.netty.buffer.ByteBuf;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchLayouts;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.ReleasedBatches;
import io.thallus.spi.Transport;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;

/**
 * The shm transport's client side: maps each segment the first time a batch names it, and lends the batch's range
 * of it as one {@link ArrowBuf} (no copy). When the consumer releases the batch, its id waits to be reported on
 * the stream's next NEXT. A segment is unmapped only when no batch still lives in it, so closing never pulls
 * memory from under a batch the caller keeps.
 */
final class ShmClientSession implements ClientSession {
  private final BufferAllocator allocator;
  private final Path folder;
  private final Map<Integer, Mapped> mapped = new ConcurrentHashMap<>();
  private final ReleasedBatches released = new ReleasedBatches();
  private volatile boolean closed;

  private ShmClientSession(BufferAllocator allocator, Path folder) {
    this.allocator = allocator;
    this.folder = folder;
  }

  static ShmClientSession open(ClientOffer.Context context, Map<String, String> welcome) {
    Path folder = Path.of(Transport.requireParameter(welcome, ShmTransport.DIRECTORY));
    if (!Files.isDirectory(folder)) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the server's shared memory folder " + folder
          + " is not visible here: client and server are not on the same host");
    }
    if (!Files.isReadable(folder) || !Files.isExecutable(folder)) {
      // Checked here, not at the first batch, so that the client can still choose another transport.
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the server's shared memory folder " + folder
          + " is not open to this user: shm needs client and server to run as the same user");
    }
    return new ShmClientSession(context.allocator(), folder);
  }

  /** One segment mapped read-only, with the number of batches that still borrow from it. */
  private final class Mapped {
    final Arena arena = Arena.ofShared();
    final MemorySegment memory;
    private int loans;
    private boolean retired;

    Mapped(Path file) throws IOException {
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
        memory = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
      } catch (IOException | RuntimeException e) {
        arena.close();
        throw e;
      }
    }

    synchronized void lend() {
      loans++;
    }

    synchronized void giveBack() {
      loans--;
      if (retired && loans == 0) {
        arena.close();
      }
    }

    synchronized void retire() {
      retired = true;
      if (loans == 0) {
        arena.close();
      }
    }
  }

  private Mapped segment(int id) {
    Mapped segment = mapped.get(id);
    if (segment != null) {
      return segment;
    }
    synchronized (mapped) {
      segment = mapped.get(id);
      if (segment == null) {
        Path file = folder.resolve(id + ShmTransport.SEGMENT_SUFFIX);
        try {
          segment = new Mapped(file);
        } catch (IOException e) {
          throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "cannot map shared memory segment " + file + ": " + e, e);
        }
        mapped.put(id, segment);
      }
      return segment;
    }
  }

  @Override
  public void onBatch(BatchHeader header, ByteBuf inline, BatchSink sink) {
    BatchContents contents;
    try {
      contents = borrow(header, sink);
    } catch (ThallusException e) {
      sink.fail(e);
      return;
    }
    sink.deliver(header, contents);
  }

  private BatchContents borrow(BatchHeader header, BatchSink sink) {
    BatchLayouts.Span span = BatchLayouts.span(header);
    if (span == null) {
      // Nothing to map: the batch needs no server memory, so it is released at once.
      release(header.streamId(), header.batchId(), sink);
      return BatchLayouts.assemble(header, d -> allocator.getEmpty());
    }
    int key = span.key();
    long start = span.start();
    long end = span.end();
    Mapped segment = segment(key);
    if (start < 0 || end < start || end > segment.memory.byteSize()) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " lies outside segment "
          + key + " (" + start + ".." + end + " of " + segment.memory.byteSize() + " bytes)");
    }
    long first = start;
    segment.lend();
    ArrowBuf body;
    try {
      body = allocator.wrapForeignAllocation(
          new Loan(segment, segment.memory.address() + first, end - first, header, sink));
    } catch (RuntimeException e) {
      segment.giveBack();
      throw e;
    }
    try (body) {
      return BatchLayouts.assemble(header, d -> body.slice(d.address() - first, d.length()));
    }
  }

  /** A batch's range of a segment: released by Arrow when the consumer is done with the last of its buffers. */
  private final class Loan extends ForeignAllocation {
    private final Mapped segment;
    private final int streamId;
    private final long batchId;
    private final BatchSink sink;

    Loan(Mapped segment, long address, long size, BatchHeader header, BatchSink sink) {
      super(size, address);
      this.segment = segment;
      this.streamId = header.streamId();
      this.batchId = header.batchId();
      this.sink = sink;
    }

    @Override
    protected void release0() {
      segment.giveBack();
      release(streamId, batchId, sink);
    }
  }

  private void release(int streamId, long batchId, BatchSink sink) {
    if (closed) {
      return;
    }
    released.add(streamId, batchId, sink);
  }

  @Override
  public long[] takeReleases(int streamId) {
    return released.take(streamId);
  }


  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    synchronized (mapped) {
      mapped.values().forEach(Mapped::retire);
      mapped.clear();
    }
    // The folder is the server's; it is the client's to remove only when the server died without removing it,
    // and only if it is what a server of this user makes: a client never deletes where a server merely points.
    StaleFolders.removeIfStale(folder, ShmServer.PREFIX);
  }
}
