package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.net.InetSocketAddress;
import java.util.Map;

/**
 * A fake transport, for the fallback test only: preferred above all others, accepted by the server, but its client
 * side cannot start, as cma's cannot where the kernel forbids cross-memory reads (which cannot be arranged on this
 * machine: the tests run as root, and Yama is not loaded).
 */
public final class RefusingTransport implements Transport {
  @Override
  public String name() {
    return "refusing";
  }

  @Override
  public int preference() {
    return 1000;
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
          public io.thallus.spi.PlacedBody place(io.thallus.spi.PackedBody body, io.thallus.spi.Deadline deadline) {
            throw ThallusException.of(StatusCode.INTERNAL, "the refusing transport never places a body");
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
    return ClientOffer.of(Map.of(), welcome -> {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "refusing: not permitted here");
    });
  }
}
