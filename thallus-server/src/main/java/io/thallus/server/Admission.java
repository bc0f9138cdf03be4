package io.thallus.server;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Who gets in, and how much one of them may hold: the policy every door of a server applies, the native port
 * ({@code ThallusServer.Builder#admission}) and the Flight SQL port ({@code ThallusFlightSqlServer.Builder#admission})
 * alike.
 *
 * <ul>
 *   <li><b>Strangers</b> (connections that have not authenticated yet) have {@link #handshakeTimeout} to do so (a
 *       native HELLO, a Flight call with valid credentials), else they are closed; at most {@link #maxStrangers}
 *       wait at once per door, and one more closes the oldest that has sent nothing (else the oldest), so silent
 *       sockets cost only other silent sockets their place.
 *   <li><b>Quotas</b>, well below the server-wide caps and checked atomically with them:
 *       {@link #maxConnectionsPerCredential} and {@link #maxConnectionsPerAddress} native connections (a Flight SQL
 *       session is one, made with its client's credentials, so the credential quota covers both doors);
 *       {@link #maxSessionsPerAddress} Flight SQL sessions per client address;
 *       {@link #maxStatementsPerCredential} statements of one credential running on engine threads at once, across
 *       all its connections (more wait their turn, holding no thread); and {@link #maxMemoryPerCredential} of Arrow
 *       memory that all of one credential's connections hold together.
 * </ul>
 *
 * <p>A credential is what the server checked: the shared token is one credential whatever user name comes with it,
 * and each user with a password is one. A server without authentication has no credentials to tell apart, so only
 * its address quotas apply.
 *
 * <pre>{@code
 * Admission.builder().maxConnectionsPerCredential(32).maxStatementsPerCredential(2).build()
 * }</pre>
 */
public final class Admission {
  private static final Admission DEFAULTS = builder().build();

  private final Duration handshakeTimeout;
  private final int maxStrangers;
  private final int maxConnectionsPerCredential;
  private final int maxConnectionsPerAddress;
  private final int maxSessionsPerAddress;
  private final int maxStatementsPerCredential;
  /** 0: a quarter of the server's memory budget. */
  private final long maxMemoryPerCredential;

  private Admission(Builder b) {
    this.handshakeTimeout = b.handshakeTimeout;
    this.maxStrangers = b.maxStrangers;
    this.maxConnectionsPerCredential = b.maxConnectionsPerCredential;
    this.maxConnectionsPerAddress = b.maxConnectionsPerAddress;
    this.maxSessionsPerAddress = b.maxSessionsPerAddress;
    this.maxStatementsPerCredential = b.maxStatementsPerCredential;
    this.maxMemoryPerCredential = b.maxMemoryPerCredential;
  }

  /** The defaults, sized for a demanding user of a shared server (see {@link Builder}). */
  public static Admission defaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from this policy's values. */
  public Builder toBuilder() {
    return new Builder().handshakeTimeout(handshakeTimeout).maxStrangers(maxStrangers)
        .maxConnectionsPerCredential(maxConnectionsPerCredential).maxConnectionsPerAddress(maxConnectionsPerAddress)
        .maxSessionsPerAddress(maxSessionsPerAddress).maxStatementsPerCredential(maxStatementsPerCredential)
        .memoryPerCredential(maxMemoryPerCredential);
  }

  /** How long a new connection has to authenticate before it is closed. */
  public Duration handshakeTimeout() {
    return handshakeTimeout;
  }

  /** Connections of one door waiting to authenticate at once; one more closes the oldest of them. */
  public int maxStrangers() {
    return maxStrangers;
  }

  /** Native connections (Flight SQL sessions among them) one credential may have open at once. */
  public int maxConnectionsPerCredential() {
    return maxConnectionsPerCredential;
  }

  /** Connections from one IP address at once, on each door. */
  public int maxConnectionsPerAddress() {
    return maxConnectionsPerAddress;
  }

  /** Flight SQL sessions the clients at one IP address may have open at once. */
  public int maxSessionsPerAddress() {
    return maxSessionsPerAddress;
  }

  /** Statements of one credential running on engine threads at once, over all its connections. */
  public int maxStatementsPerCredential() {
    return maxStatementsPerCredential;
  }

  /**
   * The Arrow memory one credential's connections (Flight SQL sessions among them) may hold together on a server;
   * empty for the default, a quarter of that server's {@code memoryLimit}.
   */
  public OptionalLong maxMemoryPerCredential() {
    return maxMemoryPerCredential == 0 ? OptionalLong.empty() : OptionalLong.of(maxMemoryPerCredential);
  }

  @Override
  public String toString() {
    return "Admission[handshakeTimeout=" + handshakeTimeout + ", maxStrangers=" + maxStrangers
        + ", maxConnectionsPerCredential=" + maxConnectionsPerCredential + ", maxConnectionsPerAddress="
        + maxConnectionsPerAddress + ", maxSessionsPerAddress=" + maxSessionsPerAddress
        + ", maxStatementsPerCredential=" + maxStatementsPerCredential + ", maxMemoryPerCredential="
        + (maxMemoryPerCredential == 0 ? "a quarter of memoryLimit" : maxMemoryPerCredential) + "]";
  }

  /** Typed settings of an {@link Admission}. */
  public static final class Builder {
    private Duration handshakeTimeout = Duration.ofSeconds(5);
    private int maxStrangers = 1024;
    private int maxConnectionsPerCredential = 256;
    private int maxConnectionsPerAddress = 256;
    private int maxSessionsPerAddress = 64;
    private int maxStatementsPerCredential = 4;
    private long maxMemoryPerCredential;

    private Builder() {}

    /**
     * The Arrow memory one credential's connections may hold together on the server (default: a quarter of the
     * server's {@code memoryLimit}); each connection still holds at most {@code memoryPerClient} inside it. A result
     * stream asks for its next batch only while its credential's connections hold less (streams checking at once may
     * pass it by a batch each); one that waits past the I/O deadline gets RESOURCE_EXHAUSTED naming it, and other
     * credentials keep the rest of the server's memory. What a connection holds for its client counts in it: result
     * batches, ingested batches (an ingest asks for more only while the share has room, else one at a time), frames
     * being written, and its transport's shm segments and exposed rdma buffers.
     */
    public Builder maxMemoryPerCredential(long bytes) {
      if (bytes <= 0) {
        throw new IllegalArgumentException("maxMemoryPerCredential must be positive, got " + bytes);
      }
      this.maxMemoryPerCredential = bytes;
      return this;
    }

    /** Sets the raw value, 0 meaning the default (for {@link Admission#toBuilder}). */
    private Builder memoryPerCredential(long bytes) {
      this.maxMemoryPerCredential = bytes;
      return this;
    }

    /** How long a new connection has to authenticate (default 5 s); then it is closed. */
    public Builder handshakeTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("handshakeTimeout must be positive, got " + timeout);
      }
      this.handshakeTimeout = timeout;
      return this;
    }

    /**
     * Connections of one door that have not authenticated yet (default 1024). One more closes the oldest that has
     * sent nothing (else the oldest), so silent sockets cannot lock out a client that authenticates promptly.
     */
    public Builder maxStrangers(int count) {
      this.maxStrangers = positive(count, "maxStrangers");
      return this;
    }

    /**
     * Native connections one credential may have open at once (default 256, a quarter of the server's 1024); a
     * Flight SQL session is one. One more is refused with RESOURCE_EXHAUSTED naming this quota.
     */
    public Builder maxConnectionsPerCredential(int count) {
      this.maxConnectionsPerCredential = positive(count, "maxConnectionsPerCredential");
      return this;
    }

    /**
     * Connections from one IP address at once (default 256), counted by each door: native connections, and Flight
     * SQL's HTTP/2 connections. A Flight SQL server's sessions reach the native port from its own address, so this
     * must leave room for its {@code maxSessions}.
     */
    public Builder maxConnectionsPerAddress(int count) {
      this.maxConnectionsPerAddress = positive(count, "maxConnectionsPerAddress");
      return this;
    }

    /** Flight SQL sessions the clients at one IP address may have open at once (default 64 of 256). */
    public Builder maxSessionsPerAddress(int count) {
      this.maxSessionsPerAddress = positive(count, "maxSessionsPerAddress");
      return this;
    }

    /**
     * Statements of one credential that run on engine threads at once, over all its connections (default 4); the
     * others wait their turn holding no thread, so one credential cannot take the engine's threads, or the memory
     * its plans need, from everyone else. Four is enough to keep the machine busy: DuckDB runs each statement on
     * all its worker threads.
     */
    public Builder maxStatementsPerCredential(int count) {
      this.maxStatementsPerCredential = positive(count, "maxStatementsPerCredential");
      return this;
    }

    public Admission build() {
      return new Admission(this);
    }

    private static int positive(int value, String name) {
      if (value <= 0) {
        throw new IllegalArgumentException(name + " must be positive, got " + value);
      }
      return value;
    }
  }

  /**
   * The connections of one door that have not authenticated yet, in arrival order. Both doors keep their strangers
   * in one of these, so both let the same one go when too many wait.
   *
   * @param <C> a door's connection
   */
  public static final class Strangers<C> {
    private final int max;
    private final Predicate<C> hasSpoken;
    private final LinkedHashSet<C> waiting = new LinkedHashSet<>();

    /** At most {@code max} strangers; {@code hasSpoken} tells one that has sent a byte. */
    public Strangers(int max, Predicate<C> hasSpoken) {
      if (max <= 0) {
        throw new IllegalArgumentException("max must be positive, got " + max);
      }
      this.max = max;
      this.hasSpoken = Objects.requireNonNull(hasSpoken);
    }

    /**
     * A new connection. When more than the maximum now wait, one of the others is returned for the caller to close:
     * the oldest that has not sent a byte, else the oldest. Never the newcomer: strangers that have all sent half a
     * request must not keep the next client (or a health probe) out until their deadline.
     */
    public synchronized Optional<C> arrive(C connection) {
      waiting.add(connection);
      if (waiting.size() <= max) {
        return Optional.empty();
      }
      // At least two wait here (max is positive), so the oldest is never the newcomer.
      C victim = waiting.stream().filter(c -> c != connection && !hasSpoken.test(c)).findFirst()
          .orElseGet(() -> waiting.iterator().next());
      waiting.remove(victim);
      return Optional.of(victim);
    }

    /** The connection has authenticated or gone; true when it was still waiting. */
    public synchronized boolean leave(C connection) {
      return waiting.remove(connection);
    }

    /** Strangers waiting now. */
    public synchronized int count() {
      return waiting.size();
    }
  }

  /**
   * Counts what each key (an address, a credential) holds, up to a maximum, atomically: a take at the limit is
   * refused, however many race for the last place.
   *
   * @param <K> what is counted per
   */
  public static final class Quota<K> {
    private final int max;
    private final Map<K, Integer> held = new ConcurrentHashMap<>();

    public Quota(int max) {
      if (max <= 0) {
        throw new IllegalArgumentException("max must be positive, got " + max);
      }
      this.max = max;
    }

    /** Takes one place for {@code key}; false (and nothing taken) when it already holds the maximum. */
    public boolean tryTake(K key) {
      boolean[] taken = new boolean[1];
      held.compute(key, (k, count) -> {
        int now = count == null ? 0 : count;
        if (now >= max) {
          return count;
        }
        taken[0] = true;
        return now + 1;
      });
      return taken[0];
    }

    /** Gives back one place of {@code key}. */
    public void giveBack(K key) {
      held.computeIfPresent(key, (k, count) -> count <= 1 ? null : count - 1);
    }

    /** The places {@code key} holds now. */
    public int held(K key) {
      return held.getOrDefault(key, 0);
    }

    public int max() {
      return max;
    }
  }
}
