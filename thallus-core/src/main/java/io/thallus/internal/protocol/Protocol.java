package io.thallus.internal.protocol;

/** Constants of the control protocol. */
public final class Protocol {
  /** The first four bytes of a HELLO body: "THAL". Anything else is not a Thallus client. */
  public static final int MAGIC = 0x5448414C;
  /** The one protocol version this build speaks. */
  public static final int VERSION = 1;
  /** What a server accepts from a client by default: enough for SQL text, small enough to bound memory. */
  public static final int DEFAULT_SERVER_MAX_FRAME = 4 << 20;
  /** What a client accepts from a server by default: ipc batches travel inside frames. */
  public static final int DEFAULT_CLIENT_MAX_FRAME = 512 << 20;

  private Protocol() {}
}
