package io.thallus.server;

/**
 * Whether a result stream makes its next batch on a producer thread while it sends the last one, so that the
 * engine's production of batch k+1 and the transport's work on batch k (a copy into shared memory, a socket write)
 * run at once instead of taking turns ({@link ThallusServer.Builder#overlap}).
 *
 * <p>The overlap needs a core of its own per stream: where the engine and the streams already keep every core busy
 * (two cores and DuckDB's workers), the producer only competes with them and adds a hand-off per batch. So the
 * default, {@link #auto()}, lends producer threads only while the machine has cores to spare; {@link #off()} never
 * does; {@link #producers(int)} always does, up to that many streams at once, whatever the machine.
 */
public final class Overlap {
  private static final int AUTO = -1;
  private static final Overlap AUTOMATIC = new Overlap(AUTO);
  private static final Overlap NEVER = new Overlap(0);

  /** {@link #AUTO}, or the most producer threads at once (0: none). */
  private final int producers;

  private Overlap(int producers) {
    this.producers = producers;
  }

  /**
   * Overlap where the machine has cores to spare (the default): producer threads are lent while the streams at work
   * and the producers already lent leave a core free beside the event loops and the engine's own workers. On two
   * cores that is never: streams run exactly as with {@link #off()}.
   */
  public static Overlap auto() {
    return AUTOMATIC;
  }

  /** Never: every stream makes its batches on its own thread, between sends. */
  public static Overlap off() {
    return NEVER;
  }

  /**
   * Always, up to {@code threads} streams at once (each borrows one producer at a time), however many cores the
   * machine has: for machines whose cores the server does not share, and for tests.
   */
  public static Overlap producers(int threads) {
    if (threads <= 0) {
      throw new IllegalArgumentException("producer threads must be positive, got " + threads
          + " (Overlap.off() for none)");
    }
    return new Overlap(threads);
  }

  /** Whether the machine decides ({@link #auto()}). */
  public boolean isAuto() {
    return producers == AUTO;
  }

  /** The most producer threads at once when set by {@link #producers(int)}; 0 for {@link #off()}, -1 for auto. */
  public int producers() {
    return producers;
  }

  /** {@code auto}, {@code off}, or the number of producer threads: the CLI's spelling. */
  @Override
  public String toString() {
    return producers == AUTO ? "auto" : producers == 0 ? "off" : Integer.toString(producers);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Overlap that && that.producers == producers;
  }

  @Override
  public int hashCode() {
    return Integer.hashCode(producers);
  }
}
