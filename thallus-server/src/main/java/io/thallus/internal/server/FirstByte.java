package io.thallus.internal.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;

/**
 * Sits before the frame decoder and notes the first byte a connection sends, then steps aside: a pending connection
 * that has spoken is the last to be let go when strangers crowd in.
 */
public final class FirstByte extends ChannelInboundHandlerAdapter {
  private static final AttributeKey<Boolean> SPOKEN = AttributeKey.valueOf("thallus.spoken");

  /** Whether any byte has come from the client on {@code channel}. */
  static boolean hasSpoken(Channel channel) {
    return channel.hasAttr(SPOKEN);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ctx.channel().attr(SPOKEN).set(Boolean.TRUE);
    ctx.pipeline().remove(this);
    ctx.fireChannelRead(msg);
  }
}
