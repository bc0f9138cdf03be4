package io.thallus.flightsql;

import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;

/**
 * A smaller bound for command messages than for data messages, as gRPC has one maximum per server. The server's
 * maximum ({@code maxInboundMessageSize}) is the data limit, which gRPC checks against a message's length before
 * reading its body; this tracer counts the body of each message of a command call (every method but {@code DoPut}
 * and {@code DoExchange}, whose messages carry batches) as gRPC reads it, and fails the call with
 * RESOURCE_EXHAUSTED as soon as it passes the command limit: the message is refused while at most the limit and
 * one read of it are held, never parsed.
 */
final class InboundMessageLimits extends ServerStreamTracer.Factory {
  private static final String SERVICE = "arrow.flight.protocol.FlightService/";

  private final int commandBytes;

  InboundMessageLimits(int commandBytes) {
    this.commandBytes = commandBytes;
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

    CommandTracer(String fullMethodName) {
      this.method = fullMethodName.substring(fullMethodName.lastIndexOf('/') + 1);
    }

    @Override
    public void inboundMessage(int seqNo) {
      messageBytes = 0;
    }

    @Override
    public void inboundWireSize(long bytes) {
      messageBytes += bytes;
      if (messageBytes > commandBytes) {
        // Thrown into gRPC's deframer, which ends the call with this status and discards what it read.
        throw Status.RESOURCE_EXHAUSTED.withDescription("a " + method + " message is over the Flight SQL server's "
            + "command message limit of " + commandBytes + " bytes").asRuntimeException();
      }
    }
  }
}
