package io.thallus.cli;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * Moves the server process into its data root, so a relative path in SQL ({@code read_csv('trips.csv')},
 * {@code ATTACH 'mine.duckdb'}) means a file in the data root, as the client who wrote it means. DuckDB resolves a
 * relative path against the process' working directory, which Java cannot change: this calls the C library's
 * {@code chdir}. Only {@code thallus serve} does it, once, after every path of its own is absolute; an embedded
 * server leaves its application's directory alone.
 */
final class WorkingDirectory {
  private WorkingDirectory() {}

  static void change(Path directory) {
    Linker linker = Linker.nativeLinker();
    MethodHandle chdir = linker.downcallHandle(linker.defaultLookup().find("chdir").orElseThrow(),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
    int result;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment path = arena.allocateFrom(directory.toAbsolutePath().toString());
      result = (int) chdir.invokeExact(path);
    } catch (Throwable e) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot enter the data root " + directory + ": " + e, e);
    }
    if (result != 0) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot enter the data root " + directory
          + " (chdir failed)");
    }
  }
}
