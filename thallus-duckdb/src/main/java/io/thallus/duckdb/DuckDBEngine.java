package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.spi.Deadline;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBDriver;

/**
 * The query engine: one embedded DuckDB per server (in memory, or a database file) and one DuckDB connection per
 * client session ({@link DuckDBSession}). Results leave DuckDB through its Arrow export (the C Data Interface:
 * DuckDB's own memory, no copy) and stream, so the schema is known and the first batch is on its way before the
 * query has finished.
 *
 * <p>A dataset is visible to the SQL as the view {@code dataset} (Parquet or CSV file, glob, directory of Parquet);
 * a DuckDB database file is attached read-only and becomes the connection's default catalog.
 */
public final class DuckDBEngine implements QueryEngine {
  /** What DuckDB's JDBC driver says, in streaming mode, instead of the error that stopped a query. */
  static final String HIDDEN_ERROR = "Invalid result set";
  /** How long, and how often, a cancellation is repeated while DuckDB has not started the query yet. */
  private static final java.time.Duration CANCEL_PERSISTENCE = java.time.Duration.ofSeconds(30);
  private static final java.time.Duration CANCEL_RETRY = java.time.Duration.ofMillis(20);

  private final DuckDBConnection database;
  private final Properties settings;
  private final Path filesRoot;
  private final Map<Path, String> attached = new ConcurrentHashMap<>();
  private final AtomicInteger attachCount = new AtomicInteger();
  private final String defaultCatalog;
  /** DuckDB's threads setting, fixed once the engine is built (its configuration is locked). */
  private final int threads;
  private final String timeZone;
  private final SpillFolder spill;
  /** The statements that may commit a write, for a split's one-snapshot check. */
  private final WriteWindow writes = new WriteWindow();
  private boolean closed;
  private DuckDBConnection diagnostics;
  private SpillFolder diagnosticsSpill;

  private DuckDBEngine(DuckDBConnection database, Properties settings, Path filesRoot, String timeZone,
      SpillFolder spill) throws SQLException {
    this.database = database;
    this.timeZone = timeZone;
    this.spill = spill;
    try (Statement statement = database.createStatement();
         java.sql.ResultSet name = statement.executeQuery("SELECT current_database()")) {
      name.next();
      this.defaultCatalog = DuckDBSql.identifier(name.getString(1));
    }
    try (Statement statement = database.createStatement();
         java.sql.ResultSet threadCount = statement.executeQuery("SELECT current_setting('threads')::INTEGER")) {
      threadCount.next();
      this.threads = threadCount.getInt(1);
    }
    this.settings = settings;
    this.filesRoot = filesRoot;
  }

  /** An engine with DuckDB's defaults for threads and memory. */
  public static DuckDBEngine create() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Typed settings for the embedded DuckDB. */
  public static final class Builder {
    private Integer threads;
    private String memoryLimit;
    private Path filesRoot;
    private Path databaseFile;
    private boolean readOnly;
    private String timeZone;

    private Builder() {}

    /**
     * Keeps the data in this DuckDB file (created if missing) instead of in memory: committed transactions survive
     * a restart and a crash (DuckDB's write-ahead log). The file must not lie under the data root, where SQL could
     * open it a second time as a dataset. DuckDB itself admits the file and its WAL to SQL by their own names (no
     * setting stops it); a {@link #readOnly} file is opened so that no name of it reaches SQL (see ReadOnlyOpening).
     */
    public Builder database(Path file) {
      this.databaseFile = file.toAbsolutePath().normalize();
      return this;
    }

    /** Serves the {@link #database} file read-only: every statement that writes fails, and the file is not locked. */
    public Builder readOnly(boolean readOnly) {
      this.readOnly = readOnly;
      return this;
    }

    /** DuckDB worker threads (default: DuckDB's, one per core). */
    public Builder threads(int threads) {
      if (threads < 1) {
        throw new IllegalArgumentException("threads must be at least 1, got " + threads);
      }
      this.threads = threads;
      return this;
    }

