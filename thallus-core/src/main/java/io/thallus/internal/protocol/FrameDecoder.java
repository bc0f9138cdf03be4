package io.thallus.internal.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;

/**
 * Cuts the control connection's byte stream into frames.
 *
 * <pre>
 * +----------------+----------+------------------------------+
 * | length: u32 BE | type: u8 | body: (length - 1) bytes     |
 * +----------------+----------+------------------------------+
 *                  |&lt;-------------- length ---------------&gt;|
 * </pre>
 *
 * The length counts the type byte and the body, so it is at least 1. A frame longer than the maximum fails with
 * {@link TooLongFrameException} before its body is buffered; a zero length with {@link CorruptedFrameException}.
 * The decoded frame is {@code type + body}, handed to {@link MessageCodec.Decoder}.
 */
public final class FrameDecoder extends LengthFieldBasedFrameDecoder {
  public static final int HEADER_BYTES = 4;

  /** Raised once a connection has authenticated: strangers may send only small frames. */
  private volatile int maxFrameLength;

  public FrameDecoder(int maxFrameLength) {
    // The parent's own limit would count the 4 length bytes too; ours is on what the length field says.
    super(Integer.MAX_VALUE, 0, HEADER_BYTES, 0, HEADER_BYTES, true);
    this.maxFrameLength = maxFrameLength;
  }

  /** Changes the maximum for the frames still to come (the event loop calls it between frames). */
  public void setMaxFrameLength(int bytes) {
    this.maxFrameLength = bytes;
  }

  /** A frame whose length field is over the maximum; it says how long the refused frame is. */
  public static final class FrameTooLongException extends TooLongFrameException {
    private static final long serialVersionUID = 1L;
    private final long frameLength;

    FrameTooLongException(long frameLength, int maximum) {
      super("frame of " + frameLength + " bytes is over the maximum of " + maximum + " bytes");
      this.frameLength = frameLength;
    }

    public long frameLength() {
      return frameLength;
    }
  }

  @Override
  protected long getUnadjustedFrameLength(ByteBuf buf, int offset, int length, java.nio.ByteOrder order) {
    long frameLength = buf.getUnsignedInt(offset);
    if (frameLength == 0) {
      throw new CorruptedFrameException("frame length 0: a frame has at least its type byte");
    }
    if (frameLength > maxFrameLength) {
      throw new FrameTooLongException(frameLength, maxFrameLength);
    }
    return frameLength;
  }
}
