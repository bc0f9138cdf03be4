package io.thallus.spark;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusIngest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Thallus server's database as a Spark catalog:
 *
 * <pre>{@code
 * spark.sql.catalog.thallus      = io.thallus.spark.ThallusCatalog
 * spark.sql.catalog.thallus.url  = thallus://server:47470       (and token, user/password, tls, partitions, ...)
 * }</pre>
 *
 * Namespaces are the schemas of the server's database ({@code thallus.main.lineitem}; an attached database's as
 * {@code thallus.db.schema.t}); its tables and views are the catalog's tables, readable with every pushdown of the
 * {@code thallus} format and its tables writable ({@code INSERT INTO}, {@code df.writeTo(...)}, CREATE/REPLACE
 * TABLE ... AS SELECT, DROP TABLE), each write atomic at job level. The namespace {@link #FILES} lists the datasets
 * under the server's data root, a table per file named by its path ({@code thallus.files.`tpch/lineitem.parquet`});
 * a directory of Parquet files reads the same way by its path. The namespace {@code shards} lists the sharded
 * datasets the servers of {@code url} declare (docs/sharding.md), each read as one table across them
 * ({@code thallus.shards.lineitem}).
 */
public final class ThallusCatalog implements StagingTableCatalog, SupportsNamespaces {
  /** The namespace of the data root's files. */
  public static final String FILES = "files";
  /** Schemas DuckDB keeps for itself: not listed. */
  private static final List<String> HIDDEN_SCHEMAS = List.of("information_schema", "pg_catalog");

  private String name;
  private ReadConf conf;

  public ThallusCatalog() {}

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    this.conf = ReadConf.from(options.asCaseSensitiveMap(), false);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String[] defaultNamespace() {
    return new String[] {"main"};
  }

  private ThallusClient connect() {
    return Connector.connect(conf, 0);
  }

  // ---- namespaces

  @Override
  public String[][] listNamespaces() {
    List<String[]> namespaces = new ArrayList<>();
    try (ThallusClient client = connect()) {
      for (List<String> row : ServerSql.rows(client, "SELECT schema_name FROM duckdb_schemas() WHERE database_name ="
          + " current_database() ORDER BY schema_name")) {
        if (!HIDDEN_SCHEMAS.contains(row.get(0))) {
          namespaces.add(new String[] {row.get(0)});
        }
      }
      if (dataRoot(client) != null) {
        namespaces.add(new String[] {FILES});
      }
    }
    if (!ShardedReads.names(conf).isEmpty()) {
      namespaces.add(new String[] {ShardedReads.NAMESPACE});
    }
    return namespaces.toArray(String[][]::new);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return new String[0][];
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    if (isFiles(namespace) || ShardedReads.isShardNamespace(namespace)) {
      return true;
    }
    if (namespace.length < 1 || namespace.length > 2 || HIDDEN_SCHEMAS.contains(namespace[namespace.length - 1])) {
      return false;
    }
    try (ThallusClient client = connect()) {
      return !ServerSql.rows(client, "SELECT 1 FROM duckdb_schemas() WHERE " + schemaCondition(namespace))
          .isEmpty();
    }
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return Map.of();
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata)
      throws NamespaceAlreadyExistsException {
    if (namespaceExists(namespace)) {
      throw new NamespaceAlreadyExistsException(namespace);
    }
    checkSchemaNamespace(namespace);
    try (ThallusClient client = connect()) {
      ServerSql.execute(client, "CREATE SCHEMA " + schemaSql(namespace), false);
    }
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes) {
    throw new UnsupportedOperationException("DuckDB schemas have no properties to alter");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    checkSchemaNamespace(namespace);
    try (ThallusClient client = connect()) {
      ServerSql.execute(client, "DROP SCHEMA " + schemaSql(namespace) + (cascade ? " CASCADE" : ""), false);
    }
    return true;
  }

  // ---- tables

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    List<Identifier> tables = new ArrayList<>();
    if (ShardedReads.isShardNamespace(namespace)) {
      for (String sharded : ShardedReads.names(conf)) {
        tables.add(Identifier.of(namespace, sharded));
      }
      return tables.toArray(Identifier[]::new);
    }
    try (ThallusClient client = connect()) {
      if (isFiles(namespace)) {
        for (String path : files(client)) {
          tables.add(Identifier.of(namespace, path));
        }
      } else {
        String where = " WHERE " + schemaCondition(namespace) + " AND NOT internal";
        // A write's staging tables are not the catalog's.
        String tablesOnly = " AND NOT starts_with(table_name, " + Sql.string(TableName.STAGING_PREFIX) + ")";
        for (List<String> row : ServerSql.rows(client, "SELECT table_name FROM duckdb_tables()" + where + tablesOnly
            + " UNION ALL SELECT view_name FROM duckdb_views()" + where + " ORDER BY 1")) {
          tables.add(Identifier.of(namespace, row.get(0)));
        }
      }
    }
    return tables.toArray(Identifier[]::new);
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    if (ShardedReads.isShardNamespace(ident.namespace())) {
      try {
        return ShardedReads.table(conf, ident.name(), name + "." + ShardedReads.NAMESPACE + "." + ident.name());
      } catch (IllegalArgumentException e) {
        throw new NoSuchTableException(ident); // not a name a server could declare
      } catch (ThallusException e) {
        if (e.code() == io.thallus.StatusCode.NOT_FOUND) {
          throw new NoSuchTableException(ident); // no server declares it
        }
        throw e; // a server down, two servers disagreeing: said as it is, never read as "no such table"
      }
    }
    if (isFiles(ident.namespace())) {
      ReadConf read = conf.withDataset(ident.name());
      try (ThallusClient client = connect()) {
        return new ThallusTable(read, TypeMapping.columns(client.schema(Connector.request(read, read.baseSql()))
            .getFields()), null, name + "." + FILES + ".`" + ident.name() + "`");
      } catch (ThallusException e) {
        if (e.code() == io.thallus.StatusCode.NOT_FOUND) {
          throw new NoSuchTableException(ident); // no such file under the data root
        }
        // A path outside the data root, a file DuckDB cannot read, a server short of resources: said as it is.
        throw ThallusException.of(e.code(), "cannot read " + name + "." + FILES + ".`" + ident.name() + "`: "
            + e.getMessage(), e);
      }
    }
    ServerSql.Relation relation = find(tableName(ident));
    if (relation == null) {
      throw new NoSuchTableException(ident);
    }
    ReadConf read = conf.withTable(relation.name());
    try (ThallusClient client = connect()) {
      var columns = TypeMapping.columns(client.schema(Connector.request(read, read.baseSql())).getFields());
      return new ThallusTable(read, columns, relation.kind().equals("table") ? relation.name() : null,
          name + "." + ident);
    }
  }

  @Override
  public Table createTable(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    TableName table = writableName(ident, partitions);
    if (find(table) != null) {
      throw new TableAlreadyExistsException(ident);
    }
    Schema schema = ArrowUtils.toArrowSchema(structType(columns), SQLConf.get().sessionLocalTimeZone(), true, false);
    try (ThallusClient client = connect();
         ThallusIngest ingest = client.ingest(IngestRequest.of(table.sql(), IngestMode.CREATE), schema)) {
      ingest.finish();
    }
    try {
      return loadTable(ident);
    } catch (NoSuchTableException e) {
      throw new IllegalStateException("table " + table + " was created and is gone again", e);
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public Table createTable(Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    return createTable(ident, columns(schema),
        partitions, properties);
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    throw new UnsupportedOperationException("ALTER TABLE through the thallus catalog is not supported: run it on "
        + "the server (thallus sql, JDBC)");
  }

  @Override
  public boolean dropTable(Identifier ident) {
    if (isFiles(ident.namespace())) {
      throw new UnsupportedOperationException("the files under the data root are read only");
    }
    checkNotSharded(ident.namespace());
    ServerSql.Relation relation = find(tableName(ident));
    if (relation == null) {
      return false;
    }
    try (ThallusClient client = connect()) {
      ServerSql.execute(client, "DROP " + (relation.kind().equals("table") ? "TABLE " : "VIEW ")
          + relation.name().sql(), false);
    }
    return true;
  }

  @Override
  public void renameTable(Identifier from, Identifier to) throws NoSuchTableException, TableAlreadyExistsException {
    ServerSql.Relation source = find(tableName(from));
    if (source == null || !source.kind().equals("table")) {
      throw new NoSuchTableException(from);
    }
    if (find(tableName(to)) != null) {
      throw new TableAlreadyExistsException(to);
    }
    if (!sameNamespace(from.namespace(), to.namespace())) {
      throw new UnsupportedOperationException("DuckDB renames a table within its schema only");
    }
    try (ThallusClient client = connect()) {
      ServerSql.execute(client, "ALTER TABLE " + source.name().sql() + " RENAME TO " + Sql.identifier(to.name()),
          false);
    }
  }

  // ---- staged CREATE / REPLACE ... AS SELECT: created and filled in one transaction at commit

  @Override
  public StagedTable stageCreate(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException {
    TableName table = writableName(ident, partitions);
    if (find(table) != null) {
      throw new TableAlreadyExistsException(ident);
    }
    return new StagedThallusTable(conf, table, structType(columns), WriteMode.CREATE);
  }

  @Override
  public StagedTable stageReplace(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties) throws NoSuchTableException {
    ServerSql.Relation relation = find(writableName(ident, partitions));
    if (relation == null || !relation.kind().equals("table")) {
      throw new NoSuchTableException(ident);
    }
    return new StagedThallusTable(conf, relation.name(), structType(columns), WriteMode.CREATE_OR_REPLACE);
  }

  @Override
  public StagedTable stageCreateOrReplace(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties) {
    TableName table = writableName(ident, partitions);
    ServerSql.Relation existing = find(table);
    return new StagedThallusTable(conf, existing == null ? table : existing.name(), structType(columns),
        WriteMode.CREATE_OR_REPLACE);
  }

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreate(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException {
    return stageCreate(ident, columns(schema),
        partitions, properties);
  }

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageReplace(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws NoSuchTableException {
    return stageReplace(ident, columns(schema),
        partitions, properties);
  }

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreateOrReplace(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) {
    return stageCreateOrReplace(ident,
        columns(schema), partitions, properties);
  }

  // ---- helpers

  private static boolean isFiles(String[] namespace) {
    return namespace.length == 1 && (caseSensitive() ? namespace[0].equals(FILES)
        : namespace[0].equalsIgnoreCase(FILES));
  }

  /**
   * Spark's {@code spark.sql.caseSensitive} (false by default) of the session at work: names of schemas and tables
   * are matched ignoring case unless it is true, as Spark's own catalogs match them.
   */
  private static boolean caseSensitive() {
    return SQLConf.get().caseSensitiveAnalysis();
  }

  private static boolean sameNamespace(String[] a, String[] b) {
    if (a.length != b.length) {
      return false;
    }
    for (int i = 0; i < a.length; i++) {
      if (caseSensitive() ? !a[i].equals(b[i]) : !a[i].equalsIgnoreCase(b[i])) {
        return false;
      }
    }
    return true;
  }

  private static void checkNotSharded(String[] namespace) {
    if (ShardedReads.isShardNamespace(namespace)) {
      throw new UnsupportedOperationException("the sharded datasets are what the servers declare (docs/sharding.md)"
          + " and read only");
    }
  }

  private static void checkSchemaNamespace(String[] namespace) {
    checkNotSharded(namespace);
    if (namespace.length < 1 || namespace.length > 2 || isFiles(namespace)) {
      throw new IllegalArgumentException("a namespace of the thallus catalog is a schema, or a database and a "
          + "schema; got " + Arrays.toString(namespace));
    }
  }

  /** The condition on duckdb_schemas()/duckdb_tables() rows of a namespace's schema. */
  private static String schemaCondition(String[] namespace) {
    return tableName(Identifier.of(namespace, "")).schemaCondition(caseSensitive());
  }

  private static String schemaSql(String[] namespace) {
    return namespace.length == 2 ? Sql.identifier(namespace[0]) + "." + Sql.identifier(namespace[1])
        : Sql.identifier(namespace[0]);
  }

  /** A table of the server's database named by a Spark identifier (no namespace: DuckDB's current schema). */
  static TableName tableName(Identifier ident) {
    String[] namespace = ident.namespace();
    if (namespace.length > 2) {
      throw new IllegalArgumentException("a table of the thallus catalog is [database.]schema.table; got "
          + String.join(".", namespace) + "." + ident.name());
    }
    String[] parts = Arrays.copyOf(namespace, namespace.length + 1);
    parts[namespace.length] = ident.name();
    return TableName.of(parts);
  }

  private static TableName writableName(Identifier ident, Transform[] partitions) {
    checkNotSharded(ident.namespace());
    if (isFiles(ident.namespace())) {
      throw new UnsupportedOperationException("the files under the data root are read only; write into a schema "
          + "of the server's database, e.g. " + "main." + ident.name().replaceAll("\\W", "_"));
    }
    if (partitions != null && partitions.length > 0) {
      throw new UnsupportedOperationException("DuckDB tables have no partitions: create the table without "
          + "PARTITIONED BY");
    }
    return tableName(ident);
  }

  /** The table or view {@code table} names on the server, matched as {@link #caseSensitive} says, or null. */
  private ServerSql.Relation find(TableName table) {
    try (ThallusClient client = connect()) {
      return ServerSql.find(client, table, caseSensitive());
    }
  }

  private static Column[] columns(StructType schema) {
    List<Column> columns = new ArrayList<>();
    for (StructField field : schema.fields()) {
      columns.add(Column.create(field.name(), field.dataType(), field.nullable()));
    }
    return columns.toArray(Column[]::new);
  }

  static StructType structType(Column[] columns) {
    List<StructField> fields = new ArrayList<>();
    for (Column column : columns) {
      fields.add(DataTypes.createStructField(column.name(), column.dataType(), column.nullable()));
    }
    return new StructType(fields.toArray(StructField[]::new));
  }

  /**
   * The server's data root: DuckDB's one allowed directory that is not its spill directory (DuckDB lists both, in
   * path order), or null for a server without one.
   */
  private static String dataRoot(ThallusClient client) {
    List<List<String>> rows = ServerSql.rows(client, "SELECT d FROM (SELECT unnest(current_setting("
        + "'allowed_directories')::VARCHAR[]) AS d) WHERE rtrim(d, '/') <> rtrim(current_setting('temp_directory'), "
        + "'/') ORDER BY d LIMIT 1");
    if (rows.isEmpty() || rows.get(0).get(0) == null || rows.get(0).get(0).isEmpty()) {
      return null;
    }
    String root = rows.get(0).get(0);
    return root.endsWith("/") ? root : root + "/";
  }

  /** The datasets under the data root: Parquet, CSV and JSON files, by path relative to the root. */
  private static List<String> files(ThallusClient client) {
    String root = dataRoot(client);
    if (root == null) {
      return List.of();
    }
    Map<String, Boolean> paths = new LinkedHashMap<>();
    for (String pattern : List.of("**/*.parquet", "**/*.csv", "**/*.csv.gz", "**/*.tsv", "**/*.json",
        "**/*.ndjson", "**/*.jsonl")) {
      for (List<String> row : ServerSql.rows(client, "SELECT file FROM glob(" + Sql.string(root + pattern) + ")")) {
        String file = row.get(0);
        if (file.startsWith(root)) {
          paths.put(file.substring(root.length()), true);
        }
      }
    }
    List<String> sorted = new ArrayList<>(paths.keySet());
    sorted.sort(null);
    return sorted;
  }
}
