package io.thallus.rdma.push;

import io.thallus.StatusCode;
import io.thallus.ThallusException;

/**
 * What a {@link PushReceiver} advertises to its sender, over any channel (the exchange's control connection): where
 * its ring lies in its memory, the key that lets the sender's queue pair write there, the ring's size, and how many
 * messages may be in it at once (the receives it keeps posted). The key reaches the ring's bytes and nothing else,
 * and only from queue pairs of the receiver's protection domain that were connected to take writes: a receiver
 * that takes pushes from several peers gives each a domain of its own (as the rdma transport gives each client),
 * or one peer's key would let it write into another's ring.
 */
public record PushRing(long address, int remoteKey, int bytes, int messages) {
  public PushRing {
    if (bytes < 1 || messages < 1) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a push ring holds at least one byte and one message, "
          + "not " + bytes + " bytes and " + messages + " messages");
    }
  }

  /** {@code address:rkey:bytes:messages}, for the control channel. */
  public String encode() {
    return Long.toUnsignedString(address) + ":" + Integer.toUnsignedString(remoteKey) + ":" + bytes + ":" + messages;
  }

  public static PushRing decode(String text) {
    String[] parts = text.split(":");
    if (parts.length != 4) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "not a push ring: " + text);
    }
    try {
      return new PushRing(Long.parseUnsignedLong(parts[0]), Integer.parseUnsignedInt(parts[1]),
          Integer.parseInt(parts[2]), Integer.parseInt(parts[3]));
    } catch (NumberFormatException e) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "not a push ring: " + text, e);
    }
  }
}
