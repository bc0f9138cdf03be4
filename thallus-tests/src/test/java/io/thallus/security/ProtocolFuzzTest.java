package io.thallus.security;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.ReferenceCountUtil;
import io.thallus.StatusCode;
import io.thallus.internal.protocol.FrameDecoder;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.MessageCodec;

/**
 * The control protocol's decoders under Jazzer, coverage-guided: whatever bytes a peer sends, the only outcomes are
 * a message that re-encodes to the same bytes or a frame error (which closes the connection with PROTOCOL_ERROR).
 * Anything else (an IndexOutOfBounds, an OutOfMemoryError from a forged count, a leak) is a finding.
 *
 * <p>In the test suite Jazzer replays the seed corpus (valid frames of every type, under
 * src/test/resources/io/thallus/security/ProtocolFuzzTestInputs) plus what it finds in its time budget when
 * JAZZER_FUZZ=1; see README, "Security", for the long run.
 */
class ProtocolFuzzTest {
  private static final int MAX_FRAME = 1 << 16;

  /** One frame body (type byte + fields), as FrameDecoder hands it to the message decoder. */
  @FuzzTest(maxDuration = "60s")
  void anyFrameBodyDecodesToAMessageOrAFrameError(byte[] body) {
    ByteBuf frame = Unpooled.wrappedBuffer(body);
    Message message;
    try {
      message = MessageCodec.Decoder.decode(frame);
    } catch (CorruptedFrameException expected) {
      return;
    }
    try {
      // A message that parsed must mean exactly its bytes: encoding it again gives them back.
      ByteBuf again = Unpooled.buffer();
      MessageCodec.Encoder.encode(message, again);
      if (message instanceof Message.Batch batch) {
        again.writeBytes(batch.inline(), batch.inline().readerIndex(), batch.inline().readableBytes());
      }
      byte[] reencoded = new byte[again.readableBytes() - 4];
      again.getBytes(4, reencoded);
      again.release();
      if (!java.util.Arrays.equals(reencoded, expectedReencoding(message, body))) {
        throw new AssertionError(message.type() + " re-encodes to other bytes than it was decoded from");
      }
    } finally {
      ReferenceCountUtil.release(message);
    }
  }

  /**
   * The bytes a decoded body must encode back to: itself, except that an ERROR's status code this version does not
   * know reads as UNKNOWN (by design: a newer peer may send codes this one lacks), found by the fuzzer as
   * {@code finding-unknown-status-code}.
   */
  private static byte[] expectedReencoding(Message message, byte[] body) {
    if (message instanceof Message.Error error && error.code() == StatusCode.UNKNOWN) {
      byte[] expected = body.clone();
      expected[ERROR_CODE_OFFSET] = (byte) StatusCode.UNKNOWN.wireValue();
      return expected;
    }
    return body;
  }

  /** ERROR's body: type (1 byte), stream id (4), status code (1), message. */
  private static final int ERROR_CODE_OFFSET = 5;

  /** A byte stream, cut into frames by the length prefix and decoded, as the server's pipeline does. */
  @FuzzTest(maxDuration = "60s")
  void anyByteStreamIsFramedAndDecodedOrRefused(byte[] stream) {
    FirstError firstError = new FirstError();
    EmbeddedChannel channel =
        new EmbeddedChannel(new FrameDecoder(MAX_FRAME), new MessageCodec.Decoder(), firstError);
    channel.writeInbound(Unpooled.wrappedBuffer(stream));
    Object message;
    while ((message = channel.readInbound()) != null) {
      ReferenceCountUtil.release(message);
    }
    channel.finishAndReleaseAll();
    Throwable error = firstError.error;
    if (error != null) {
      Throwable cause = error instanceof DecoderException && error.getCause() != null
          && !(error instanceof CorruptedFrameException || error instanceof TooLongFrameException)
          ? error.getCause() : error;
      if (!(cause instanceof CorruptedFrameException || cause instanceof TooLongFrameException)) {
        throw new AssertionError("the pipeline failed with other than a frame error", error);
      }
    }
  }

  /**
   * The pipeline's tail, as the server's: keeps the first error and closes the channel there (the server answers
   * PROTOCOL_ERROR and closes). Catching it here also keeps EmbeddedChannel from logging every later one, which
   * was most of the fuzzer's time.
   */
  private static final class FirstError extends ChannelInboundHandlerAdapter {
    Throwable error;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
      ctx.fireChannelRead(message);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (error == null) {
        error = cause;
      }
      ctx.close();
    }
  }
}
