package io.thallus.conformance;

import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthViewVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.ListViewVector;
import org.apache.arrow.vector.complex.RunEndEncodedVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.duckdb.DuckDBConnection;

/**
 * Arrow types that clients send and that the read path never produces (DuckDB exports none of them by default):
 * views (what polars sends), dictionaries (pandas' Categorical), run-end encoded, large strings, binaries and lists,
 * list views, and one DuckDB's scan refuses (decimal256). Each case is a column {@code v} beside an {@code id}, in two
 * batches of an Arrow IPC stream (a dictionary sent once for both, as IPC writers send it), with nulls, values inline
 * in a view and out of it, and empty values.
 *
 * <p>What an ingest of a case must give is what DuckDB gives for the same Arrow data imported directly
 * ({@link #direct}): the same rows and DuckDB types read back, or, where DuckDB refuses the type, a refusal naming the
 * column.
 */
public final class ArrowTypeCases {
  /** Rows in the first batch; the second has the rest. */
  private static final int FIRST_ROWS = 6;
  private static final int ROWS = 10;
  private static final String[] TEXT = {"", "short", "twelve bytes", "more than twelve bytes: row ", null,
      "ünïcödé ✓ out of line, row "};

  private ArrowTypeCases() {}

  /** One type: its name (a table name) and its batches as an Arrow IPC stream. */
  public record Case(String name, byte[] stream) {
    /** The case's batches, read anew; the reader is a dictionary provider for its dictionary-encoded columns. */
    public ArrowStreamReader open(BufferAllocator allocator) {
      return new ArrowStreamReader(new ByteArrayInputStream(stream), allocator);
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /**
   * What DuckDB made of a case imported directly: its rows as {@link #CHECK} reads them (id, DuckDB type of v, v as
   * text), or its error when it refused the batches.
   */
  public record Expected(List<List<String>> rows, String error) {
    public boolean refused() {
      return error != null;
    }
  }

  /** Reads a table written from a case: every column as text, so both sides compare the same way. */
  public static String check(String table) {
    return "SELECT id::VARCHAR AS id, typeof(v) AS type, v::VARCHAR AS v FROM " + table + " ORDER BY ALL";
  }

  public static List<Case> all() {
    List<Case> cases = new ArrayList<>();
    cases.add(build("string_view", field(ArrowType.Utf8View.INSTANCE), (root, first) ->
        text(root, first, (v, i, s) -> ((BaseVariableWidthViewVector) v).setSafe(i, s))));
    cases.add(build("binary_view", field(ArrowType.BinaryView.INSTANCE), (root, first) ->
        text(root, first, (v, i, s) -> ((BaseVariableWidthViewVector) v).setSafe(i, bytes(s)))));
    cases.add(build("large_string", field(ArrowType.LargeUtf8.INSTANCE), (root, first) ->
        text(root, first, (v, i, s) -> ((BaseLargeVariableWidthVector) v).setSafe(i, s))));
    cases.add(build("large_binary", field(ArrowType.LargeBinary.INSTANCE), (root, first) ->
        text(root, first, (v, i, s) -> ((BaseLargeVariableWidthVector) v).setSafe(i, bytes(s)))));
    cases.add(categories());
    cases.add(listsOfCategories());
    cases.add(runEndEncoded());
    cases.add(build("large_list", new Field("v", FieldType.nullable(ArrowType.LargeList.INSTANCE),
        List.of(new Field("item", FieldType.nullable(new ArrowType.Int(32, true)), null))),
        ArrowTypeCases::largeLists));
    cases.add(build("list_view", new Field("v", FieldType.nullable(ArrowType.ListView.INSTANCE),
        List.of(new Field("item", FieldType.nullable(new ArrowType.Int(32, true)), null))),
        ArrowTypeCases::listViews));
    cases.add(build("decimal256", field(new ArrowType.Decimal(38, 2, 256)), (root, first) -> {
      Decimal256Vector v = (Decimal256Vector) root.getVector("v");
      v.allocateNew();
      each(root, first, (i, id) -> {
        if (id % 5 == 3) {
          v.setNull(i);
        } else {
          v.setSafe(i, new BigDecimal(id * 1234567).movePointLeft(2));
        }
      });
    }));
    return cases;
  }

  private interface TextSetter {
    void set(FieldVector vector, int index, byte[] utf8);
  }

  private interface RowFiller {
    void fill(int index, int id);
  }

  private static Field field(ArrowType type) {
    return new Field("v", FieldType.nullable(type), null);
  }

  private static byte[] bytes(byte[] utf8) {
    // Binary values that are no text: a zero byte and a byte over 0x7f among them.
    byte[] out = new byte[utf8.length + 2];
    System.arraycopy(utf8, 0, out, 1, utf8.length);
    out[out.length - 1] = (byte) 0xfe;
    return out;
  }

  /** The text value of row {@code id}, or null. */
  private static String textOf(int id) {
    String base = TEXT[id % TEXT.length];
    return base == null ? null : base.endsWith("row ") ? base + id : base;
  }

  /** Fills the batch's ids and calls {@code filler} for each of its rows. */
  private static void each(VectorSchemaRoot root, boolean first, RowFiller filler) {
    int from = first ? 0 : FIRST_ROWS;
    int to = first ? FIRST_ROWS : ROWS;
    IntVector ids = (IntVector) root.getVector("id");
    ids.allocateNew(to - from);
    for (int id = from; id < to; id++) {
      ids.setSafe(id - from, id);
      filler.fill(id - from, id);
    }
    ids.setValueCount(to - from);
    root.setRowCount(to - from);
  }

  private static void text(VectorSchemaRoot root, boolean first, TextSetter setter) {
    FieldVector v = root.getVector("v");
    v.allocateNew();
    each(root, first, (i, id) -> {
      String value = textOf(id);
      if (value == null) {
        v.setNull(i);
      } else {
        setter.set(v, i, value.getBytes(StandardCharsets.UTF_8));
      }
    });
    v.setValueCount(root.getRowCount());
  }

  /** pandas' Categorical as pyarrow sends it: int8 indices into a dictionary of strings. */
  private static Case categories() {
    try (BufferAllocator allocator = new RootAllocator();
         VarCharVector values = new VarCharVector("v", allocator)) {
      String[] colours = {"red", "green", "blue", "a colour of more than twelve bytes"};
      values.allocateNew();
      for (int i = 0; i < colours.length; i++) {
        values.setSafe(i, colours[i].getBytes(StandardCharsets.UTF_8));
      }
      values.setValueCount(colours.length);
      DictionaryEncoding encoding = new DictionaryEncoding(7, false, new ArrowType.Int(8, true));
      DictionaryProvider.MapDictionaryProvider dictionaries = new DictionaryProvider.MapDictionaryProvider();
      dictionaries.put(new Dictionary(values, encoding));
      Field v = new Field("v", new FieldType(true, new ArrowType.Int(8, true), encoding), null);
      return write("dictionary", v, dictionaries, allocator, (root, first) -> {
        TinyIntVector indices = (TinyIntVector) root.getVector("v");
        indices.allocateNew();
        each(root, first, (i, id) -> {
          if (id % 4 == 2) {
            indices.setNull(i);
          } else {
            indices.setSafe(i, (id * 3) % colours.length);
          }
        });
        indices.setValueCount(root.getRowCount());
      });
    }
  }

  /** Lists of categories: dictionary-encoded values inside a list (int8 indices, one dictionary). */
  private static Case listsOfCategories() {
    try (BufferAllocator allocator = new RootAllocator();
         VarCharVector values = new VarCharVector("item", allocator)) {
      String[] tags = {"north", "south", "a tag of more than twelve bytes"};
      values.allocateNew();
      for (int i = 0; i < tags.length; i++) {
        values.setSafe(i, tags[i].getBytes(StandardCharsets.UTF_8));
      }
      values.setValueCount(tags.length);
      DictionaryEncoding encoding = new DictionaryEncoding(9, false, new ArrowType.Int(8, true));
      DictionaryProvider.MapDictionaryProvider dictionaries = new DictionaryProvider.MapDictionaryProvider();
      dictionaries.put(new Dictionary(values, encoding));
      Field v = new Field("v", FieldType.nullable(ArrowType.List.INSTANCE),
          List.of(new Field("item", new FieldType(true, new ArrowType.Int(8, true), encoding), null)));
      return write("list_of_dictionary", v, dictionaries, allocator, (root, first) -> {
        ListVector lists = (ListVector) root.getVector("v");
        lists.allocateNew();
        TinyIntVector indices = (TinyIntVector) lists.getDataVector();
        int[] next = {0};
        each(root, first, (i, id) -> {
          if (id % 5 == 4) {
            lists.setNull(i);
            return;
          }
          lists.startNewValue(i);
          int size = id % 3 + 1;
          for (int k = 0; k < size; k++) {
            indices.setSafe(next[0]++, (id + k) % tags.length);
          }
          lists.endValue(i, size);
        });
        indices.setValueCount(next[0]);
        lists.setValueCount(root.getRowCount());
      });
    }
  }

  /** Runs of strings (some of them null) under int32 run ends. */
  private static Case runEndEncoded() {
    Field v = new Field("v", FieldType.nullable(ArrowType.RunEndEncoded.INSTANCE), List.of(
        new Field("run_ends", FieldType.notNullable(new ArrowType.Int(32, true)), null),
        new Field("values", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
    return build("run_end_encoded", v, (root, first) -> {
      RunEndEncodedVector runs = (RunEndEncodedVector) root.getVector("v");
      IntVector ends = (IntVector) runs.getRunEndsVector();
      VarCharVector values = (VarCharVector) runs.getValuesVector();
      ends.allocateNew();
      values.allocateNew();
      each(root, first, (i, id) -> {});
      int rows = root.getRowCount();
      // Runs of 1, 2, 3, ... rows, the last cut at the batch's end; every third run null.
      int run = 0;
      for (int end = 0; end < rows; run++) {
        end = Math.min(rows, end + run + 1);
        ends.setSafe(run, end);
        if (run % 3 == 2) {
          values.setNull(run);
        } else {
          values.setSafe(run, ((first ? "first " : "second ") + "run " + run + " of its batch")
              .getBytes(StandardCharsets.UTF_8));
        }
      }
      ends.setValueCount(run);
      values.setValueCount(run);
      runs.setValueCount(rows);
    });
  }

  /** Lists of 0 to 3 integers (one of them null), every fifth list null. */
  private static void largeLists(VectorSchemaRoot root, boolean first) {
    LargeListVector lists = (LargeListVector) root.getVector("v");
    lists.allocateNew();
    IntVector items = (IntVector) lists.getDataVector();
    int[] next = {0};
    each(root, first, (i, id) -> {
      if (id % 5 == 4) {
        lists.setNull(i);
        return;
      }
      lists.startNewValue(i);
      int size = id % 4;
      for (int k = 0; k < size; k++) {
        if (k == 1 && id % 3 == 0) {
          items.setNull(next[0]++);
        } else {
          items.setSafe(next[0]++, id * 10 + k);
        }
      }
      lists.endValue(i, size);
    });
    items.setValueCount(next[0]);
    lists.setValueCount(root.getRowCount());
  }

  /** The same lists as {@link #largeLists}, as list views laid out backwards (each view points into the child). */
  private static void listViews(VectorSchemaRoot root, boolean first) {
    ListViewVector lists = (ListViewVector) root.getVector("v");
    lists.allocateNew();
    IntVector items = (IntVector) lists.getDataVector();
    int rows = (first ? FIRST_ROWS : ROWS - FIRST_ROWS);
    int from = first ? 0 : FIRST_ROWS;
    // The child first (list views are checked against it), rows in reverse order of their values.
    int total = 0;
    for (int id = from; id < from + rows; id++) {
      total += id % 5 == 4 ? 0 : id % 4;
    }
    items.allocateNew(Math.max(total, 1));
    int[] offsets = new int[rows];
    int at = total;
    for (int i = 0; i < rows; i++) {
      int id = from + i;
      int size = id % 5 == 4 ? 0 : id % 4;
      at -= size;
      offsets[i] = at;
      for (int k = 0; k < size; k++) {
        items.setSafe(at + k, id * 10 + k);
      }
    }
    items.setValueCount(total);
    each(root, first, (i, id) -> {
      if (id % 5 == 4) {
        lists.setNull(i);
        return;
      }
      lists.setValidity(i, 1);
      lists.setOffset(i, offsets[i]);
      lists.setSize(i, id % 4);
    });
    lists.setValueCount(root.getRowCount());
  }

  private static Case build(String name, Field v, BiConsumer<VectorSchemaRoot, Boolean> fill) {
    try (BufferAllocator allocator = new RootAllocator()) {
      return write(name, v, new DictionaryProvider.MapDictionaryProvider(), allocator, fill);
    }
  }

  /** The case's two batches as an Arrow IPC stream, written as IPC writers write them (dictionaries first, once). */
  private static Case write(String name, Field v, DictionaryProvider dictionaries, BufferAllocator allocator,
      BiConsumer<VectorSchemaRoot, Boolean> fill) {
    Schema schema = new Schema(List.of(new Field("id", FieldType.notNullable(new ArrowType.Int(32, true)), null), v));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
         ArrowStreamWriter writer = new ArrowStreamWriter(root, dictionaries, out)) {
      writer.start();
      for (boolean first : new boolean[] {true, false}) {
        fill.accept(root, first);
        writer.writeBatch();
      }
      writer.end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Case(name, out.toByteArray());
  }

  /**
   * What DuckDB gives for a case's batches imported directly (a DuckDB of this process, its Arrow scan over the
   * stream): the table they create, with the same batches appended {@code rounds - 1} more times, read by
   * {@link #check}; or DuckDB's error.
   */
  public static Expected direct(Case c, int rounds) {
    try (BufferAllocator allocator = new RootAllocator();
         Connection connection = DriverManager.getConnection("jdbc:duckdb:")) {
      DuckDBConnection duckdb = connection.unwrap(DuckDBConnection.class);
      for (int round = 0; round < rounds; round++) {
        String view = "batches_" + round;
        try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator);
             Statement statement = connection.createStatement()) {
          Data.exportArrayStream(allocator, c.open(allocator), stream);
          try {
            duckdb.registerArrowStream(view, stream);
            statement.execute(round == 0 ? "CREATE TABLE t AS SELECT * FROM " + view
                : "INSERT INTO t SELECT * FROM " + view);
          } catch (SQLException refused) {
            return new Expected(null, String.valueOf(refused.getMessage()));
          } catch (RuntimeException refused) {
            // DuckDB's driver wraps what it refuses when it binds the stream (at registration) in an unchecked one.
            if (!(refused.getCause() instanceof SQLException cause)) {
              throw refused;
            }
            return new Expected(null, String.valueOf(cause.getMessage()));
          }
        }
      }
      List<List<String>> rows = new ArrayList<>();
      try (Statement statement = connection.createStatement();
           ResultSet result = statement.executeQuery(check("t"))) {
        while (result.next()) {
          rows.add(java.util.Arrays.asList(result.getString(1), result.getString(2), result.getString(3)));
        }
      }
      return new Expected(rows, null);
    } catch (SQLException e) {
      throw new AssertionError("DuckDB run directly failed: " + e.getMessage(), e);
    }
  }

  /** A table written from a case, read through a Thallus client by {@link #check}. */
  public static List<List<String>> rows(ThallusClient client, String table) {
    List<List<String>> rows = new ArrayList<>();
    try (ThallusStream stream = client.query(QueryRequest.builder(check(table)).build())) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot root = stream.next()) {
          for (int i = 0; i < root.getRowCount(); i++) {
            List<String> row = new ArrayList<>();
            for (FieldVector vector : root.getFieldVectors()) {
              Object value = vector.getObject(i);
              row.add(value == null ? null : value.toString());
            }
            rows.add(row);
          }
        }
      }
    }
    return rows;
  }
}
