package io.thallus.duckdb;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The files a dataset path stands for, as DuckDB reads them: a glob (a folder means its Parquet files, at any depth)
 * and the table function that reads them. One rule for binding the {@code dataset} view and for describing it.
 */
record DatasetFiles(String glob, Format format) {
  /** How the files are read; each names its DuckDB table function. */
  enum Format {
    PARQUET("read_parquet"),
    CSV("read_csv"),
    JSON("read_json");

    private final String reader;

    Format(String reader) {
      this.reader = reader;
    }

    String reader() {
      return reader;
    }
  }

  static DatasetFiles of(Path path) {
    String name = path.getFileName() == null ? "" : path.getFileName().toString().toLowerCase(Locale.ROOT);
    if (Files.isDirectory(path)) {
      return new DatasetFiles(path.resolve("**").resolve("*.parquet").toString(), Format.PARQUET);
    }
    if (name.endsWith(".csv") || name.endsWith(".csv.gz") || name.endsWith(".tsv")) {
      return new DatasetFiles(path.toString(), Format.CSV);
    }
    if (name.endsWith(".json") || name.endsWith(".ndjson") || name.endsWith(".jsonl")) {
      return new DatasetFiles(path.toString(), Format.JSON);
    }
    return new DatasetFiles(path.toString(), Format.PARQUET);
  }

  /** The SQL that reads the files: {@code read_parquet('...')} and so on. */
  String source() {
    return format.reader() + "(" + DuckDBEngine.literal(glob) + ")";
  }
}
