package io.thallus.testing;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/** A server in a process of its own, for tests that kill it: prints "LISTENING port" and serves until killed. */
public final class ServerMain {
  private ServerMain() {}

  public static void main(String[] args) throws InterruptedException {
    BufferAllocator allocator = new RootAllocator();
    ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .build().start();
    System.out.println("LISTENING " + server.getLocation().port());
    System.out.flush();
    Thread.sleep(120_000); // the test kills this process long before; the sleep bounds an abandoned child
  }
}
