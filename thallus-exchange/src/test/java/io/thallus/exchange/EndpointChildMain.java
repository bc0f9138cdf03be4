package io.thallus.exchange;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * An exchange endpoint in a JVM of its own, for {@link TwoProcessExchangeTest}: writes its maps (pushing the even
 * partitions to the given endpoint), prints {@code READY <address>}, and serves until its stdin closes or it is
 * killed. Args: spill folder, peer transport, shuffle id, partitions, batches per partition, push target
 * ({@code host:port} or {@code none}), map ids (comma-separated).
 */
public final class EndpointChildMain {
  private EndpointChildMain() {}

  public static void main(String[] args) throws Exception {
    Path spill = Path.of(args[0]);
    String transport = args[1];
    int shuffle = Integer.parseInt(args[2]);
    int partitions = Integer.parseInt(args[3]);
    int batches = Integer.parseInt(args[4]);
    EndpointAddress target = args[5].equals("none") ? null : EndpointAddress.parse(args[5]);
    try (BufferAllocator allocator = new RootAllocator();
         ExchangeEndpoint endpoint = ExchangeEndpoint.start(EndpointOptions.builder(allocator, spill)
             .peerTransport(transport).build())) {
      List<EndpointAddress> targets = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        targets.add(p % 2 == 0 ? target : null);
      }
      for (String map : args[6].split(",")) {
        ExchangeData.writeMap(endpoint, allocator, shuffle, Integer.parseInt(map), partitions, batches, targets);
      }
      if (!endpoint.awaitPushes(Duration.ofMinutes(5))) {
        System.out.println("FAILED pushes still queued after 5 minutes");
        return;
      }
      ExchangeStats stats = endpoint.stats();
      System.out.println("READY " + endpoint.address() + " pushes=" + stats.pushes() + " refused="
          + stats.pushesRefused());
      System.out.flush();
      while (System.in.read() >= 0) {
        // Serve until the parent closes our stdin (or kills us).
      }
    }
  }
}