    /**
     * The time zone every session's TIMESTAMPTZ values are shown and cast in (DuckDB's {@code TimeZone} setting;
     * default: the host's). Sessions cannot change it: the server's configuration is locked.
     */
    public Builder timeZone(String zone) {
      try {
        java.time.ZoneId.of(zone);
      } catch (java.time.DateTimeException e) {
        throw new IllegalArgumentException("not a time zone: " + zone + " (e.g. UTC, Europe/Paris)", e);
      }
      this.timeZone = zone;
      return this;
    }

    /** DuckDB's memory limit in DuckDB's syntax, e.g. {@code "4GB"}. */
    public Builder memoryLimit(String limit) {
      if (!limit.matches("(?i)\\s*\\d+(\\.\\d+)?\\s*(b|kb|kib|mb|mib|gb|gib|tb|tib)\\s*")) {
        throw new IllegalArgumentException("not a DuckDB memory size: " + limit + " (e.g. 512MB, 4GB)");
      }
      this.memoryLimit = limit.trim();
      return this;
    }

    /**
     * The one directory whose files SQL may read (the server's data root). Without it SQL reads and writes no file
     * at all. Either way DuckDB is locked down: no external access elsewhere, no extension installs or autoloads,
     * and SQL cannot change those settings back.
     */
    public Builder filesUnder(Path root) {
      try {
        this.filesRoot = root.toRealPath();
      } catch (java.io.IOException e) {
        throw ThallusException.of(StatusCode.NOT_FOUND, "data root " + root + " does not exist: " + e.getMessage(), e);
      }
      return this;
    }

    public DuckDBEngine build() {
      Properties settings = new Properties();
      if (threads != null) {
        settings.setProperty("threads", Integer.toString(threads));
      }
      settings.setProperty("memory_limit", memoryLimit != null ? memoryLimit : defaultMemoryLimit());
      Properties properties = new Properties();
      properties.putAll(settings);
      // Streaming results: a result is produced as it is read, so OPEN returns before the query has finished.
      properties.setProperty(DuckDBDriver.JDBC_STREAM_RESULTS, "true");
      String url = "jdbc:duckdb:";
      ReadOnlyOpening opening = null;
      if (databaseFile != null) {
        checkDatabaseFile();
        if (readOnly) {
          properties.setProperty(DuckDBDriver.DUCKDB_READONLY_PROPERTY, "true");
          opening = ReadOnlyOpening.of(databaseFile);
          url += opening.path();
        } else {
          url += databaseFile;
        }
      } else if (readOnly) {
        throw new IllegalArgumentException("read-only needs a database file: an empty in-memory database has nothing "
            + "to read");
      }
      // DuckDB's own default for an in-memory database is ".tmp" in the process's working directory, wherever the
      // server was started; beside a database file it is "<file>.tmp", which stays (spills then go to the disk the
      // database is on).
      SpillFolder spill = null;
      try {
        SpillFolder.sweepStale();
        spill = databaseFile == null ? SpillFolder.inTemp(filesRoot) : SpillFolder.beside(databaseFile, filesRoot);
        DuckDBConnection database = (DuckDBConnection) DriverManager.getConnection(url, properties);
        try {
          // A read-only database's private name goes before DuckDB's access is locked (see ReadOnlyOpening).
          if (opening != null) {
            opening.close();
          }
          if (databaseFile != null) {
            ownerOnly(databaseFile);
          }
          lockDown(database, filesRoot, timeZone, spill);
        } catch (SQLException | RuntimeException e) {
          database.close();
          throw e;
        }
        return new DuckDBEngine(database, settings, filesRoot, timeZone, spill);
      } catch (RuntimeException e) {
        closeQuietly(opening);
        closeQuietly(spill);
        throw e;
      } catch (SQLException e) {
        closeQuietly(opening);
        closeQuietly(spill);
        String where = databaseFile == null ? "" : " on " + databaseFile;
        throw ThallusException.of(StatusCode.INTERNAL, "cannot start DuckDB" + where + ": " + e.getMessage(), e);
      }
    }

