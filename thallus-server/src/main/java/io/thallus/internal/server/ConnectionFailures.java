package io.thallus.internal.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.internal.protocol.FrameDecoder;
import io.thallus.internal.protocol.Message;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a server connection ends when it cannot go on, before and after its handshake alike: the client is told why
 * (an ERROR on stream 0), then the connection closes; a frame too long to read is drained first.
 */
final class ConnectionFailures {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionFailures.class);
  /** How long an oversized frame is read and thrown away after its ERROR, so the client can read the ERROR. */
  private static final long DRAIN_MILLIS = 5_000;

  private ConnectionFailures() {}

  /** Tells the client why, then closes the connection; its streams end as on a disconnect. Any thread. */
  static void fail(Channel channel, Status status) {
    if (channel != null && channel.isActive()) {
      channel.writeAndFlush(new Message.Error(0, status.code(), status.description()))
          .addListener(ChannelFutureListener.CLOSE);
    }
  }

  /** What a connection handler does with an exception from its pipeline. */
  static void caught(ChannelHandlerContext ctx, Throwable cause, long connectionId) {
    if (cause instanceof FrameDecoder.FrameTooLongException tooLong) {
      failAfterDraining(ctx, Status.of(StatusCode.PROTOCOL_ERROR, "malformed frame: " + tooLong.getMessage()),
          tooLong.frameLength());
    } else if (cause instanceof DecoderException) {
      Throwable reason = cause.getCause() != null && cause.getMessage() != null
          && cause.getMessage().startsWith(cause.getCause().getClass().getName()) ? cause.getCause() : cause;
      fail(ctx.channel(), Status.of(StatusCode.PROTOCOL_ERROR, "malformed frame: " + reason.getMessage()));
    } else if (cause instanceof IOException) {
      LOG.debug("connection {} lost: {}", connectionId, cause.toString());
      ctx.close();
    } else {
      LOG.error("connection {} failed", connectionId, cause);
      fail(ctx.channel(), Status.of(StatusCode.INTERNAL, "server error: " + cause));
    }
  }

  /**
   * Like {@link #fail}, for a frame too long to read: the client is most likely still sending it, and a close with
   * unread bytes resets the connection, which can destroy the ERROR before the client reads it. So the rest of the
   * frame is read and thrown away (nothing is kept) until it has all come, or for a few seconds.
   */
  private static void failAfterDraining(ChannelHandlerContext ctx, Status status, long frameBytes) {
    Channel ch = ctx.channel();
    if (!ch.isActive() || ch.pipeline().get("drain") != null) {
      return;
    }
    Drain drain = new Drain(frameBytes);
    ch.pipeline().addBefore("frames", "drain", drain);
    ch.pipeline().remove("decoder");
    ch.pipeline().remove("frames");
    ch.writeAndFlush(new Message.Error(0, status.code(), status.description()));
    drain.closeWhenDone(ch);
  }

  /**
   * Reads and drops what is left of a refused frame, then closes: once it has all come, once the client has sent
   * nothing for a moment, or at the latest after a few seconds.
   */
  private static final class Drain extends ChannelInboundHandlerAdapter {
    private static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_MILLIS);
    private long left;
    private long lastRead = System.nanoTime();

    Drain(long frameBytes) {
      this.left = frameBytes;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf bytes) {
        left -= bytes.readableBytes();
      }
      ReferenceCountUtil.release(msg);
      lastRead = System.nanoTime();
      if (left <= 0) {
        ctx.close();
      }
    }

    void closeWhenDone(Channel ch) {
      long now = System.nanoTime();
      if (now - lastRead >= QUIET_NANOS || now >= deadline) {
        ch.close();
      } else if (ch.isActive()) {
        ch.eventLoop().schedule(() -> closeWhenDone(ch), 50, TimeUnit.MILLISECONDS);
      }
    }
  }
}
