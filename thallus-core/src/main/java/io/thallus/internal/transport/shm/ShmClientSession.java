package io.thallus.internal.transport.shm;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.FetchedBody;
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

/**
 * The shm transport's client side: maps each segment the first time a batch names it, and lends the batch's range
 * of it (no copy). A segment is unmapped only when no batch still lives in it, so closing never pulls memory from
 * under a batch the caller keeps.
 */
final class ShmClientSession implements ClientSession {
  private final Path folder;
  private final Map<Integer, Mapped> mapped = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private ShmClientSession(Path folder) {
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
    return new ShmClientSession(folder);
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

  /** Lends the batch's range of its segment, as it is: the server may reuse it once the consumer is done. */
  @Override
  public void fetch(BatchHeader header, Fetched done) {
    if (closed) {
      done.failed(ThallusException.of(StatusCode.CANCELLED, "the shm session is closed"));
      return;
    }
    FetchedBody body;
    try {
      BufferDescriptor extent = header.extent();
      if (extent == null) {
        throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " has no bytes to map");
      }
      Mapped segment = segment(extent.key());
      long end = extent.address() + extent.length();
      if (end > segment.memory.byteSize()) {
        throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " lies outside segment "
            + extent.key() + " (" + extent.address() + ".." + end + " of " + segment.memory.byteSize() + " bytes)");
      }
      segment.lend();
      body = FetchedBody.mirrored(segment.memory.address() + extent.address(), extent.length(), extent.address(),
          true, segment::giveBack);
    } catch (ThallusException e) {
      done.failed(e);
      return;
    }
    done.body(body);
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
