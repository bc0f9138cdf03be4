import java.sql.*;
import java.util.*;
import org.apache.arrow.c.*;
import org.apache.arrow.memory.*;
import org.apache.arrow.vector.*;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.*;
import org.duckdb.*;

/** Why the engine's in-process ingest is slower than DuckDB's plain one: the same batches, one setting changed at a time. */
public class E4 {
  static final int BATCH = 131072, COLS = 8;
  static Schema schema() {
    List<Field> f = new ArrayList<>();
    for (int c = 0; c < COLS; c++) f.add(Field.nullable("c" + c, new ArrowType.Int(64, true)));
    return new Schema(f);
  }
  static List<ArrowRecordBatch> make(BufferAllocator a, long rows) {
    List<ArrowRecordBatch> out = new ArrayList<>();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema(), a)) {
      for (long start = 0; start < rows; start += BATCH) {
        int n = (int) Math.min(BATCH, rows - start);
        for (int c = 0; c < COLS; c++) { BigIntVector v = (BigIntVector) root.getVector(c); v.allocateNew(n); for (int i = 0; i < n; i++) v.set(i, (start + i) * (c + 1)); v.setValueCount(n); }
        root.setRowCount(n);
        out.add(new VectorUnloader(root).getRecordBatch());
      }
    }
    return out;
  }
  static final class Held extends ArrowReader {
    final List<ArrowRecordBatch> batches; int next;
    Held(BufferAllocator a, List<ArrowRecordBatch> b) { super(a); batches = b; }
    @Override public boolean loadNextBatch() throws java.io.IOException { if (next == batches.size()) return false; new VectorLoader(getVectorSchemaRoot()).load(batches.get(next++)); return true; }
    @Override public long bytesRead() { return 0; }
    @Override protected void closeReadSource() {}
    @Override protected Schema readSchema() { return schema(); }
  }
  interface Run { void run(ArrowReader r) throws Exception; }
  static double median(List<Double> v) { Collections.sort(v); return v.get(v.size() / 2); }
  static void time(String name, BufferAllocator a, List<ArrowRecordBatch> b, int rounds, Run run) throws Exception {
    List<Double> s = new ArrayList<>();
    for (int i = 0; i <= rounds; i++) {
      long t = System.nanoTime();
      try (ArrowReader r = new Held(a, b)) { run.run(r); }
      if (i > 0) s.add((System.nanoTime() - t) / 1e9);
    }
    System.out.printf("%-75s median %.3f s  %s%n", name, median(s), s);
  }
  static void ctas(DuckDBConnection c, BufferAllocator a, ArrowReader r, String before, String after) throws Exception {
    try (ArrowArrayStream s = ArrowArrayStream.allocateNew(a); Statement st = c.createStatement()) {
      Data.exportArrayStream(a, r, s);
      c.registerArrowStream("src", s);
      if (before != null) st.execute(before);
      st.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM src");
      if (after != null) st.execute(after);
      st.execute("DROP VIEW IF EXISTS src");
    }
  }
  static double cpu() { return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9; }
  public static void main(String[] args) throws Exception {
    long rows = Long.parseLong(args[0]); int rounds = Integer.parseInt(args[1]);
    try (BufferAllocator a = new RootAllocator()) {
      List<ArrowRecordBatch> b = make(a, rows);
      for (String threads : List.of("1", "2")) for (String order : List.of("true", "false")) for (String stmt : List.of("CTAS", "INSERT")) {
        Properties p = new Properties(); p.setProperty("threads", threads); p.setProperty("preserve_insertion_order", order);
        try (DuckDBConnection c = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:", p); Statement st = c.createStatement()) {
          st.execute("CREATE TABLE t (c0 BIGINT, c1 BIGINT, c2 BIGINT, c3 BIGINT, c4 BIGINT, c5 BIGINT, c6 BIGINT, c7 BIGINT)");
          List<Double> w = new ArrayList<>(), u = new ArrayList<>();
          for (int i = 0; i <= rounds; i++) {
            double c0 = cpu(); long t = System.nanoTime();
            try (ArrowReader r = new Held(a, b); ArrowArrayStream s = ArrowArrayStream.allocateNew(a)) {
              Data.exportArrayStream(a, r, s);
              c.registerArrowStream("src", s);
              st.execute(stmt.equals("CTAS") ? "CREATE OR REPLACE TABLE t2 AS SELECT * FROM src" : "INSERT INTO t SELECT * FROM src");
              st.execute("DROP VIEW src");
            }
            double wall = (System.nanoTime() - t) / 1e9;
            if (i > 0) { w.add(wall); u.add((cpu() - c0) / wall); }
          }
          System.out.printf("threads=%s preserve_insertion_order=%s %-6s: median %.3f s, cores busy (process CPU / wall) median %.2f%n", threads, order, stmt, median(w), median(u));
        }
      }
      b.forEach(ArrowRecordBatch::close);
    }
  }
}
