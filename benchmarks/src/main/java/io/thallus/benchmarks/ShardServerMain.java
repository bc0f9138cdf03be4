package io.thallus.benchmarks;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * What {@code thallus serve --data-root DIR --threads N --shard NAME=PART:PATH ...} starts, for
 * {@link ShardServerProcess}: the CLI itself cannot run from the multicore bundle, whose class path leaves out the
 * Flight SQL module its serve command refers to. One server on 127.0.0.1 (port 0) with the transports available,
 * DuckDB limited to N threads; it prints the line {@code thallus serve} prints once it serves, and serves until the
 * process is stopped (SIGTERM runs the shutdown hook, which closes it).
 * Usage: {@code ShardServerMain DATA_ROOT THREADS NAME=PART:PATH...}.
 */
public final class ShardServerMain {
  private ShardServerMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      throw new IllegalArgumentException("usage: ShardServerMain DATA_ROOT THREADS NAME=PART:PATH...");
    }
    Path root = Path.of(args[0]).toAbsolutePath();
    CountDownLatch closed = new CountDownLatch(1);
    try (DuckDBEngine engine = DuckDBEngine.builder().filesUnder(root).threads(Integer.parseInt(args[1])).build();
         BufferAllocator allocator = new RootAllocator()) {
      ThallusServer.Builder builder = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), engine)
          .dataRoot(root);
      for (int i = 2; i < args.length; i++) {
        int equals = args[i].indexOf('=');
        int colon = args[i].indexOf(':', equals + 1);
        if (equals < 1 || colon < 0) {
          throw new IllegalArgumentException("not NAME=PART:PATH: " + args[i]);
        }
        builder.shard(args[i].substring(0, equals), args[i].substring(equals + 1, colon), args[i].substring(colon + 1));
      }
      ThallusServer server = builder.build().start();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        server.close();
        closed.countDown();
      }));
      System.out.println("thallus serving " + root + " at " + server.getLocation() + " over " + server.transports());
      closed.await();
    }
  }
}
