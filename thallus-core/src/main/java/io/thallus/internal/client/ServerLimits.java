package io.thallus.internal.client;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.protocol.FrameDecoder;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.MessageCodec;
import io.thallus.internal.protocol.Protocol;

/** The limits a server states in WELCOME (0: not stated), which the client checks before it sends a request. */
record ServerLimits(int maxSqlBytes, int maxFrameBytes, int maxCredits) {
  static final ServerLimits NONE = new ServerLimits(0, 0, 0);

  static ServerLimits of(Message.Welcome welcomed) {
    return new ServerLimits(limit(welcomed, Protocol.SERVER_MAX_SQL_BYTES),
        limit(welcomed, Protocol.SERVER_MAX_FRAME_BYTES), limit(welcomed, Protocol.SERVER_MAX_CREDITS));
  }

  private static int limit(Message.Welcome welcomed, String key) {
    try {
      return Integer.parseInt(welcomed.parameters().getOrDefault(key, "0"));
    } catch (NumberFormatException e) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "the server sent " + key + "="
          + welcomed.parameters().get(key) + ", not a number");
    }
  }

  /**
   * Refuses a request the server would refuse, before sending it: a frame over the server's maximum would be cut
   * off by the server mid-write, which the client would see as a lost connection instead of the reason.
   */
  void check(Message.Open request) {
    int sqlBytes = io.netty.buffer.ByteBufUtil.utf8Bytes(request.sql());
    if (maxSqlBytes > 0 && sqlBytes > maxSqlBytes) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "SQL text of " + sqlBytes
          + " bytes is over the server's limit of " + maxSqlBytes + " bytes");
    }
    if (maxCredits > 0 && request.credits() > maxCredits) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, request.credits()
          + " credits is over the server's limit of " + maxCredits + " per stream");
    }
    if (maxFrameBytes > 0 && request.parameterRows().length + (long) sqlBytes > maxFrameBytes) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the request's rows of parameters are "
          + request.parameterRows().length + " bytes, over the server's frame limit of " + maxFrameBytes
          + " bytes; send them in smaller requests");
    }
    if (maxFrameBytes > 0 && (!request.parameters().isEmpty()
        || sqlBytes + request.dataset().length() > maxFrameBytes / 2)) {
      // Parameters, or text large enough to matter: measure the real frame before sending it.
      checkFrameLength(request, "the request");
    }
  }

  /**
   * Refuses a message whose frame is over the server's maximum, before sending it: the server would cut the
   * connection off mid-frame, and every later call on this connection would fail with the lost connection.
   */
  void checkFrameLength(Message message, String what) {
    if (maxFrameBytes <= 0) {
      return;
    }
    io.netty.buffer.ByteBuf frame = io.netty.buffer.Unpooled.buffer();
    try {
      MessageCodec.Encoder.encode(message, frame);
      long length = frame.readableBytes() - (long) FrameDecoder.HEADER_BYTES;
      if (length > maxFrameBytes) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, what + " is " + length
            + " bytes, over the server's frame limit of " + maxFrameBytes + " bytes");
      }
    } finally {
      frame.release();
    }
  }
}
