package io.thallus.rdma.transport;

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
 * A client in a process of its own that appends to a table over rdma with {@code TRANSFER} ({@code read}, {@code
 * write} or {@code by-size}), sends {@code BATCHES} batches of 100,000 BIGINTs (800 KB each), prints "INGESTING",
 * and pushes more until it is killed. Arguments: {@code LOCATION TABLE BATCHES TRANSFER}.
 */
public final class PushingClientMain {
  private PushingClientMain() {}

  public static void main(String[] args) throws InterruptedException {
    System.setProperty(IngestTransfer.PROPERTY, args[3]);
    BufferAllocator allocator = new RootAllocator();
    ThallusClient client = ThallusClient.connect(allocator, Location.parse(args[0]));
    BigIntVector values = new BigIntVector("v", allocator);
    VectorSchemaRoot root = VectorSchemaRoot.of(values);
    values.allocateNew(100_000);
    for (int i = 0; i < 100_000; i++) {
      values.set(i, i);
    }
    root.setRowCount(100_000);
    ThallusIngest ingest = client.ingest(IngestRequest.of(args[1], IngestMode.APPEND), root.getSchema());
    int batches = Integer.parseInt(args[2]);
    for (int batch = 0; batch < batches; batch++) {
      ingest.write(root);
    }
    System.out.println("INGESTING " + batches + " over " + client.transport() + " by " + args[3]);
    System.out.flush();
    // Pushes on while the test kills it: most likely in the middle of a write or a wait for credit. The deadline
    // bounds an abandoned child.
    long end = System.nanoTime() + 120_000_000_000L;
    while (System.nanoTime() < end) {
      ingest.write(root);
    }
  }
}
