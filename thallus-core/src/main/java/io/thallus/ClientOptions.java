package io.thallus;

import io.thallus.internal.protocol.Protocol;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** Typed client settings; {@link #defaults()} suits most uses. */
public final class ClientOptions {
  private final Duration connectTimeout;
  private final Duration timeout;
  private final int credits;
  private final int batchRows;
  private final long receivePoolBytes;
  private final int maxFrameBytes;
  private final Map<String, String> credentials;
  private final String clientName;
  private final Tls tls;
  private final BatchCompression resultCompression;

  private ClientOptions(Builder b) {
    this.tls = b.tls;
    this.connectTimeout = b.connectTimeout;
    this.timeout = b.timeout;
    this.credits = b.credits;
    this.batchRows = b.batchRows;
    this.receivePoolBytes = b.receivePoolBytes;
    this.maxFrameBytes = b.maxFrameBytes;
    this.credentials = Map.copyOf(b.credentials);
    this.clientName = b.clientName;
    this.resultCompression = b.resultCompression;
  }

  public static ClientOptions defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** How long connecting and the handshake may take. */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** How long any one wait for the server may take: a stream's schema, its next batch, a batch body. */
  public Duration timeout() {
    return timeout;
  }

  /** Batches the server may run ahead of the consumer, per stream. */
  public int credits() {
    return credits;
  }

  /** Rows per batch when a query does not say. */
  public int batchRows() {
    return batchRows;
  }

  /** The most memory received batches may hold in the transport's receive pool. */
  public long receivePoolBytes() {
    return receivePoolBytes;
  }

  /** The largest control frame the client accepts (ipc batches travel inside frames). */
  public int maxFrameBytes() {
    return maxFrameBytes;
  }

  public Map<String, String> credentials() {
    return credentials;
  }

  public String clientName() {
    return clientName;
  }

  /** TLS for the control connection, if the server speaks it. */
  public java.util.Optional<Tls> tls() {
    return java.util.Optional.ofNullable(tls);
  }

  /** How the server is asked to compress the batches of result streams ({@link BatchCompression#NONE}: not). */
  public BatchCompression resultCompression() {
    return resultCompression;
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.tls = tls;
    b.connectTimeout = connectTimeout;
    b.timeout = timeout;
    b.credits = credits;
    b.batchRows = batchRows;
    b.receivePoolBytes = receivePoolBytes;
    b.maxFrameBytes = maxFrameBytes;
    b.credentials.putAll(credentials);
    b.clientName = clientName;
    b.resultCompression = resultCompression;
    return b;
  }

  public static final class Builder {
    private Duration connectTimeout = Duration.ofSeconds(10);
    private Duration timeout = Duration.ofMinutes(5);
    private int credits = 4;
    private int batchRows = 65536;
    private long receivePoolBytes = 1L << 30;
    private int maxFrameBytes = Protocol.DEFAULT_CLIENT_MAX_FRAME;
    private final Map<String, String> credentials = new LinkedHashMap<>();
    private String clientName = "thallus-java";
    private Tls tls;
    private BatchCompression resultCompression = BatchCompression.NONE;

    private Builder() {}

    /** Speaks TLS on the control connection ({@link Tls#client}); the server's certificate is verified. */
    /**
     * Asks the server to compress each batch of this client's result streams with {@code compression} (Arrow's body
     * compression, decompressed here as it arrives): fewer bytes on a slow network for the server's CPU and this
     * client's. Batches the engine already made compressed travel as they are whatever this says. Default NONE.
     */
    public Builder resultCompression(BatchCompression compression) {
      this.resultCompression = Objects.requireNonNull(compression, "compression");
      return this;
    }

    public Builder tls(Tls client) {
      this.tls = java.util.Objects.requireNonNull(client);
      return this;
    }

    public Builder connectTimeout(Duration value) {
      this.connectTimeout = positive(value, "connectTimeout");
      return this;
    }

    public Builder timeout(Duration value) {
      this.timeout = positive(value, "timeout");
      return this;
    }

    public Builder credits(int value) {
      if (value < 1) {
        throw new IllegalArgumentException("credits must be at least 1, got " + value);
      }
      this.credits = value;
      return this;
    }

    public Builder batchRows(int value) {
      if (value < 1) {
        throw new IllegalArgumentException("batchRows must be at least 1, got " + value);
      }
      this.batchRows = value;
      return this;
    }

    public Builder receivePoolBytes(long value) {
      if (value < 1 << 20) {
        throw new IllegalArgumentException("receivePoolBytes must be at least 1 MiB, got " + value);
      }
      this.receivePoolBytes = value;
      return this;
    }

    public Builder maxFrameBytes(int value) {
      if (value < 1 << 16) {
        throw new IllegalArgumentException("maxFrameBytes must be at least 64 KiB, got " + value);
      }
      this.maxFrameBytes = value;
      return this;
    }

    /** A credential sent at HELLO, e.g. {@code credential("token", "...")}. */
    public Builder credential(String key, String value) {
      credentials.put(Objects.requireNonNull(key), Objects.requireNonNull(value));
      return this;
    }

    /** Sends a shared secret or bearer token at the handshake (the server's {@code Authentication.token}). */
    public Builder token(String secret) {
      return credential(Protocol.CREDENTIAL_TOKEN, secret);
    }

    /** Sends a user name and password at the handshake (the server's {@code Authentication.users}). */
    public Builder user(String name, String password) {
      credential(Protocol.CREDENTIAL_USER, name);
      return credential(Protocol.CREDENTIAL_PASSWORD, password);
    }

    public Builder clientName(String value) {
      this.clientName = Objects.requireNonNull(value);
      return this;
    }

    public ClientOptions build() {
      return new ClientOptions(this);
    }

    private static Duration positive(Duration value, String name) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, got " + value);
      }
      return value;
    }
  }
}
