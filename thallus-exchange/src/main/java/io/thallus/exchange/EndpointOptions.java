package io.thallus.exchange;

import io.thallus.BatchCompression;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;

/** How an {@link ExchangeEndpoint} runs: its memory, its address, where it spills, its transports and its pushes. */
public final class EndpointOptions {
  private final BufferAllocator allocator;
  private final String bindHost;
  private final int port;
  private final Path spillFolder;
  private final long memoryBound;
  private final List<String> transports;
  private final String peerTransport;
  private final boolean push;
  private final long pushBufferBytesPerPeer;
  private final long pushChunkBytes;
  private final long joinBytes;
  private final Duration timeout;
  private final java.util.Optional<String> secret;
  private final BatchCompression compression;

  private EndpointOptions(Builder b) {
    this.allocator = b.allocator;
    this.bindHost = b.bindHost;
    this.port = b.port;
    this.spillFolder = b.spillFolder;
    this.memoryBound = b.memoryBound;
    this.transports = b.transports;
    this.peerTransport = b.peerTransport;
    this.push = b.push;
    this.pushBufferBytesPerPeer = b.pushBufferBytesPerPeer;
    this.pushChunkBytes = b.pushChunkBytes;
    this.joinBytes = b.joinBytes;
    this.timeout = b.timeout;
    this.secret = b.secret;
    this.compression = b.compression;
  }

  /** Options with the endpoint's parent allocator and spill folder, the rest default. */
  public static Builder builder(BufferAllocator allocator, Path spillFolder) {
    return new Builder(allocator, spillFolder);
  }

  public BufferAllocator allocator() {
    return allocator;
  }

  public String bindHost() {
    return bindHost;
  }

  public int port() {
    return port;
  }

  public Path spillFolder() {
    return spillFolder;
  }

  public long memoryBound() {
    return memoryBound;
  }

  public List<String> transports() {
    return transports;
  }

  public String peerTransport() {
    return peerTransport;
  }

  public boolean push() {
    return push;
  }

  public long pushBufferBytesPerPeer() {
    return pushBufferBytesPerPeer;
  }

  public long pushChunkBytes() {
    return pushChunkBytes;
  }

  public long joinBytes() {
    return joinBytes;
  }

  /** The secret peers must present, and that this endpoint presents to its peers; empty: anyone may connect. */
  public java.util.Optional<String> secret() {
    return secret;
  }

  public Duration timeout() {
    return timeout;
  }

  /** How map outputs are kept and sent: compressed batch by batch with this codec, or not (NONE). */
  public BatchCompression compression() {
    return compression;
  }

  public static final class Builder {
    private final BufferAllocator allocator;
    private final Path spillFolder;
    private String bindHost = "127.0.0.1";
    private int port;
    private long memoryBound = 512L << 20;
    private List<String> transports = List.of();
    private String peerTransport = "tcp";
    private boolean push = true;
    private long pushBufferBytesPerPeer = 256L << 20;
    private long pushChunkBytes = 4L << 20;
    private long joinBytes = 64L << 20;
    private Duration timeout = Duration.ofMinutes(2);
    private java.util.Optional<String> secret = java.util.Optional.empty();
    private BatchCompression compression = BatchCompression.NONE;

    private Builder(BufferAllocator allocator, Path spillFolder) {
      this.allocator = Objects.requireNonNull(allocator, "allocator");
      this.spillFolder = Objects.requireNonNull(spillFolder, "spillFolder");
    }

    /** The address to listen at and to tell peers (default 127.0.0.1). */
    public Builder bindHost(String host) {
      this.bindHost = Objects.requireNonNull(host, "host");
      return this;
    }

    /** The port (default 0: any free port; {@link ExchangeEndpoint#address()} says which). */
    public Builder port(int value) {
      if (value < 0 || value > 65535) {
        throw new IllegalArgumentException("port " + value + " is not 0 to 65535");
      }
      this.port = value;
      return this;
    }

    /** Map output held in memory before it spills to the spill folder (default 512 MiB). */
    public Builder memoryBound(long bytes) {
      this.memoryBound = positive(bytes, "memory bound");
      return this;
    }

    /**
     * The transports this endpoint serves (default: every transport found, as a {@code ThallusServer}'s default:
     * shm, cma, tcp and ipc, and rdma where thallus-rdma is on the class path).
     */
    public Builder transports(List<String> names) {
      if (names.isEmpty()) {
        throw new IllegalArgumentException("an endpoint serves at least one transport");
      }
      this.transports = List.copyOf(names);
      return this;
    }

    /** The transport this endpoint asks its peers for (default tcp; shm or cma between endpoints of one host). */
    public Builder peerTransport(String name) {
      this.peerTransport = Objects.requireNonNull(name, "name");
      return this;
    }

    /** Whether map outputs are pushed to their partitions' endpoints as they are made (default true). */
    public Builder push(boolean value) {
      this.push = value;
      return this;
    }

    /** What one peer's pushes may hold here before more are refused (default 256 MiB). */
    public Builder pushBufferBytesPerPeer(long bytes) {
      this.pushBufferBytesPerPeer = positive(bytes, "push buffer");
      return this;
    }

    /** A map pushes to a peer once this much is waiting for it, and at commit (default 4 MiB). */
    public Builder pushChunkBytes(long bytes) {
      this.pushChunkBytes = positive(bytes, "push chunk");
      return this;
    }

    /** A pull's answer joins a partition's batches into batches of up to this many bytes (default 64 MiB). */
    public Builder joinBytes(long bytes) {
      this.joinBytes = positive(bytes, "join size");
      return this;
    }

    /** How long a connection, pull or push may take (default 2 minutes). */
    public Builder timeout(Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException("timeout " + value + " is not positive");
      }
      this.timeout = value;
      return this;
    }

    /**
     * A secret shared by the endpoints of one application (a Spark application's {@code spark.authenticate} secret):
     * this endpoint refuses connections that do not present it, and presents it to its peers. Without one (the
     * default) anyone who reaches the port may pull and push.
     */
    public Builder secret(String value) {
      if (Objects.requireNonNull(value, "secret").isEmpty()) {
        throw new IllegalArgumentException("the secret is empty");
      }
      this.secret = java.util.Optional.of(value);
      return this;
    }

    /**
     * Keeps each map output batch compressed with {@code codec} (Arrow's body compression: LZ4_FRAME or ZSTD),
     * compressed once as {@link MapOutput#add} copies it: memory, spill files, pushes and pull answers hold and move
     * the compressed bytes, and {@link MapOutput#commit}'s sizes are compressed bytes. Readers get plain batches,
     * decompressed and checked as they arrive. Worth it where the network is slower than the codec (tcp between
     * hosts), not between endpoints of one host (shm, cma). Default NONE.
     */
    public Builder compression(BatchCompression codec) {
      this.compression = Objects.requireNonNull(codec, "codec");
      return this;
    }

    public EndpointOptions build() {
      return new EndpointOptions(this);
    }

    private static long positive(long value, String what) {
      if (value <= 0) {
        throw new IllegalArgumentException("the " + what + " of " + value + " bytes is not positive");
      }
      return value;
    }
  }
}
