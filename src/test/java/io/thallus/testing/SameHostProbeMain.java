package io.thallus.testing;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What a same-host process can take from a server without asking it, run as whichever user starts it: it reads a
 * shared-memory segment file, reads the server's memory with {@code process_vm_readv} (what the cma transport
 * does), then queries the server as an ordinary client. Prints SEGMENT, MEMORY and RESULT lines, then DONE.
 * Arguments: location, segment file, server pid, address and length of bytes in the server, SQL of one BIGINT.
 */
public final class SameHostProbeMain {
  private SameHostProbeMain() {}

  public static void main(String[] args) throws Throwable {
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
    System.out.println("MEMORY " + readRemote(pid, address, length));
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

  /** "read HEX" with the bytes, or "refused errno N". */
  private static String readRemote(int pid, long address, int length) throws Throwable {
    StructLayout callState = Linker.Option.captureStateLayout();
    MethodHandle readv = Linker.nativeLinker().downcallHandle(
        Linker.nativeLinker().defaultLookup().find("process_vm_readv").orElseThrow(),
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG),
        Linker.Option.captureCallState("errno"));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment into = arena.allocate(length);
      MemorySegment local = arena.allocate(16, 8);
      local.set(JAVA_LONG, 0, into.address());
      local.set(JAVA_LONG, 8, length);
      MemorySegment remote = arena.allocate(16, 8);
      remote.set(JAVA_LONG, 0, address);
      remote.set(JAVA_LONG, 8, length);
      MemorySegment state = arena.allocate(callState);
      long read = (long) readv.invokeExact(state, pid, local, 1L, remote, 1L, 0L);
      if (read < 0) {
        int errno = (int) callState.varHandle(MemoryLayout.PathElement.groupElement("errno")).get(state, 0L);
        return "refused errno " + errno;
      }
      return "read " + HexFormat.of().formatHex(into.asSlice(0, read).toArray(JAVA_BYTE));
    }
  }
}
