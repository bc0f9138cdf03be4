package io.thallus.cli;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Makes every file the server process creates from now on readable by its own user alone (the C library's
 * {@code umask(077)}, as database servers do): DuckDB creates the database's WAL again after each checkpoint, with
 * whatever mode the process's umask gives, and the WAL holds committed rows. Only {@code thallus serve} does it; an
 * embedded server leaves its application's umask alone (docs/operations.md says how to set it there).
 */
final class OwnerOnlyFiles {
  private OwnerOnlyFiles() {}

  static void fromNowOn() {
    Linker linker = Linker.nativeLinker();
    MethodHandle umask = linker.downcallHandle(linker.defaultLookup().find("umask").orElseThrow(),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    try {
      int previous = (int) umask.invokeExact(0077);
      // Keeps any bit the operator masked beyond group and other.
      int unused = (int) umask.invokeExact(previous | 0077);
    } catch (Throwable e) {
      throw new IllegalStateException("cannot set the process's umask to 077: " + e, e);
    }
  }
}
