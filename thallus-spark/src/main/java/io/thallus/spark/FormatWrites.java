package io.thallus.spark;

import io.thallus.ThallusClient;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.types.StructType;

/**
 * Writes through the {@code thallus} format, run as writes through a {@link ThallusCatalog} on the same server, so
 * both have one write path: the session gets a catalog named after the connection's options
 * ({@code thallus_<hash>}), and the save mode becomes {@code append}, {@code overwritePartitions} or
 * {@code create} of {@code df.writeTo}.
 */
final class FormatWrites {
  private FormatWrites() {}

  /** Options that say what is read, not which server: they are no catalog's. */
  private static final Set<String> NOT_CONNECTION = Set.of(ThallusOptions.QUERY.toLowerCase(Locale.ROOT),
      ThallusOptions.DATASET, ThallusOptions.TABLE, ThallusOptions.PARTITION_COLUMN.toLowerCase(Locale.ROOT));

  static void save(Map<String, String> options, SaveMode mode, Dataset<Row> data) {
    ReadConf conf = ReadConf.from(options);
    if (conf.table().isEmpty() || conf.query().isPresent() || conf.dataset().isPresent()) {
      throw new IllegalArgumentException("a write names its table with option 'table' (a table of the server's "
          + "database, e.g. main.trips), and no 'query' or 'dataset'");
    }
    TableName table = TableName.parse(conf.table().get());
    String catalog = registerCatalog(data.sparkSession(), options);
    String identifier = catalog + "." + quoted(table);
    boolean exists = tableExists(conf);
    try {
      write(data, identifier, table, mode, exists);
    } catch (org.apache.spark.sql.AnalysisException e) {
      // Raced with another writer (the table appeared or went since the check): Spark's message says which.
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  private static void write(Dataset<Row> data, String identifier, TableName table, SaveMode mode, boolean exists)
      throws org.apache.spark.sql.AnalysisException {
    switch (mode) {
      case Append -> {
        if (exists) {
          data.writeTo(identifier).append();
        } else {
          data.writeTo(identifier).create();
        }
      }
      case Overwrite -> {
        if (exists) {
          data.writeTo(identifier).overwritePartitions();
        } else {
          data.writeTo(identifier).create();
        }
      }
      case ErrorIfExists -> {
        if (exists) {
          throw new IllegalStateException("table " + table + " already exists (save mode errorifexists): use mode "
              + "append or overwrite to write into it");
        }
        data.writeTo(identifier).create();
      }
      case Ignore -> {
        if (!exists) {
          data.writeTo(identifier).create();
        }
      }
    }
  }

  /** Sets up (once per set of connection options) the session catalog that runs this connection's writes. */
  private static String registerCatalog(SparkSession session, Map<String, String> options) {
    Map<String, String> connection = new TreeMap<>();
    options.forEach((key, value) -> {
      if (!NOT_CONNECTION.contains(key.toLowerCase(Locale.ROOT))) {
        connection.put(key, value);
      }
    });
    String name = "thallus_" + HexFormat.of().toHexDigits(connection.toString().hashCode());
    String prefix = "spark.sql.catalog." + name;
    session.conf().set(prefix, ThallusCatalog.class.getName());
    connection.forEach((key, value) -> session.conf().set(prefix + "." + key, value));
    return name;
  }

  private static String quoted(TableName table) {
    StringBuilder text = new StringBuilder();
    for (String part : new String[] {table.catalogOrNull(), table.schemaOrNull(), table.table()}) {
      if (part != null) {
        text.append(text.isEmpty() ? "" : ".").append('`').append(part.replace("`", "``")).append('`');
      }
    }
    return text.toString();
  }

  /**
   * Whether the {@code table} option names a table (or view) of the server's database, ignoring case unless
   * {@code spark.sql.caseSensitive} (as DuckDB, which runs the write, finds it).
   */
  static boolean tableExists(ReadConf conf) {
    try (ThallusClient client = Connector.connect(conf, 0)) {
      return ServerSql.find(client, TableName.parse(conf.table().orElseThrow()),
          org.apache.spark.sql.internal.SQLConf.get().caseSensitiveAnalysis()) != null;
    }
  }

  /** A table a write is about to create: no batch writes of its own, so Spark asks the source's createRelation. */
  record MissingTable(ReadConf conf, StructType writeSchema) implements Table {
    @Override
    public String name() {
      return conf.table().orElseThrow();
    }

    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
      return writeSchema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.noneOf(TableCapability.class);
    }
  }
}
