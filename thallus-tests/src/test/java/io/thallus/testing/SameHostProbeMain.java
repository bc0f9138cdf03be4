package io.thallus.testing;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.internal.transport.cma.CrossMemoryProbe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What a same-host process can take from a server without asking it, run as whichever user starts it: it reads a
 * shared-memory segment file, reads the server's memory with the cma transport's own {@code process_vm_readv}
 * reader, then queries the server as an ordinary client. Prints SEGMENT, MEMORY and RESULT lines, then DONE.
 * Arguments: location, segment file, server pid, address and length of bytes in the server, SQL of one BIGINT.
 */
public final class SameHostProbeMain {
  private SameHostProbeMain() {}

  public static void main(String[] args) throws Exception {
    Location location = Location.parse(args[0]);
    Path segment = Path.of(args[1]);
    int pid = Integer.parseInt(args[2]);
    long address = Long.parseLong(args[3]);
    int length = Integer.parseInt(args[4]);
    String sql = args[5];

    try {
      System.out.println("SEGMENT read " + Files.readAllBytes(segment).length + " bytes");
    } catch (IOException e) {
      System.out.println("SEGMENT refused " + e.getClass().getSimpleName());
    }
    System.out.println("MEMORY " + CrossMemoryProbe.read(pid, address, length));
    try (BufferAllocator allocator = new RootAllocator();
         ThallusClient client = ThallusClient.connect(allocator, location);
         ThallusStream stream = client.query(sql)) {
      long rows = 0;
      long sum = 0;
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          BigIntVector values = (BigIntVector) batch.getVector(0);
          for (int i = 0; i < batch.getRowCount(); i++) {
            sum += values.get(i);
          }
          rows += batch.getRowCount();
        }
      }
      System.out.println("RESULT " + client.transport() + " " + rows + " " + sum);
    }
    System.out.println("DONE");
    System.out.flush();
  }
}
