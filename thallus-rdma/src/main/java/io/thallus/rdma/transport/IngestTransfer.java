package io.thallus.rdma.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.Locale;

/**
 * How an rdma client hands the server the bodies of the batches it ingests (the write direction), set with the
 * system property {@value #PROPERTY} on the client ({@code read}, {@code write} or {@code by-size}).
 */
public enum IngestTransfer {
  /**
   * The client copies each body into a registered buffer of its own and the server pulls it with one RDMA READ: the
   * read path turned around. Any size the server's budget takes.
   */
  READ,
  /**
   * The client pushes each body with one RDMA WRITE with immediate into a ring the server registered and advertised
   * in WELCOME, as long as the server's credit allows; the server copies it out and gives the room back. A body
   * larger than the ring fails, naming both sizes.
   */
  WRITE,
  /**
   * WRITE for bodies of at most half the server's ring (two fit, so one is written while the server takes the
   * other), READ for larger ones; READ where the server offers no ring.
   */
  BY_SIZE;

  /** System property choosing the client's transfer; default {@code read}. */
  public static final String PROPERTY = "thallus.rdma.ingestTransfer";

  /** The client's transfer as {@value #PROPERTY} sets it. */
  static IngestTransfer configured() {
    String value = System.getProperty(PROPERTY);
    if (value == null) {
      return READ;
    }
    String name = value.strip().toUpperCase(Locale.ROOT).replace('-', '_');
    for (IngestTransfer transfer : values()) {
      if (transfer.name().equals(name)) {
        return transfer;
      }
    }
    throw ThallusException.of(StatusCode.INVALID_ARGUMENT, PROPERTY + " must be read, write or by-size, not "
        + value);
  }

  /** Whether a body of {@code bytes} goes by WRITE into a ring of {@code ringBytes}. */
  boolean pushes(long bytes, long ringBytes) {
    return switch (this) {
      case READ -> false;
      case WRITE -> true;
      case BY_SIZE -> ringBytes > 0 && bytes <= ringBytes / 2;
    };
  }
}
