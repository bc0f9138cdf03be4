package io.thallus.cli;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.IngestResult;
import io.thallus.Location;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusIngest;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.InvalidArrowFileException;
import org.duckdb.DuckDBResultSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code thallus load URL TABLE FILE}: a Parquet, CSV or Arrow IPC file into a table of the server, through the
 * write path (all rows or none). Parquet and CSV are decoded into Arrow by DuckDB in this process (its readers, its
 * type detection); Arrow IPC files and streams are sent as they are.
 */
@Command(name = "load", mixinStandardHelpOptions = true,
    description = "Load a Parquet, CSV or Arrow IPC file into a table on a Thallus server (all rows or none).")
final class LoadCommand implements Callable<Integer> {
  @Parameters(index = "0", description = "Server location, e.g. thallus://localhost:47470 or thallus+tcp://host:port.")
  String url;

  @Parameters(index = "1", description = "The table: t, schema.t or catalog.schema.t.")
  String table;

  @Parameters(index = "2", description = "The file: .parquet, .csv (also .csv.gz, .tsv), .arrow/.feather (IPC file) "
      + "or .arrows/.ipc (IPC stream).")
  Path file;

  @Option(names = "--mode", defaultValue = "create", description = "create (the table must not exist), append (it "
      + "must), or replace (default: ${DEFAULT-VALUE}).")
  String mode;

  @Option(names = "--format", description = "parquet, csv or arrow, when the file name does not say.")
  String format;

  @Option(names = "--batch-rows", defaultValue = "122880", description = "Rows per batch read from Parquet or CSV "
      + "(default: ${DEFAULT-VALUE}).")
  int batchRows;

  @Mixin
  ConnectionOptions connection;

  @Override
  public Integer call() throws IOException, SQLException {
    IngestMode ingestMode = switch (mode.toLowerCase(Locale.ROOT)) {
      case "create" -> IngestMode.CREATE;
      case "append" -> IngestMode.APPEND;
      case "replace" -> IngestMode.REPLACE;
      default -> throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "--mode must be create, append or replace, "
          + "not " + mode);
    };
    if (!Files.isRegularFile(file)) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "no file " + file);
    }
    String kind = format != null ? format.toLowerCase(Locale.ROOT) : kindOf(file);
    IngestRequest request = IngestRequest.of(table, ingestMode);
    long start = System.nanoTime();
    try (BufferAllocator allocator = new RootAllocator();
         ThallusClient client = ThallusClient.connect(allocator, Location.parse(url), connection.clientOptions())) {
      IngestResult result = switch (kind) {
        case "parquet", "csv" -> viaDuckDB(kind, client, request, allocator);
        case "arrow" -> arrow(client, request, allocator);
        default -> throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "cannot load " + file + ": give a "
            + ".parquet, .csv, .arrow or .arrows file, or --format parquet|csv|arrow");
      };
      double seconds = (System.nanoTime() - start) / 1e9;
      double gb = result.bytes() / 1e9;
      System.err.printf(Locale.ROOT, "loaded %,d rows (%.3f GB of Arrow buffers) into %s in %.3f s: %,.0f rows/s, "
          + "%.2f GB/s over %s%n", result.rows(), gb, table, seconds, result.rows() / seconds, gb / seconds,
          result.transport());
    }
    return 0;
  }

  private static String kindOf(Path file) {
    String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
    if (name.endsWith(".parquet")) {
      return "parquet";
    }
    if (name.endsWith(".csv") || name.endsWith(".csv.gz") || name.endsWith(".tsv")) {
      return "csv";
    }
    if (name.endsWith(".arrow") || name.endsWith(".feather") || name.endsWith(".arrows") || name.endsWith(".ipc")) {
      return "arrow";
    }
    return "";
  }

  /** Parquet and CSV, read by DuckDB in this process and handed over as Arrow batches. */
  private IngestResult viaDuckDB(String kind, ThallusClient client, IngestRequest request, BufferAllocator allocator)
      throws SQLException, IOException {
    String path = file.toAbsolutePath().toString().replace("'", "''");
    String source = kind.equals("parquet") ? "read_parquet('" + path + "')" : "read_csv('" + path + "')";
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      long total = -1;
      if (kind.equals("parquet")) {
        // The row count is in the file's footer: reading it costs nothing, and it gives the progress bar its end.
        try (ResultSet count = statement.executeQuery("SELECT sum(num_rows) FROM parquet_file_metadata('" + path
            + "')")) {
          count.next();
          total = count.getLong(1);
        }
      }
      try (Statement scan = duckdb.createStatement();
           ResultSet rows = scan.executeQuery("SELECT * FROM " + source);
           ArrowReader reader = (ArrowReader) ((DuckDBResultSet) rows).arrowExportStream(allocator, batchRows)) {
        return send(client, request, reader, total);
      }
    }
  }

  /** An Arrow IPC file, or else an IPC stream, sent batch by batch as it is read. */
  private IngestResult arrow(ThallusClient client, IngestRequest request, BufferAllocator allocator)
      throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
         ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      // Reading the footer tells a file from a stream before anything is sent.
      reader.getVectorSchemaRoot();
      return send(client, request, reader, -1);
    } catch (InvalidArrowFileException notAFile) {
      try (ArrowStreamReader reader = new ArrowStreamReader(Files.newInputStream(file), allocator)) {
        return send(client, request, reader, -1);
      }
    }
  }

  private static IngestResult send(ThallusClient client, IngestRequest request, ArrowReader reader, long totalRows)
      throws IOException {
    Progress progress = new Progress(System.err, totalRows);
    VectorSchemaRoot root = reader.getVectorSchemaRoot();
    try (ThallusIngest ingest = client.ingest(request, root.getSchema(), reader)) {
      long rows = 0;
      while (reader.loadNextBatch()) {
        ingest.write(root);
        rows += root.getRowCount();
        progress.show(rows, ingest.bytesSent(), ingest.elapsed().toNanos());
      }
      progress.done();
      return ingest.finish();
    }
  }

  /** A progress bar on a terminal (rows, bytes, rate; a bar when the total is known); nothing when not a terminal. */
  private static final class Progress {
    private static final int WIDTH = 30;
    private static final long EVERY_NANOS = 200_000_000L;
    private final PrintStream out;
    private final long total;
    private final boolean terminal = System.console() != null;
    private long shownAt;

    Progress(PrintStream out, long total) {
      this.out = out;
      this.total = total;
    }

    void show(long rows, long bytes, long nanos) {
      if (!terminal || nanos - shownAt < EVERY_NANOS) {
        return;
      }
      shownAt = nanos;
      double seconds = nanos / 1e9;
      String bar = "";
      if (total > 0) {
        int filled = (int) Math.min(WIDTH, WIDTH * rows / total);
        bar = "[" + "#".repeat(filled) + "-".repeat(WIDTH - filled) + "] "
            + String.format(Locale.ROOT, "%3d%% ", 100 * rows / total);
      }
      out.printf(Locale.ROOT, "\r%s%,d rows, %.2f GB, %.2f GB/s ", bar, rows, bytes / 1e9, bytes / 1e9 / seconds);
      out.flush();
    }

    void done() {
      if (terminal && shownAt > 0) {
        out.println();
      }
    }
  }
}
