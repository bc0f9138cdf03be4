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
public class E0 {
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
  public static void main(String[] args) throws Exception {
    long rows = Long.parseLong(args[0]); int rounds = Integer.parseInt(args[1]);
    try (BufferAllocator a = new RootAllocator()) {
      List<ArrowRecordBatch> b = make(a, rows);
      try (DuckDBConnection plain = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:")) {
        String ml; try (Statement st = plain.createStatement(); ResultSet r = st.executeQuery("SELECT current_setting('memory_limit'), current_setting('threads'), current_setting('preserve_insertion_order')")) { r.next(); ml = r.getString(1); System.out.println("plain defaults: memory_limit " + ml + ", threads " + r.getString(2) + ", preserve_insertion_order " + r.getString(3)); }
        time("plain: CTAS, autocommit", a, b, rounds, r -> ctas(plain, a, r, null, null));
        time("plain: BEGIN; CTAS; COMMIT", a, b, rounds, r -> ctas(plain, a, r, "BEGIN TRANSACTION", "COMMIT"));
      }
      for (String setting : List.of("SET operator_memory_limit = '512MiB'", "SET streaming_buffer_size = '1MiB'", "SET preserve_insertion_order = false")) {
        try (DuckDBConnection c = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
          st.execute(setting);
          time("plain + " + setting + ": CTAS autocommit", a, b, rounds, r -> ctas(c, a, r, null, null));
        }
      }
      try (io.thallus.duckdb.DuckDBEngine engine = io.thallus.duckdb.DuckDBEngine.create();
           io.thallus.engine.EngineSession session = engine.openSession()) {
        try (var q = session.execute(new io.thallus.engine.QuerySpec("SELECT current_setting('memory_limit') || ' / ' || current_setting('operator_memory_limit') || ' / ' || current_setting('threads')", Optional.empty(), 16, Map.of()), a, new io.thallus.engine.CancelSignal())) {
          try (var batch = q.next(); VectorSchemaRoot root = VectorSchemaRoot.create(q.schema(), a)) { new VectorLoader(root).load(batch.records()); System.out.println("engine: memory_limit / operator_memory_limit / threads = " + root.getVector(0).getObject(0)); }
        }
        time("engine: DuckDBSession.ingest REPLACE", a, b, rounds, r -> session.ingest(new io.thallus.engine.IngestSpec("t", io.thallus.IngestMode.REPLACE, schema()), r, a, new io.thallus.engine.CancelSignal()));
      }
      try (DuckDBConnection plain = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
           io.thallus.duckdb.DuckDBEngine engine = io.thallus.duckdb.DuckDBEngine.create();
           io.thallus.engine.EngineSession session = engine.openSession()) {
        List<Double> p = new ArrayList<>(), e = new ArrayList<>(), pt = new ArrayList<>();
        for (int i = 0; i <= rounds; i++) {
          long t = System.nanoTime();
          try (ArrowReader r = new Held(a, b)) { ctas(plain, a, r, null, null); }
          double dp = (System.nanoTime() - t) / 1e9;
          t = System.nanoTime();
          try (ArrowReader r = new Held(a, b)) { session.ingest(new io.thallus.engine.IngestSpec("t", io.thallus.IngestMode.REPLACE, schema()), r, a, new io.thallus.engine.CancelSignal()); }
          double de = (System.nanoTime() - t) / 1e9;
          t = System.nanoTime();
          try (ArrowReader r = new Held(a, b)) { ctas(plain, a, r, "BEGIN TRANSACTION", "COMMIT"); }
          double dt = (System.nanoTime() - t) / 1e9;
          if (i > 0) { p.add(dp); e.add(de); pt.add(dt); }
        }
        System.out.printf("interleaved: plain autocommit %.3f, plain in a transaction %.3f, engine ingest %.3f (medians of %d)%n", median(p), median(pt), median(e), rounds);
      }
      b.forEach(ArrowRecordBatch::close);
    }
  }
}
