package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import org.duckdb.DuckDBConnection;

/**
 * Whether a transaction is open on a DuckDB connection, as DuckDB's own transaction context says: a session learns
 * it from DuckDB after each statement rather than by reading BEGIN, COMMIT or ROLLBACK in the SQL text (a failed
 * COMMIT, an ABORT or a {@code START TRANSACTION} all count as DuckDB counts them). DuckDB's driver answers it
 * natively but keeps the call package-private (its public {@code getAutoCommit} reports only the JDBC setting), so it
 * is reached by a method handle, checked once when the class loads.
 */
final class TransactionState {
  private static final MethodHandle CONNECTION_REF;
  private static final MethodHandle AUTO_COMMIT;

  static {
    try {
      CONNECTION_REF = MethodHandles.privateLookupIn(DuckDBConnection.class, MethodHandles.lookup())
          .findGetter(DuckDBConnection.class, "connRef", ByteBuffer.class);
      Class<?> natives = Class.forName("org.duckdb.DuckDBNative");
      AUTO_COMMIT = MethodHandles.privateLookupIn(natives, MethodHandles.lookup())
          .findStatic(natives, "duckdb_jdbc_get_auto_commit", MethodType.methodType(boolean.class, ByteBuffer.class));
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError("this DuckDB driver does not say whether a transaction is open: " + e);
    }
  }

  private TransactionState() {}

  /** Whether {@code connection} has a transaction open (BEGIN has run, and no COMMIT or ROLLBACK since). */
  static boolean open(DuckDBConnection connection) {
    try {
      ByteBuffer reference = (ByteBuffer) CONNECTION_REF.invoke(connection);
      if (reference == null) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the session has ended");
      }
      return !(boolean) AUTO_COMMIT.invoke(reference);
    } catch (ThallusException e) {
      throw e;
    } catch (Throwable e) {
      throw ThallusException.of(StatusCode.INTERNAL, "DuckDB did not say whether a transaction is open: " + e, e);
    }
  }
}
