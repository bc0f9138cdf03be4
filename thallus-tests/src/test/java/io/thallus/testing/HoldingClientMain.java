package io.thallus.testing;

import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/** A client in a process of its own that takes some batches, keeps them, prints "HOLDING n", and waits to be killed. */
public final class HoldingClientMain {
  private HoldingClientMain() {}

  public static void main(String[] args) throws InterruptedException {
    Location location = Location.parse(args[0]);
    int keep = Integer.parseInt(args[1]);
    BufferAllocator allocator = new RootAllocator();
    ThallusClient client = ThallusClient.connect(allocator, location);
    ThallusStream stream = client.query(QueryRequest.builder("SELECT i, i * 2 AS j FROM range(100000000) t(i)")
        .batchRows(65536).build());
    List<VectorSchemaRoot> kept = new ArrayList<>();
    for (int i = 0; i < keep && stream.hasNext(); i++) {
      kept.add(stream.next());
    }
    System.out.println("HOLDING " + kept.size() + " over " + stream.transport());
    System.out.flush();
    Thread.sleep(120_000); // the test kills this process long before; the sleep bounds an abandoned child
  }
}
