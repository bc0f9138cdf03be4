package io.thallus.testing;

import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A client in a process of its own that pulls a huge result for ever, printing "STREAMING" once the first batch is
 * in; the fault tests kill it with SIGKILL at a random moment. Every other batch is kept a while, so kills land with
 * batches held as well as in flight.
 */
public final class StreamingClientMain {
  private StreamingClientMain() {}

  public static void main(String[] args) {
    Location location = Location.parse(args[0]);
    BufferAllocator allocator = new RootAllocator();
    ThallusClient client = ThallusClient.connect(allocator, location);
    ThallusStream stream = client.query(QueryRequest.builder(
        "SELECT i, i * 2 AS j, 'row ' || i AS s FROM range(100000000000) t(i)").batchRows(8192).build());
    VectorSchemaRoot held = null;
    boolean announced = false;
    while (stream.hasNext()) {
      VectorSchemaRoot batch = stream.next();
      if (!announced) {
        System.out.println("STREAMING over " + stream.transport());
        System.out.flush();
        announced = true;
      }
      if (held != null) {
        held.close();
        held = null;
      }
      if (batch.getRowCount() % 2 == 0) {
        held = batch;
      } else {
        batch.close();
      }
    }
  }
}
