package io.thallus.internal.transport.ipc;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.net.InetSocketAddress;
import java.util.Map;

/**
 * The baseline: no medium of its own. Every batch is serialized to Arrow IPC messages inside its BATCH frame and
 * deserialized into fresh buffers on the client (core does both), which is what an RPC with serialization costs:
 * the yardstick the zero-copy transports are measured against.
 */
public final class IpcTransport implements Transport {
  public static final String NAME = "ipc";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean confidentialUnderTls() {
    return true;
  }

  @Override
  public int preference() {
    return 0;
  }

  @Override
  public boolean serializesBatches() {
    return true;
  }

  @Override
  public ServerTransport startServer(ServerTransport.Context context) {
    return new ServerTransport() {
      @Override
      public ServerSession accept(InetSocketAddress client, Map<String, String> offer,
          org.apache.arrow.memory.BufferAllocator clientMemory) {
        return new ServerSession() {
          @Override
          public Map<String, String> welcomeParameters() {
            return Map.of();
          }

          @Override
          public PlacedBody place(PackedBody body, io.thallus.spi.Deadline deadline) {
            throw ThallusException.of(StatusCode.INTERNAL, "ipc places no bodies: its batches travel serialized");
          }

          @Override
          public void close() {}
        };
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public ClientOffer offer(ClientOffer.Context context) {
    return ClientOffer.of(Map.of(), welcome -> new ClientSession() {
      @Override
      public void fetch(io.thallus.spi.BatchHeader header, Fetched done) {
        done.failed(ThallusException.of(StatusCode.PROTOCOL_ERROR,
            "batch " + header.batchId() + " came without its IPC messages"));
      }

      @Override
      public boolean serverHoldsBodies() {
        return false;
      }

      @Override
      public void close() {}
    });
  }
}
