package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import org.duckdb.DuckDBConnection;

/**
 * Two native calls of DuckDB's driver that it keeps package-private, reached by method handles:
 * <ul>
 *   <li>the connection's interrupt, which stops a streaming read (the driver interrupts only a statement that is
 *       executing); left out if a later driver moves it: such a read then stops at its next batch;
 *   <li>whether a transaction is open on the connection, as DuckDB's transaction context says (the driver's public
 *       {@code getAutoCommit} reports only the JDBC setting): a session learns it from DuckDB after each statement
 *       rather than by reading BEGIN, COMMIT or ROLLBACK in the SQL text, so a failed COMMIT, an ABORT and a
 *       {@code START TRANSACTION} count as DuckDB counts them. Without it a session cannot keep its transaction, so
 *       a driver without it fails the first statement that asks, naming the call.
 * </ul>
 */
final class DuckDBNatives {
  private static final MethodHandle CONNECTION_REF;
  private static final MethodHandle INTERRUPT;
  private static final MethodHandle AUTO_COMMIT;
  static final boolean INTERRUPT_AVAILABLE;

  static {
    MethodHandle reference = null;
    MethodHandle interrupt = null;
    MethodHandle autoCommit = null;
    try {
      reference = MethodHandles.privateLookupIn(DuckDBConnection.class, MethodHandles.lookup())
          .findGetter(DuckDBConnection.class, "connRef", ByteBuffer.class);
      Class<?> natives = Class.forName("org.duckdb.DuckDBNative");
      MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(natives, MethodHandles.lookup());
      interrupt = find(lookup, natives, "duckdb_jdbc_interrupt", MethodType.methodType(void.class, ByteBuffer.class));
      autoCommit = find(lookup, natives, "duckdb_jdbc_get_auto_commit",
          MethodType.methodType(boolean.class, ByteBuffer.class));
    } catch (ReflectiveOperationException | RuntimeException e) {
      reference = null;
    }
    CONNECTION_REF = reference;
    INTERRUPT = reference == null ? null : interrupt;
    AUTO_COMMIT = reference == null ? null : autoCommit;
    INTERRUPT_AVAILABLE = INTERRUPT != null;
  }

  private DuckDBNatives() {}

  private static MethodHandle find(MethodHandles.Lookup lookup, Class<?> natives, String name, MethodType type) {
    try {
      return lookup.findStatic(natives, name, type);
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  /** Interrupts what runs on {@code connection} now, a streaming read included; nothing if it closed meanwhile. */
  static void interrupt(DuckDBConnection connection) {
    try {
      ByteBuffer reference = (ByteBuffer) CONNECTION_REF.invoke(connection);
      if (reference != null) {
        INTERRUPT.invoke(reference);
      }
    } catch (Throwable ignored) {
      // The connection closed meanwhile: there is nothing left to interrupt.
    }
  }

  /** Whether {@code connection} has a transaction open (BEGIN has run, and no COMMIT or ROLLBACK since). */
  static boolean inTransaction(DuckDBConnection connection) {
    if (AUTO_COMMIT == null) {
      throw ThallusException.of(StatusCode.INTERNAL, "this DuckDB driver does not say whether a transaction is "
          + "open (org.duckdb.DuckDBNative.duckdb_jdbc_get_auto_commit is missing)");
    }
    ByteBuffer reference;
    try {
      reference = (ByteBuffer) CONNECTION_REF.invoke(connection);
    } catch (Throwable e) {
      throw ThallusException.of(StatusCode.INTERNAL, "DuckDB's connection is unreadable: " + e, e);
    }
    if (reference == null) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the session has ended");
    }
    try {
      return !(boolean) AUTO_COMMIT.invoke(reference);
    } catch (Throwable e) {
      throw ThallusException.of(StatusCode.INTERNAL, "DuckDB did not say whether a transaction is open: " + e, e);
    }
  }
}
