package io.thallus.internal.transport.shm;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchPart;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sending side of shm, either way (results on the server, ingested batches on the client): a folder of segment
 * files only this user can open, each mapped and pre-faulted, into which bodies are copied one after the other; a
 * segment is reused once every body in it has been released. What the segments take counts against
 * {@code allocator} and stays within {@code budget}. A segment left empty for a while can be let go
 * ({@link #releaseIdle}), so a connection that has stopped reading results gives its memory back to its budget
 * (a segment is never reused under another id: its reader knows a released one by its file being gone).
 */
final class SegmentWriter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SegmentWriter.class);
  private static final long MIN_SEGMENT = 1L << 20;
  private static final long MAX_GROWN_SEGMENT = 64L << 20;
  /**
   * A new segment holds at most this many bodies of the size that made it: segments that grow far past the bodies
   * they carry would hold their connection's budget (and its credential's share) for bytes no body uses.
   */
  private static final long MAX_BODIES_PER_NEW_SEGMENT = 8;
  private static final long PAGE = 4096;

  private final Path folder;
  private final String filePrefix;
  private final boolean ownsFolder;
  private final BufferAllocator allocator;
  private final long budget;
  private final ReentrantLock lock = new ReentrantLock();
  private final List<Segment> segments = new ArrayList<>();
  private Segment current;
  private long totalBytes;
  private long lastSize;
  /** The id (and file name) of the next segment: ids are never reused. */
  private int nextId;
  private boolean closed;

  /**
   * Writes segments named {@code <filePrefix><n>.seg} into {@code folder}, which exists and belongs to this user
   * only; {@code ownsFolder}: the folder is this writer's to delete when it closes (else only its own files go).
   */
  SegmentWriter(Path folder, String filePrefix, boolean ownsFolder, BufferAllocator allocator, long budget) {
    this.folder = folder;
    this.filePrefix = filePrefix;
    this.ownsFolder = ownsFolder;
    this.allocator = allocator;
    this.budget = budget;
  }

  Path folder() {
    return folder;
  }

  /** One mapped, pre-faulted segment file; batches are placed one after the other and it is reset when empty. */
  private final class Segment {
    final int id;
    final Path file;
    final long size;
    final Arena arena = Arena.ofShared();
    final MemorySegment memory;
    final ArrowBuf accounted;
    long used;
    int live;
    /** When the last body in it was freed (or it was made), while {@link #live} is 0. */
    long emptySinceNanos = System.nanoTime();

    Segment(int id, Path file, long size) throws IOException {
      this.id = id;
      this.file = file;
      this.size = size;
      try (FileChannel channel = FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW,
          StandardOpenOption.READ, StandardOpenOption.WRITE),
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
        // Writing zeros through the file (not the mapping) allocates every page now: a full /dev/shm then fails
        // here with an IOException instead of killing the process with SIGBUS on a later write to the mapping.
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(size, 1 << 20));
        long written = 0;
        while (written < size) {
          zeros.clear().limit((int) Math.min(zeros.capacity(), size - written));
          written += channel.write(zeros, written);
        }
        memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
        accounted = allocator.wrapForeignAllocation(new ForeignAllocation(size, memory.address()) {
          @Override
          protected void release0() {
            // The mapping is the session's to remove; this only ends the allocator's accounting.
          }
        });
      } catch (IOException | RuntimeException e) {
        // A budget with no room for it (OutOfMemoryException) leaves nothing behind either.
        arena.close();
        Files.deleteIfExists(file);
        throw e;
      }
    }

    boolean fits(long length) {
      return size - used >= length;
    }

    void destroy() {
      accounted.close();
      arena.close();
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        LOG.debug("could not delete {}: {}", file, e.toString());
      }
    }
  }

  /** As {@link io.thallus.spi.BodyPlacer#place}: null when the budget has no room until bodies are released. */
  PlacedBody place(PackedBody body, Deadline deadline) {
    long needed = Math.max(PackedBody.ALIGNMENT, PackedBody.align(body.length()));
    Segment target;
    long offset;
    lock.lock();
    try {
      if (closed) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the shared memory segments are closed");
      }
      target = current != null && current.fits(needed) ? current : null;
      for (int i = 0; target == null && i < segments.size(); i++) {
        Segment segment = segments.get(i);
        if (segment.live == 0 && segment.size >= needed) {
          segment.used = 0;
          target = segment;
        }
      }
      if (target == null) {
        target = createSegment(needed);
      }
      if (target == null) {
        return null; // no room until the client releases something
      }
      current = target;
      offset = target.used;
      target.used += needed;
      target.live++;
    } finally {
      lock.unlock();
    }
    Segment segment = target;
    // The copy runs outside the lock: the range is this body's alone until it is freed.
    body.copyTo(segment.memory.address() + offset);
    List<BatchPart> parts = body.relocated(offset, segment.id);
    return new PlacedBody() {
      @Override
      public List<BatchPart> parts() {
        return parts;
      }

      @Override
      public void close() {
        lock.lock();
        try {
          if (--segment.live == 0) {
            segment.emptySinceNanos = System.nanoTime();
          }
        } finally {
          lock.unlock();
        }
      }
    };
  }

  /**
   * A new segment: twice the last one (up to 64 MiB, and up to 8 bodies of this one's size), at least the batch,
   * within the client's budget and the room its allocator has now. Null when the budget has no room until bodies in
   * this writer are released.
   */
  private Segment createSegment(long needed) {
    long preferred = Math.min(Math.min(MAX_GROWN_SEGMENT, MAX_BODIES_PER_NEW_SEGMENT * roundToPage(needed)),
        Math.max(MIN_SEGMENT, 2 * lastSize));
    long room = Math.min(budget - totalBytes, roundDownToPage(allocator.getHeadroom()));
    long size = Math.max(roundToPage(needed), Math.min(preferred, room));
    if (totalBytes + size > budget) {
      return null;
    }
    int id = nextId;
    Path file = folder.resolve(filePrefix + id + ShmTransport.SEGMENT_SUFFIX);
    try {
      Segment segment = new Segment(id, file, size);
      nextId++;
      segments.add(segment);
      totalBytes += size;
      lastSize = size;
      return segment;
    } catch (org.apache.arrow.memory.OutOfMemoryException e) {
      if (segments.stream().anyMatch(held -> held.live > 0)) {
        return null; // the budget frees up as the client releases what it holds here
      }
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "no room in the memory budget for a shared memory "
          + "segment of " + size + " bytes: " + e.getMessage(), e);
    } catch (IOException | RuntimeException e) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "cannot create a shared memory segment of "
          + size + " bytes in " + folder + ": " + e.getMessage(), e);
    }
  }

  /**
   * Lets go of every segment that has held no body for at least {@code idle}: unmapped, its file deleted and its
   * bytes given back to the allocator. The next body goes into a new segment, sized afresh. Returns the bytes let go.
   */
  long releaseIdle(java.time.Duration idle) {
    long now = System.nanoTime();
    long released = 0;
    lock.lock();
    try {
      if (closed) {
        return 0;
      }
      for (java.util.Iterator<Segment> it = segments.iterator(); it.hasNext(); ) {
        Segment segment = it.next();
        if (segment.live == 0 && now - segment.emptySinceNanos >= idle.toNanos()) {
          it.remove();
          totalBytes -= segment.size;
          released += segment.size;
          if (current == segment) {
            current = null;
          }
          segment.destroy();
        }
      }
      if (segments.isEmpty()) {
        // Growth starts again from the smallest segment: the next burst may be a small one.
        lastSize = 0;
      }
    } finally {
      lock.unlock();
    }
    return released;
  }

  /** The bytes of segments this writer holds now (for tests). */
  long segmentBytes() {
    lock.lock();
    try {
      return totalBytes;
    } finally {
      lock.unlock();
    }
  }

  private static long roundDownToPage(long bytes) {
    return Math.max(0, bytes) / PAGE * PAGE;
  }

  private static long roundToPage(long bytes) {
    return (bytes + PAGE - 1) / PAGE * PAGE;
  }

  /** Unmaps and deletes every segment, then the folder if it is this writer's. Idempotent. */
  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      segments.forEach(Segment::destroy);
      segments.clear();
    } finally {
      lock.unlock();
    }
    if (ownsFolder) {
      ShmServer.deleteFolder(folder);
    }
  }
}
