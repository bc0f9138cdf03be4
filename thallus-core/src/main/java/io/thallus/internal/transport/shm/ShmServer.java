package io.thallus.internal.transport.shm;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.Hosts;
import io.thallus.spi.BatchPart;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.ForeignAllocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The shm transport's server side: a folder of segments per client, owned by the server's user only. */
final class ShmServer implements ServerTransport {
  private static final Logger LOG = LoggerFactory.getLogger(ShmServer.class);
  static final String PREFIX = "thallus-";
  private static final long MIN_SEGMENT = 1L << 20;
  private static final long MAX_GROWN_SEGMENT = 64L << 20;
  private static final long PAGE = 4096;

  private final Context context;
  private final Path base;
  private final SecureRandom random = new SecureRandom();

  private ShmServer(Context context, Path base) {
    this.context = context;
    this.base = base;
  }

  static ShmServer start(Context context) {
    Path devShm = Path.of("/dev/shm");
    Path base = Files.isDirectory(devShm) && Files.isWritable(devShm) ? devShm
        : Path.of(System.getProperty("java.io.tmpdir"));
    StaleFolders.sweep(base, PREFIX);
    return new ShmServer(context, base);
  }

  static void deleteFolder(Path folder) {
    try (DirectoryStream<Path> files = Files.newDirectoryStream(folder)) {
      for (Path file : files) {
        Files.deleteIfExists(file);
      }
      Files.deleteIfExists(folder);
    } catch (IOException e) {
      LOG.debug("could not delete {}: {}", folder, e.toString());
    }
  }

  @Override
  public ServerSession accept(InetSocketAddress client, Map<String, String> offer) {
    if (!Hosts.isLocal(client.getAddress())) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "shm needs the client on the server's host");
    }
    byte[] name = new byte[8];
    random.nextBytes(name);
    Path folder = base.resolve(PREFIX + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(name));
    try {
      Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "cannot create shared memory folder " + folder + ": " + e, e);
    }
    return new Session(folder);
  }

  @Override
  public void close() {}

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
      } catch (IOException | RuntimeException e) {
        arena.close();
        Files.deleteIfExists(file);
        throw e;
      }
      accounted = context.allocator().wrapForeignAllocation(new ForeignAllocation(size, memory.address()) {
        @Override
        protected void release0() {
          // The mapping is the session's to remove; this only ends the allocator's accounting.
        }
      });
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

  /** One client's segments; each placed body counts as live in its segment until core frees it. */
  private final class Session implements ServerSession {
    private final Path folder;
    private final ReentrantLock lock = new ReentrantLock();
    private final List<Segment> segments = new ArrayList<>();
    private Segment current;
    private long totalBytes;
    private long lastSize;
    private boolean closed;

    Session(Path folder) {
      this.folder = folder;
    }

    @Override
    public Map<String, String> welcomeParameters() {
      return Map.of(ShmTransport.DIRECTORY, folder.toString());
    }

    @Override
    public PlacedBody place(PackedBody body, Deadline deadline) {
      long needed = Math.max(PackedBody.ALIGNMENT, PackedBody.align(body.length()));
      Segment target;
      long offset;
      lock.lock();
      try {
        if (closed) {
          throw ThallusException.of(StatusCode.UNAVAILABLE, "the client's shared memory session is closed");
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
            segment.live--;
          } finally {
            lock.unlock();
          }
        }
      };
    }

    /** A new segment: twice the last one (up to 64 MiB), at least the batch, within the client's budget. */
    private Segment createSegment(long needed) {
      long preferred = Math.min(MAX_GROWN_SEGMENT, Math.max(MIN_SEGMENT, 2 * lastSize));
      long size = Math.max(roundToPage(needed), Math.min(preferred, context.memoryPerClient() - totalBytes));
      if (totalBytes + size > context.memoryPerClient()) {
        return null;
      }
      Path file = folder.resolve(segments.size() + ShmTransport.SEGMENT_SUFFIX);
      try {
        Segment segment = new Segment(segments.size(), file, size);
        segments.add(segment);
        totalBytes += size;
        lastSize = size;
        return segment;
      } catch (IOException | RuntimeException e) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "cannot create a shared memory segment of "
            + size + " bytes in " + folder + ": " + e.getMessage(), e);
      }
    }

    private static long roundToPage(long bytes) {
      return (bytes + PAGE - 1) / PAGE * PAGE;
    }

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
      deleteFolder(folder);
    }
  }
}
