package io.thallus.rdma.exchange;

import io.thallus.exchange.EndpointAddress;
import io.thallus.exchange.EndpointOptions;
import io.thallus.exchange.ExchangeEndpoint;
import io.thallus.exchange.ExchangeStats;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The map side of {@link RdmaExchangeTest} in a JVM of its own: an exchange endpoint that serves and pushes over rdma
 * only, writes its maps of {@link TypedMapOutputs} (pushing the even partitions to the reducer), prints
 * {@code READY <address> pushes=N refused=N}, and serves until its stdin closes or it is killed. Arguments: spill
 * folder, rdma ingest transfer ({@code read}, {@code write}, {@code by-size}: how its pushes go), join bytes (the
 * largest batch of a pull's answer), shuffle, partitions, rows per map, batch rows, push target ({@code host:port}),
 * map ids (comma-separated).
 */
public final class MappingEndpointMain {
  private MappingEndpointMain() {}

  public static void main(String[] args) throws Exception {
    // Read as each connection to a peer is made: before the first push.
    System.setProperty("thallus.rdma.ingestTransfer", args[1]);
    int shuffle = Integer.parseInt(args[3]);
    int partitions = Integer.parseInt(args[4]);
    long rowsPerMap = Long.parseLong(args[5]);
    int batchRows = Integer.parseInt(args[6]);
    EndpointAddress reducer = EndpointAddress.parse(args[7]);
    try (BufferAllocator allocator = new RootAllocator();
         ExchangeEndpoint endpoint = ExchangeEndpoint.start(EndpointOptions.builder(allocator, Path.of(args[0]))
             .transports(List.of("rdma")).peerTransport("rdma").joinBytes(Long.parseLong(args[2]))
             .timeout(Duration.ofSeconds(60)).build())) {
      List<EndpointAddress> targets = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        targets.add(p % 2 == 0 ? reducer : null);
      }
      for (String map : args[8].split(",")) {
        TypedMapOutputs.write(endpoint, allocator, shuffle, Integer.parseInt(map), partitions, rowsPerMap, batchRows,
            targets);
      }
      if (!endpoint.awaitPushes(Duration.ofMinutes(3))) {
        System.out.println("FAILED pushes still queued after 3 minutes");
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
