package io.thallus.cli;

import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.pojo.Field;
import org.duckdb.DuckDBConnection;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "query", mixinStandardHelpOptions = true,
    description = "Run SQL on a Thallus server; print the result, or write it to an Arrow or Parquet file.")
final class QueryCommand implements Callable<Integer> {
  @Parameters(index = "0", description = "Server location, e.g. thallus://localhost:47470 or thallus+tcp://host:port.")
  String url;

  @Parameters(index = "1", description = "SQL; a dataset is visible as the view 'dataset'.")
  String sql;

  @Option(names = "--dataset", description = "A path under the server's data root (Parquet, CSV, glob, directory, .duckdb).")
  String dataset;

  @Option(names = "--out", description = "Write the result to FILE.arrow (Arrow IPC file) or FILE.parquet.")
  Path out;

  @Option(names = "--batch-rows", defaultValue = "65536", description = "Rows per batch (default: ${DEFAULT-VALUE}).")
  int batchRows;

  @Option(names = "--show", defaultValue = "20", description = "Rows to print when not writing a file (default: ${DEFAULT-VALUE}).")
  int show;

  @Mixin
  ConnectionOptions connection;

  @Override
  public Integer call() throws IOException, SQLException {
    QueryRequest.Builder request = QueryRequest.builder(sql).batchRows(batchRows);
    if (dataset != null) {
      request.dataset(dataset);
    }
    long start = System.nanoTime();
    try (BufferAllocator allocator = new RootAllocator();
         ThallusClient client = ThallusClient.connect(allocator, Location.parse(url), connection.clientOptions());
         ThallusStream stream = client.query(request.build())) {
      long rows;
      if (out == null) {
        rows = print(stream);
      } else {
        String name = out.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".arrow") || name.endsWith(".feather")) {
          rows = writeArrow(stream);
        } else if (name.endsWith(".parquet")) {
          rows = writeParquet(stream, allocator);
        } else {
          throw ThallusException.of(StatusCode.INVALID_ARGUMENT,
              "cannot write " + out + ": use a .arrow or .parquet file name");
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.err.printf(Locale.ROOT, "%,d rows in %.3f s over %s%s%n", rows, seconds, stream.transport(),
          out == null ? "" : ", written to " + out);
    }
    return 0;
  }

  private long print(ThallusStream stream) {
    List<String> headers = stream.getSchema().getFields().stream().map(Field::getName).toList();
    TextTable table = new TextTable(headers);
    long rows = 0;
    while (stream.hasNext()) {
      try (VectorSchemaRoot batch = stream.next()) {
        for (int row = 0; row < batch.getRowCount() && rows + row < show; row++) {
          List<String> cells = new ArrayList<>();
          for (FieldVector vector : batch.getFieldVectors()) {
            cells.add(format(vector, row, stream));
          }
          table.add(cells);
        }
        rows += batch.getRowCount();
      }
    }
    table.print(System.out);
    if (rows > show) {
      System.out.printf(Locale.ROOT, "(%,d more rows)%n", rows - show);
    }
    return rows;
  }

  private static String format(FieldVector vector, int row, ThallusStream stream) {
    if (vector.isNull(row)) {
      return "NULL";
    }
    Object value = vector.getObject(row);
    if (vector.getField().getDictionary() != null) {
      Dictionary dictionary = stream.lookup(vector.getField().getDictionary().getId());
      value = dictionary.getVector().getObject((int) ((BaseIntVector) vector).getValueAsLong(row));
    }
    if (value instanceof byte[] bytes) {
      return "0x" + java.util.HexFormat.of().formatHex(bytes);
    }
    String text = String.valueOf(value);
    return text.length() > 60 ? text.substring(0, 57) + "..." : text;
  }

  private long writeArrow(ThallusStream stream) throws IOException {
    long rows = 0;
    try (FileChannel channel = FileChannel.open(out, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      VectorSchemaRoot root = stream.getVectorSchemaRoot();
      // The file format fixes dictionaries up front: start writing once the first batch has loaded them.
      boolean any = stream.loadNextBatch();
      try (ArrowFileWriter writer = new ArrowFileWriter(root, stream, channel)) {
        writer.start();
        while (any) {
          writer.writeBatch();
          rows += root.getRowCount();
          any = stream.loadNextBatch();
        }
        writer.end();
      }
    }
    return rows;
  }

  /** Hands the stream to an in-process DuckDB through Arrow's C stream interface and lets it write Parquet. */
  private long writeParquet(ThallusStream stream, BufferAllocator allocator) throws SQLException {
    try (ArrowArrayStream exported = ArrowArrayStream.allocateNew(allocator);
         DuckDBConnection duckdb = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      Data.exportArrayStream(allocator, stream, exported);
      duckdb.registerArrowStream("thallus_result", exported);
      String target = out.toAbsolutePath().toString().replace("'", "''");
      statement.execute("COPY (SELECT * FROM thallus_result) TO '" + target + "' (FORMAT parquet)");
      try (var count = statement.executeQuery("SELECT count(*) FROM read_parquet('" + target + "')")) {
        count.next();
        return count.getLong(1);
      }
    }
  }
}
