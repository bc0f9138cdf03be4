package io.thallus.internal.transport.shm;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.Hosts;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BodyFetcher;
import io.thallus.spi.Deadline;
import io.thallus.spi.IngestFetcher;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shm transport's server side: a folder of segments per client, owned by the server's user only
 * ({@link SegmentWriter}); ingested batches are mapped from the segments the client writes into that same folder
 * ({@link SegmentReader}). A client's segments count against its connection's own budget (inside its credential's),
 * and a segment that has held no body for {@link #IDLE_SEGMENT} is let go, so a connection that has stopped reading
 * holds no segments for long and cannot starve its credential's other connections.
 */
final class ShmServer implements ServerTransport {
  private static final Logger LOG = LoggerFactory.getLogger(ShmServer.class);
  static final String PREFIX = "thallus-";
  /** Segment files of results (the server's) and of ingested batches (the client's, in the server's folder). */
  static final String RESULTS = "";
  static final String INGESTED = "in-";

  /** How long a segment may stay empty before it is let go. */
  static final java.time.Duration IDLE_SEGMENT = java.time.Duration.ofSeconds(2);

  private final Context context;
  private final Path base;
  private final SecureRandom random = new SecureRandom();
  private final java.util.Set<Session> sessions = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /** Lets go of idle segments, also of connections that send nothing more (so no place or release would). */
  private final java.util.concurrent.ScheduledExecutorService sweeper =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "thallus-shm-segment-sweeper");
        thread.setDaemon(true);
        return thread;
      });

  private ShmServer(Context context, Path base) {
    this.context = context;
    this.base = base;
    long period = IDLE_SEGMENT.toMillis() / 2;
    sweeper.scheduleWithFixedDelay(this::releaseIdleSegments, period, period,
        java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  private void releaseIdleSegments() {
    for (Session session : sessions) {
      try {
        session.segments.releaseIdle(IDLE_SEGMENT);
      } catch (RuntimeException e) {
        // One session's failure must not stop the sweeps of the others.
        LOG.warn("releasing idle shared memory segments failed: {}", e.toString());
      }
    }
  }

  /** Where segment folders go: {@code /dev/shm} where it is writable, else the temporary folder. */
  static Path base() {
    Path devShm = Path.of("/dev/shm");
    return Files.isDirectory(devShm) && Files.isWritable(devShm) ? devShm
        : Path.of(System.getProperty("java.io.tmpdir"));
  }

  static ShmServer start(Context context) {
    Path base = base();
    StaleFolders.sweep(base, PREFIX);
    return new ShmServer(context, base);
  }

  /**
   * A new folder {@code thallus-<pid>-<random>} under {@code base} that only this user can open: named for this
   * process, so a sweep removes it if the process dies without doing so.
   */
  static Path createFolder(Path base, SecureRandom random) {
    byte[] name = new byte[8];
    random.nextBytes(name);
    Path folder = base.resolve(PREFIX + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(name));
    try {
      Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "cannot create shared memory folder " + folder + ": " + e, e);
    }
    return folder;
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
  public ServerSession accept(InetSocketAddress client, Map<String, String> offer,
      org.apache.arrow.memory.BufferAllocator clientMemory) {
    if (!Hosts.isLocal(client.getAddress())) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "shm needs the client on the server's host");
    }
    Session session = new Session(new SegmentWriter(createFolder(base, random), RESULTS, true, clientMemory,
        context.memoryPerClient()));
    sessions.add(session);
    return session;
  }

  @Override
  public void close() {
    sweeper.shutdownNow();
  }

  /** One client's segments; each placed body counts as live in its segment until core frees it. */
  private final class Session implements ServerSession {
    private final SegmentWriter segments;

    Session(SegmentWriter segments) {
      this.segments = segments;
    }

    @Override
    public Map<String, String> welcomeParameters() {
      return Map.of(ShmTransport.DIRECTORY, segments.folder().toString());
    }

    @Override
    public PlacedBody place(PackedBody body, Deadline deadline) {
      return segments.place(body, deadline);
    }

    @Override
    public long releaseUnused() {
      return segments.releaseIdle(java.time.Duration.ZERO);
    }

    /**
     * Maps the segments the client writes ingested batches into: files of its own in this session's folder, so they
     * go with the folder when the connection ends, whatever became of the client.
     */
    @Override
    public IngestFetcher ingestFetcher(Map<String, String> parameters) {
      SegmentReader reader = new SegmentReader(segments.folder(), INGESTED);
      return new IngestFetcher() {
        @Override
        public void fetch(BatchHeader header, Fetched done) {
          BodyFetcher.now(done, () -> reader.fetch(header));
        }

        @Override
        public void close() {
          reader.close();
        }
      };
    }

    @Override
    public void close() {
      sessions.remove(this);
      segments.close();
    }
  }
}
