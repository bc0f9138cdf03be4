package io.thallus.security;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.ReferenceCountUtil;
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
      if (!java.util.Arrays.equals(reencoded, body)) {
        throw new AssertionError(message.type() + " re-encodes to other bytes than it was decoded from");
      }
    } finally {
      ReferenceCountUtil.release(message);
    }
  }

  /** A byte stream, cut into frames by the length prefix and decoded, as the server's pipeline does. */
  @FuzzTest(maxDuration = "60s")
  void anyByteStreamIsFramedAndDecodedOrRefused(byte[] stream) {
    EmbeddedChannel channel = new EmbeddedChannel(new FrameDecoder(MAX_FRAME), new MessageCodec.Decoder());
    try {
      channel.writeInbound(Unpooled.wrappedBuffer(stream));
      Object message;
      while ((message = channel.readInbound()) != null) {
        ReferenceCountUtil.release(message);
      }
      channel.finishAndReleaseAll();
    } catch (DecoderException e) {
      Throwable cause = e instanceof CorruptedFrameException || e instanceof TooLongFrameException ? e : e.getCause();
      if (!(cause instanceof CorruptedFrameException || cause instanceof TooLongFrameException)) {
        throw e;
      }
      // The pipeline stops at the first bad frame, as the server closes the connection there.
      channel.releaseInbound();
      channel.close();
    }
  }
}
