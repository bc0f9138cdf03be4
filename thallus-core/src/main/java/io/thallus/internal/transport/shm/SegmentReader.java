package io.thallus.internal.transport.shm;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.FetchedBody;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The receiving side of shm, either way (results on the client, ingested batches on the server): maps each of the
 * sender's segments the first time a batch names it, and lends the batch's range of it (no copy). A segment is
 * unmapped only when no batch still lives in it, so closing never pulls memory from under a batch still in use.
 * Only plain files are mapped, never through a link. The sender lets go of a segment that stayed empty by deleting
 * its file (and never reuses its id): when a new segment comes, the idle mappings whose files are gone are unmapped,
 * so their memory goes back to the system.
 */
final class SegmentReader implements AutoCloseable {
  private final Path folder;
  private final String filePrefix;
  private final Map<Integer, Mapped> mapped = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** Maps the segments {@code <filePrefix><n>.seg} of {@code folder}. */
  SegmentReader(Path folder, String filePrefix) {
    this.folder = folder;
    this.filePrefix = filePrefix;
  }

  /** One segment mapped read-only, with the number of batches that still borrow from it. */
  private final class Mapped {
    final Arena arena = Arena.ofShared();
    final MemorySegment memory;
    final Path file;
    private int loans;
    private boolean retired;

    Mapped(Path file) throws IOException {
      this.file = file;
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
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
      if (retired) {
        return;
      }
      retired = true;
      if (loans == 0) {
        arena.close();
      }
    }

    /** Whether no batch borrows from it and the sender has deleted its file (let the segment go). */
    synchronized boolean isAbandoned() {
      return loans == 0 && !Files.exists(file, LinkOption.NOFOLLOW_LINKS);
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
        Path file = folder.resolve(filePrefix + id + ShmTransport.SEGMENT_SUFFIX);
        try {
          if (!Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isRegularFile()) {
            throw new IOException("not a plain file");
          }
          segment = new Mapped(file);
          // A new segment often means the sender let older ones go: their mappings go too.
          mapped.values().removeIf(old -> {
            boolean abandoned = old.isAbandoned();
            if (abandoned) {
              old.retire();
            }
            return abandoned;
          });
        } catch (IOException e) {
          throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "cannot map shared memory segment " + file + ": " + e,
              e);
        }
        mapped.put(id, segment);
      }
      return segment;
    }
  }

  /** Lends the batch's range of its segment, as it is: the sender may reuse it once the consumer is done. */
  FetchedBody fetch(BatchHeader header) {
    if (closed) {
      throw ThallusException.of(StatusCode.CANCELLED, "the shm session is closed");
    }
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
    return FetchedBody.mirrored(segment.memory.address() + extent.address(), extent.length(), extent.address(),
        true, segment::giveBack);
  }

  /** The segments mapped now (for tests). */
  int mappedCount() {
    return mapped.size();
  }

  /** Unmaps every segment no batch lives in any more; the others go with their last batch. Idempotent. */
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
  }
}
