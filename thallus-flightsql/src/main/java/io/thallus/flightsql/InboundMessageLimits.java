package io.thallus.flightsql;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import java.net.SocketAddress;
import java.util.function.Consumer;

/**
 * A smaller bound for command messages than for data messages, as gRPC has one maximum per server. The server's
 * maximum ({@code maxInboundMessageSize}) is the data limit, which gRPC checks against a message's length before
 * reading its body; this tracer counts the body of each message of a command call (every method but {@code DoPut}
 * and {@code DoExchange}, whose messages carry batches) as gRPC reads it, and fails the call with
 * RESOURCE_EXHAUSTED as soon as it passes the command limit: the message is refused while at most the limit and
 * one read of it are held, never parsed.
 *
 * <p>gRPC answers the refused call at once, but its client is still sending the rest of the message, which gRPC no
 * longer reads nor counts back into HTTP/2's flow-control window: the client blocks with its request half sent, and
 * the HTTP/2 stream, never closed from its side, keeps the connection busy (so the idle rule never closes it). The
 * connection of each refusal is therefore reported ({@code refusedOn}), and the admission resets the streams the
 * server has finished answering on it, as HTTP/2 allows a server that answered before the request ended to do.
 */
final class InboundMessageLimits extends ServerStreamTracer.Factory {
  private static final String SERVICE = "arrow.flight.protocol.FlightService/";

  private final int commandBytes;
  /** Told the remote address (as gRPC reports it to calls) of the connection that carried a refused message. */
  private final Consumer<String> refusedOn;

  InboundMessageLimits(int commandBytes, Consumer<String> refusedOn) {
    this.commandBytes = commandBytes;
    this.refusedOn = refusedOn;
  }

  static boolean carriesData(String fullMethodName) {
    return fullMethodName.equals(SERVICE + "DoPut") || fullMethodName.equals(SERVICE + "DoExchange");
  }

  @Override
  public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
    return carriesData(fullMethodName) ? new ServerStreamTracer() {} : new CommandTracer(fullMethodName);
  }

  private final class CommandTracer extends ServerStreamTracer {
    private final String method;
    /** Body bytes of the message being read: gRPC's deframer calls a stream's tracer from one thread. */
    private long messageBytes;
    /** The call's connection, known once gRPC starts the call (before it reads any message of it). */
    private volatile SocketAddress remote;

    CommandTracer(String fullMethodName) {
      this.method = fullMethodName.substring(fullMethodName.lastIndexOf('/') + 1);
    }

    @Override
    public void serverCallStarted(ServerCallInfo<?, ?> callInfo) {
      remote = callInfo.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    }

    @Override
    public void inboundMessage(int seqNo) {
      messageBytes = 0;
    }

    @Override
    public void inboundWireSize(long bytes) {
      messageBytes += bytes;
      if (messageBytes > commandBytes) {
        SocketAddress connection = remote;
        if (connection != null) {
          refusedOn.accept(connection.toString());
        }
        // Thrown into gRPC's deframer, which ends the call with this status and discards what it read.
        throw Status.RESOURCE_EXHAUSTED.withDescription("a " + method + " message is over the Flight SQL server's "
            + "command message limit of " + commandBytes + " bytes").asRuntimeException();
      }
    }
  }
}
