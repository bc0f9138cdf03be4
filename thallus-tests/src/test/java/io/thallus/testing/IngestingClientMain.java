package io.thallus.testing;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusIngest;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A client in a process of its own that starts appending to a table, sends some batches, prints "INGESTING n", and
 * waits to be killed before it finishes.
 */
public final class IngestingClientMain {
  private IngestingClientMain() {}

  public static void main(String[] args) throws InterruptedException {
    Location location = Location.parse(args[0]);
    String table = args[1];
    int batches = Integer.parseInt(args[2]);
    BufferAllocator allocator = new RootAllocator();
    ThallusClient client = ThallusClient.connect(allocator, location);
    BigIntVector values = new BigIntVector("v", allocator);
    VectorSchemaRoot root = VectorSchemaRoot.of(values);
    ThallusIngest ingest = client.ingest(IngestRequest.of(table, IngestMode.APPEND), root.getSchema());
    for (int batch = 0; batch < batches; batch++) {
      values.allocateNew(100_000);
      for (int i = 0; i < 100_000; i++) {
        values.set(i, i);
      }
      root.setRowCount(100_000);
      ingest.write(root);
    }
    System.out.println("INGESTING " + batches + " over " + client.transport());
    System.out.flush();
    Thread.sleep(120_000); // the test kills this process long before; the sleep bounds an abandoned child
  }
}