    /**
     * The database file and its WAL readable by this user alone: once DuckDB has opened (or created) them, they lose
     * any group and other permissions (a file DuckDB has just created holds no row yet). A WAL DuckDB creates later,
     * after a checkpoint, has the process's umask: {@code thallus serve} sets 077.
     */
    private void ownerOnly(Path file) {
      if (readOnly) {
        // A file served read-only is not the server's to change, not even its mode.
        return;
      }
      var ownerOnly = PosixFilePermissions.fromString("rw-------");
      try {
        for (Path path : List.of(file, file.resolveSibling(file.getFileName() + ".wal"))) {
          if (Files.isRegularFile(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)
              && !Files.getPosixFilePermissions(path).equals(ownerOnly) && Files.isWritable(path)) {
            Files.setPosixFilePermissions(path, ownerOnly);
          }
        }
      } catch (java.io.IOException | UnsupportedOperationException e) {
        throw ThallusException.of(StatusCode.INTERNAL, "cannot make " + file + " readable by this user alone: " + e,
            e);
      }
    }

    private void checkDatabaseFile() {
      Path parent = databaseFile.getParent();
      if (parent == null || !Files.isDirectory(parent)) {
        throw ThallusException.of(StatusCode.NOT_FOUND, "the database's directory " + parent + " does not exist");
      }
      if (readOnly && !Files.exists(databaseFile)) {
        throw ThallusException.of(StatusCode.NOT_FOUND, "the database " + databaseFile + " does not exist, and a "
            + "read-only database is not created");
      }
      if (filesRoot != null) {
        Path real;
        try {
          real = parent.toRealPath().resolve(databaseFile.getFileName());
        } catch (java.io.IOException e) {
          throw ThallusException.of(StatusCode.NOT_FOUND, "cannot resolve " + databaseFile + ": " + e.getMessage(), e);
        }
        if (real.startsWith(filesRoot)) {
          throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the database " + databaseFile + " lies under the "
              + "data root " + filesRoot + ", where SQL could read its file or open it again as a dataset; keep it "
              + "beside the data root");
        }
      }
    }
  }

  /**
   * What keeps remote SQL inside the data root: DuckDB's own file-system switch, with the data root as the one
   * exception Thallus gives (DuckDB adds its own database file, WAL and spill folder: see SpillFolder and
   * ReadOnlyOpening), no extension downloads or autoloads, and the configuration locked so SQL cannot undo any of it.
   */
  private static void lockDown(DuckDBConnection database, Path filesRoot, String timeZone, SpillFolder spill)
      throws SQLException {
    try (Statement statement = database.createStatement()) {
      // DuckDB lets SQL into its spill directory (it joins allowed_directories), so it is set here, outside the data
      // root (see SpillFolder): for an in-memory database a private directory of this engine's own, never DuckDB's
      // default ".tmp" in the server's working directory; beside a database file, DuckDB's own "<file>.tmp".
      statement.execute("SET temp_directory = " + literal(spill.directory().toString()));
      if (timeZone != null) {
        statement.execute("SET GLOBAL TimeZone = " + literal(timeZone));
      }
      // Set on this connection before the lock, inherited by every query's duplicate (they are per connection):
      // DuckDB fills a 10 MiB buffer per open streaming result (13 MB of RSS each, unseen by memory_limit); 1 MiB
      // keeps an open result at about 1.3 MB. Sorts and hash tables of one query spill past a quarter of the
      // memory limit instead of taking all of it.
      statement.execute("SET streaming_buffer_size = '1MiB'");
      statement.execute("SET operator_memory_limit = '" + operatorMemoryLimit(database) + "'");
      if (filesRoot != null) {
        statement.execute("SET allowed_directories = [" + literal(filesRoot + "/") + "]");
      }
      statement.execute("SET enable_external_access = false");
      statement.execute("SET autoinstall_known_extensions = false");
      statement.execute("SET autoload_known_extensions = false");
      statement.execute("SET lock_configuration = true");
    }
  }

  /** Half of the machine's memory (DuckDB's own default is 80%): the server's Arrow budget and the JVM need room. */
  private static String defaultMemoryLimit() {
    if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os && os.getTotalMemorySize() > 0) {
      return (os.getTotalMemorySize() / 2 >> 20) + "MiB";
    }
    return "4GiB";
  }

  /** A quarter of the database's memory limit, in DuckDB's syntax. */
  private static String operatorMemoryLimit(DuckDBConnection database) throws SQLException {
    try (Statement statement = database.createStatement();
         java.sql.ResultSet limit = statement.executeQuery(
             "SELECT current_setting('memory_limit')")) {
      limit.next();
      return (parseBytes(limit.getString(1)) / 4 >> 20) + "MiB";
    }
  }

  /** DuckDB's display of a size ("9.3 GiB", "953.6 MiB") in bytes. */
  static long parseBytes(String size) {
    String[] parts = size.trim().split("\\s+");
    double value = Double.parseDouble(parts[0]);
    String unit = parts.length > 1 ? parts[1].toUpperCase(Locale.ROOT) : "B";
    long scale = switch (unit) {
      case "KIB", "KB" -> 1L << 10;
      case "MIB", "MB" -> 1L << 20;
      case "GIB", "GB" -> 1L << 30;
      case "TIB", "TB" -> 1L << 40;
      default -> 1;
    };
    return (long) (value * scale);
  }

  @Override
  public QueryResult execute(QuerySpec spec, BufferAllocator allocator) {
    return execute(spec, allocator, new CancelSignal());
  }

  /** One statement in a session of its own, which ends with the result. */
  @Override
  public QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    return executeAlone(spec, allocator, cancel, false);
  }

  /**
   * As {@link #execute(QuerySpec, BufferAllocator, CancelSignal)} for a statement DuckDB plans as a query; null
   * (nothing run) for any other.
   */
  QueryResult executeIfQuery(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    return executeAlone(spec, allocator, cancel, true);
  }

  private QueryResult executeAlone(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel,
      boolean onlyQueries) {
    DuckDBSession session = openSession();
    try {
      QueryResult result = session.executeHere(spec, allocator, cancel, onlyQueries);
      if (result instanceof DuckDBResult rows) {
        return rows.closing(session);
      }
      session.close();
      return result;
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
  }

  /** DuckDB's {@code threads} setting: its worker threads plus the thread that calls it. */
  @Override
  public java.util.OptionalInt queryThreads() {
    return java.util.OptionalInt.of(threads);
  }

  /** A session: one DuckDB connection of its own, so its transaction, temp tables, variables and USE persist. */
  @Override
  public DuckDBSession openSession() {
    try {
      return new DuckDBSession(this, (DuckDBConnection) database.duplicate());
    } catch (SQLException e) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "DuckDB is closed: " + e.getMessage(), e);
    }
  }

  /** A new DuckDB connection to the served database, with the engine's settings; the caller closes it. */
  DuckDBConnection newConnection() throws SQLException {
    return (DuckDBConnection) database.duplicate();
  }

  WriteWindow writes() {
    return writes;
  }

  /**
   * Interrupts DuckDB mid-query, so even an aggregate stops before it ends. DuckDB forgets an interrupt that comes
   * before its query has started, so a virtual thread keeps asking until {@code executing} turns false (the
   * statement returned) or a deadline passes; the thread that cancels never blocks.
   */
  private static Runnable cancelling(Statement statement, AtomicBoolean executing) {
    // A platform thread: DuckDB's cancel waits for the connection's lock, which planning holds (for as long as 30 s
    // when it folds a huge constant), and a virtual thread blocked in native code would pin its carrier that long.
    return () -> {
      if (!executing.get()) {
        // The statement has returned: nothing to stop, and no thread to start.
        return;
      }
      Thread.ofPlatform().daemon().name("thallus-duckdb-cancel").start(() -> {
        Deadline deadline = Deadline.after(CANCEL_PERSISTENCE);
        // Only while this execution runs: a session keeps prepared statements, and a cancel after it returned would
        // reach the statement's next run.
        while (executing.get() && !deadline.isExpired()) {
          try {
            statement.cancel();
          } catch (SQLException | RuntimeException ignored) {
            // Finished or closed already: nothing is left to stop.
            return;
          }
          if (!pause()) {
            return;
          }
        }
      });
    };
  }

  /** Work on DuckDB's driver: SQL, and whatever else ({@code E}) the work itself may throw. */
  interface SqlWork<T, E extends Exception> {
    T run() throws SQLException, E;
  }

  /** Runs {@code work} on {@code statement} so that {@code cancel} reaches it while, and only while, it runs. */
  static <T, E extends Exception> T cancellable(Statement statement, CancelSignal cancel, SqlWork<T, E> work)
      throws SQLException, E {
    AtomicBoolean executing = new AtomicBoolean(true);
    cancel.onCancel(cancelling(statement, executing));
    try {
      return work.run();
    } finally {
      executing.set(false);
    }
  }

  private static boolean pause() {
    try {
      Thread.sleep(CANCEL_RETRY.toMillis());
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static void bind(PreparedStatement statement, List<Object> parameters) throws SQLException {
    int expected = statement.getParameterMetaData().getParameterCount();
    if (expected != parameters.size()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT,
          "the SQL has " + expected + " parameter(s) (?), the request gave " + parameters.size());
    }
    for (int i = 0; i < parameters.size(); i++) {
      Object value = parameters.get(i);
      switch (value) {
        case null -> statement.setObject(i + 1, null);
        case byte[] bytes -> statement.setBytes(i + 1, bytes);
        default -> statement.setObject(i + 1, value);
      }
    }
  }

  /**
   * DuckDB's JDBC driver reports any error of a streaming query as "Invalid result set". Running the query once
   * more without streaming, on an empty database of its own, brings back DuckDB's own message for the caller when
   * the error lies in the query itself (a cast, a function's input). Tables and session objects do not exist
   * there: such a re-run fails to bind, says nothing about the first failure, and is not reported. The re-run
   * answers to the same {@code cancel} as the query: a client that leaves, cancels or runs out of time stops it too.
   */
  Optional<String> diagnose(QuerySpec spec, CancelSignal cancel) {
    DuckDBConnection connection = null;
    try {
      synchronized (this) {
        if (diagnostics == null) {
          diagnosticsSpill = SpillFolder.inTemp(filesRoot);
          diagnostics = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:", settings);
          lockDown(diagnostics, filesRoot, timeZone, diagnosticsSpill);
        }
        connection = (DuckDBConnection) diagnostics.duplicate();
      }
      if (spec.dataset().isPresent()) {
        bindDataset(connection, spec.dataset().get());
      }
      NamedDatasetViews.bindAll(connection, spec.namedDatasets());
      try (PreparedStatement statement = connection.prepareStatement(spec.sql())) {
        bind(statement, spec.parameters());
        cancellable(statement, cancel, () -> {
          statement.executeQuery().close();
          return null;
        });
        return Optional.empty();
      }
    } catch (SQLException e) {
      String message = e.getMessage();
      if (cancel.isCancelled() || message == null || message.startsWith("Catalog Error")
          || message.startsWith("Binder Error")) {
        return Optional.empty();
      }
      return Optional.of(message);
    } finally {
      closeQuietly(connection);
    }
  }

  /** Whether a dataset is a DuckDB database file (attached, and made the default catalog) rather than a file view. */
  static boolean isDatabaseFile(Path path) {
    String name = path.getFileName() == null ? "" : path.getFileName().toString().toLowerCase(Locale.ROOT);
    return name.endsWith(".duckdb") || name.endsWith(".db");
  }

  /** The folder SQL may read files under (the server's data root), or null for none. */
  Path filesRoot() {
    return filesRoot;
  }

  /** The catalog a connection starts in: the served database ("memory" when it is in memory), as a SQL identifier. */
  String defaultCatalog() {
    return defaultCatalog;
  }

  void bindDataset(DuckDBConnection connection, Path path) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      if (isDatabaseFile(path)) {
        String alias = attached.computeIfAbsent(path, p -> "dataset_" + attachCount.incrementAndGet());
        synchronized (attached) {
          statement.execute("ATTACH IF NOT EXISTS " + literal(path.toString()) + " AS " + alias + " (READ_ONLY)");
        }
        statement.execute("USE " + alias);
        return;
      }
      statement.execute("CREATE OR REPLACE TEMP VIEW dataset AS SELECT * FROM " + DatasetFiles.of(path).source());
    }
  }

  static String literal(String text) {
    return "'" + text.replace("'", "''") + "'";
  }

  static void closeQuietly(AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (Exception ignored) {
      // Closing after a failure: the first failure is the one worth reporting.
    }
  }

  /**
   * Closes the database. Idempotent: the server that runs this engine closes it, and so may the code that made it
   * (a try-with-resources around both).
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      closeQuietly(diagnostics);
      if (diagnosticsSpill != null) {
        diagnosticsSpill.close();
      }
    }
    closeQuietly(database);
    spill.close();
  }
}
