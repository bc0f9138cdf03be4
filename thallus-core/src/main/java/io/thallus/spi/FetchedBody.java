package io.thallus.spi;

/**
 * A batch body a transport has fetched into this process: {@code length} bytes at {@code address}, valid until core
 * runs {@code release}, which it does once the consumer has released the last buffer of the batch. Core rebuilds the
 * batch on these bytes without copying them.
 */
public final class FetchedBody {
  private final long address;
  private final long length;
  private final long first;
  private final boolean packed;
  private final boolean borrowsPeerMemory;
  private final Runnable release;

  private FetchedBody(long address, long length, long first, boolean packed, boolean borrowsPeerMemory,
      Runnable release) {
    this.address = address;
    this.length = length;
    this.first = first;
    this.packed = packed;
    this.borrowsPeerMemory = borrowsPeerMemory;
    this.release = release;
  }

  /**
   * The bytes the descriptors name from address {@code first} on, as they lie on the server: the buffer at descriptor
   * address {@code a} is at {@code address + (a - first)}. {@code borrowsPeerMemory}: these bytes are the sender's
   * own (shared memory), so the sender may reuse them only after the consumer has released the batch; otherwise they
   * are a copy, and the sender may reuse its own as soon as this body is handed over.
   */
  public static FetchedBody mirrored(long address, long length, long first, boolean borrowsPeerMemory,
      Runnable release) {
    return new FetchedBody(address, length, first, false, borrowsPeerMemory, release);
  }

  /** A copy with the buffers one after the other, in descriptor order, each on a {@link PackedBody#ALIGNMENT} boundary. */
  public static FetchedBody packed(long address, long length, Runnable release) {
    return new FetchedBody(address, length, 0, true, false, release);
  }

  public long address() {
    return address;
  }

  public long length() {
    return length;
  }

  /** Whether the buffers lie one after the other in descriptor order, rather than as the descriptors place them. */
  public boolean packed() {
    return packed;
  }

  /** The descriptor address that lies at {@link #address()}, for a mirrored body. */
  public long first() {
    return first;
  }

  public boolean borrowsPeerMemory() {
    return borrowsPeerMemory;
  }

  /** Gives the bytes back to the transport. Core calls it once. */
  public void release() {
    release.run();
  }
}
