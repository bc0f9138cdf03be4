package io.thallus.cli.sidebyside;

/** Something that moves one result to a consumer, timed by itself: a Thallus transport, a peer, a ceiling. */
public interface Peer extends AutoCloseable {
  /** What a peer is, for reports: ceilings are not contenders, and their data is not checked. */
  enum Kind { TRANSPORT, PEER, CEILING }

  String name();

  Kind kind();

  /**
   * Moves the whole result once. With {@code verify} the returned pull carries the data's {@link Checksum} (and
   * its time includes computing it, so verify pulls are never timed); {@code progress} may be null.
   */
  Pull pull(boolean verify, Progress progress);

  /** Whether {@link #pull} can check its data; ceilings that only move bytes cannot. */
  default boolean verifies() {
    return kind() != Kind.CEILING;
  }

  @Override
  default void close() {}
}
