import java.sql.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.arrow.c.*;
import org.apache.arrow.memory.*;
import org.apache.arrow.vector.*;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.*;
import org.duckdb.*;

/** DuckDB experiments for the ingest decision: threads of one Arrow-stream ingest; concurrent appends to one table. */
public class Exp {
  static final int BATCH = 131072;
  static final int COLS = 8;

  /** An ArrowReader of n batches of BATCH rows x COLS BIGINT, made on the fly (values i*(c+1)). */
  static final class Gen extends ArrowReader {
    final long batches; long made; final long offset;
    Gen(BufferAllocator a, long batches, long offset) { super(a); this.batches = batches; this.offset = offset; }
    @Override public boolean loadNextBatch() {
      if (made == batches) return false;
      VectorSchemaRoot root;
      try { root = getVectorSchemaRoot(); } catch (Exception e) { throw new RuntimeException(e); }
      for (int c = 0; c < COLS; c++) {
        BigIntVector v = (BigIntVector) root.getVector(c);
        v.allocateNew(BATCH);
        long base = offset + made * BATCH;
        for (int i = 0; i < BATCH; i++) v.set(i, (base + i) * (c + 1));
        v.setValueCount(BATCH);
      }
      root.setRowCount(BATCH);
      made++;
      return true;
    }
    @Override public long bytesRead() { return 0; }
    @Override protected void closeReadSource() {}
    @Override protected Schema readSchema() {
      List<Field> f = new ArrayList<>();
      for (int c = 0; c < COLS; c++) f.add(Field.nullable("c" + c, new ArrowType.Int(64, true)));
      return new Schema(f);
    }
  }

  static long ingest(DuckDBConnection conn, BufferAllocator a, String sql, long batches, long offset, String view) throws Exception {
    try (ArrowReader r = new Gen(a, batches, offset); ArrowArrayStream s = ArrowArrayStream.allocateNew(a)) {
      Data.exportArrayStream(a, r, s);
      conn.registerArrowStream(view, s);
      try (Statement st = conn.createStatement()) {
        return st.executeLargeUpdate(sql.replace("$V", view));
      }
    }
  }

  static double cpu() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
  }

  public static void main(String[] args) throws Exception {
    long batches = Long.parseLong(args.length > 0 ? args[0] : "16");
    try (BufferAllocator a = new RootAllocator()) {
      for (String threads : List.of("1", "2")) {
        Properties p = new Properties(); p.setProperty("threads", threads);
        try (DuckDBConnection db = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:", p)) {
          // warm-up
          ingest(db, a, "CREATE OR REPLACE TABLE w AS SELECT * FROM $V", 2, 0, "v0");
          double c0 = cpu(); long t0 = System.nanoTime();
          long rows = ingest(db, a, "CREATE OR REPLACE TABLE t AS SELECT * FROM $V", batches, 0, "v1");
          double wall = (System.nanoTime() - t0) / 1e9, c = cpu() - c0;
          System.out.printf("E1 threads=%s: one ingest of %d rows (CTAS from an Arrow stream): %.3f s wall, %.3f s process CPU (%.2f cores)%n", threads, rows, wall, c, c / wall);
          // E1b: the same rows generated in Java, cost of generation alone
          double g0 = cpu(); long tg = System.nanoTime();
          try (ArrowReader r = new Gen(a, batches, 0)) { while (r.loadNextBatch()) {} }
          System.out.printf("   (making the batches alone in Java: %.3f s)%n", (System.nanoTime() - tg) / 1e9);
        }
      }
      // E2: two connections append into one table at once; one of them rolls back.
      try (DuckDBConnection db = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:")) {
        try (Statement st = db.createStatement()) { st.execute("CREATE TABLE t (c0 BIGINT, c1 BIGINT, c2 BIGINT, c3 BIGINT, c4 BIGINT, c5 BIGINT, c6 BIGINT, c7 BIGINT)"); }
        // sequential
        long t0 = System.nanoTime();
        for (int k = 0; k < 2; k++) {
          try (DuckDBConnection c = (DuckDBConnection) db.duplicate()) {
            ingest(c, a, "INSERT INTO t SELECT * FROM $V", batches, k * batches * BATCH, "s" + k);
          }
        }
        double seq = (System.nanoTime() - t0) / 1e9;
        try (Statement st = db.createStatement()) { st.execute("DELETE FROM t"); }
        ExecutorService ex = Executors.newFixedThreadPool(3);
        CountDownLatch begun = new CountDownLatch(3);
        List<Future<String>> fs = new ArrayList<>();
        long t1 = System.nanoTime();
        for (int k = 0; k < 3; k++) {
          final int kk = k;
          fs.add(ex.submit(() -> {
            try (DuckDBConnection c = (DuckDBConnection) db.duplicate(); Statement st = c.createStatement()) {
              st.execute("BEGIN TRANSACTION");
              begun.countDown(); begun.await();
              long n = ingest(c, a, "INSERT INTO t SELECT * FROM $V", batches, kk * batches * BATCH, "p" + kk);
              if (kk == 2) { st.execute("ROLLBACK"); return "writer 2 rolled back " + n; }
              st.execute("COMMIT");
              return "writer " + kk + " committed " + n;
            } catch (Exception e) { return "writer " + kk + " failed: " + e.getMessage(); }
          }));
        }
        for (Future<String> f : fs) System.out.println("E2 " + f.get());
        double par = (System.nanoTime() - t1) / 1e9;
        ex.shutdown();
        try (Statement st = db.createStatement(); ResultSet r = st.executeQuery("SELECT count(*), sum(c0), count(DISTINCT c0) FROM t")) {
          r.next();
          long n = batches * BATCH;
          long expectSum = (2 * n) * (2 * n - 1) / 2;
          System.out.printf("E2 three writers in their own transactions into one table at once (one rolled back): rows %d (expect %d), sum(c0) %d (expect %d), distinct %d; 2 sequential %.3f s, 3 concurrent %.3f s%n",
              r.getLong(1), 2 * n, r.getLong(2), expectSum, r.getLong(3), seq, par);
        }
        // E3: with a primary key, two concurrent appends of disjoint keys
        try (Statement st = db.createStatement()) { st.execute("CREATE TABLE k (c0 BIGINT PRIMARY KEY, c1 BIGINT, c2 BIGINT, c3 BIGINT, c4 BIGINT, c5 BIGINT, c6 BIGINT, c7 BIGINT)"); }
        CountDownLatch begun3 = new CountDownLatch(2);
        ExecutorService ex3 = Executors.newFixedThreadPool(2);
        List<Future<String>> f3 = new ArrayList<>();
        for (int k = 0; k < 2; k++) {
          final int kk = k;
          f3.add(ex3.submit(() -> {
            try (DuckDBConnection c = (DuckDBConnection) db.duplicate(); Statement st = c.createStatement()) {
              st.execute("BEGIN TRANSACTION");
              begun3.countDown(); begun3.await();
              long n = ingest(c, a, "INSERT INTO k SELECT * FROM $V", 2, kk * 2L * BATCH, "k" + kk);
              st.execute("COMMIT");
              return "writer " + kk + " committed " + n;
            } catch (Exception e) { return "writer " + kk + " failed: " + e.getMessage(); }
          }));
        }
        for (Future<String> f : f3) System.out.println("E3 (primary key, disjoint keys) " + f.get());
        ex3.shutdown();
      }
    }
  }
}
