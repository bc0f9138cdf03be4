package io.thallus.internal.transport.cma;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

/** The cma transport's own reader, for tests that try what one process may read of another's memory. */
public final class CrossMemoryProbe {
  private CrossMemoryProbe() {}

  /** "read HEX" with the bytes, or "refused errno N". */
  public static String read(long pid, long address, int length) {
    try (ProcessVm reader = new ProcessVm(); Arena arena = Arena.ofConfined()) {
      MemorySegment into = arena.allocate(length);
      reader.clear();
      reader.add(into.address(), address, length);
      long read = reader.read(pid);
      return read < 0 ? "refused errno " + -read
          : "read " + HexFormat.of().formatHex(into.asSlice(0, read).toArray(JAVA_BYTE));
    }
  }
}
