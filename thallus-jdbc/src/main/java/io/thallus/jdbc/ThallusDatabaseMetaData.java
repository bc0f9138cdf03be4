package io.thallus.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.RowIdLifetime;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * What tools ask on connect. Catalog questions (tables, columns, schemas, catalogs) are answered by DuckDB's
 * {@code information_schema} on the server, run through this driver with the connection's dataset bound, so a
 * DuckDB file's tables and the {@code dataset} view are listed. Keys, indexes, procedures and privileges come back
 * empty with JDBC's columns: DuckDB has none that a reader needs.
 */
final class ThallusDatabaseMetaData implements DatabaseMetaData {
  /** DuckDB's type name to the {@link Types} code this driver reports for a result column of that type. */
  private static final String SQL_TYPE_OF_DUCKDB = """
      CASE
        WHEN data_type LIKE '%[]' OR regexp_matches(data_type, '\\[[0-9]+\\]$') THEN 2003
        WHEN data_type LIKE 'STRUCT%' THEN 2002
        WHEN data_type LIKE 'MAP%' THEN 1111
        WHEN data_type LIKE 'DECIMAL%' OR data_type = 'HUGEINT' OR data_type = 'UHUGEINT' THEN 3
        WHEN data_type = 'TIMESTAMP WITH TIME ZONE' THEN 2014
        WHEN data_type LIKE 'TIMESTAMP%' THEN 93
        ELSE CASE data_type
          WHEN 'BOOLEAN' THEN 16 WHEN 'TINYINT' THEN -6 WHEN 'SMALLINT' THEN 5 WHEN 'INTEGER' THEN 4
          WHEN 'BIGINT' THEN -5 WHEN 'UTINYINT' THEN 5 WHEN 'USMALLINT' THEN 4 WHEN 'UINTEGER' THEN -5
          WHEN 'UBIGINT' THEN 2 WHEN 'FLOAT' THEN 7 WHEN 'DOUBLE' THEN 8 WHEN 'VARCHAR' THEN 12
          WHEN 'BLOB' THEN -3 WHEN 'DATE' THEN 91 WHEN 'TIME' THEN 92 WHEN 'INTERVAL' THEN 12
          WHEN 'UUID' THEN 12 WHEN 'NULL' THEN 0
          ELSE CASE WHEN data_type LIKE 'ENUM%' THEN 12 ELSE 1111 END END
      END""";

  private final ThallusConnection connection;

  ThallusDatabaseMetaData(ThallusConnection connection) {
    this.connection = connection;
  }

  /** Runs a catalog query on the server with its {@code ?}s bound. */
  private ResultSet query(String sql, Object... parameters) throws SQLException {
    PreparedStatement statement = connection.prepareStatement(sql);
    try {
      for (int i = 0; i < parameters.length; i++) {
        statement.setObject(i + 1, parameters[i]);
      }
      ResultSet result = statement.executeQuery();
      statement.closeOnCompletion();
      return result;
    } catch (SQLException | RuntimeException e) {
      statement.close();
      throw e;
    }
  }

  /** A JDBC pattern; null matches everything. */
  private static String pattern(String pattern) {
    return pattern == null ? "%" : pattern;
  }

  private static ResultSet empty(String... columns) {
    return MetaResults.of(List.of(columns), new Object[0][]);
  }

  @Override
  public ResultSet getTables(String catalog, String schemaPattern, String tablePattern, String[] types)
      throws SQLException {
    String typeFilter = "";
    if (types != null) {
      typeFilter = Arrays.stream(types)
          .map(t -> "'" + t.toUpperCase(Locale.ROOT).replace("'", "''") + "'")
          .collect(Collectors.joining(", ", " AND TABLE_TYPE IN (", ")"));
      if (types.length == 0) {
        typeFilter = " AND false";
      }
    }
    return query("""
        SELECT * FROM (
          SELECT table_catalog AS TABLE_CAT, table_schema AS TABLE_SCHEM, table_name AS TABLE_NAME,
            CASE WHEN table_type = 'BASE TABLE' THEN 'TABLE' ELSE table_type END AS TABLE_TYPE,
            NULL::VARCHAR AS REMARKS, NULL::VARCHAR AS TYPE_CAT, NULL::VARCHAR AS TYPE_SCHEM,
            NULL::VARCHAR AS TYPE_NAME, NULL::VARCHAR AS SELF_REFERENCING_COL_NAME, NULL::VARCHAR AS REF_GENERATION
          FROM information_schema.tables
          WHERE (?::VARCHAR IS NULL OR table_catalog = ?::VARCHAR)
            AND table_schema LIKE ? ESCAPE '\\' AND table_name LIKE ? ESCAPE '\\'
        ) t WHERE true""" + typeFilter + " ORDER BY TABLE_TYPE, TABLE_CAT, TABLE_SCHEM, TABLE_NAME",
        catalog, catalog, pattern(schemaPattern), pattern(tablePattern));
  }

  @Override
  public ResultSet getColumns(String catalog, String schemaPattern, String tablePattern, String columnPattern)
      throws SQLException {
    return query("""
        SELECT table_catalog AS TABLE_CAT, table_schema AS TABLE_SCHEM, table_name AS TABLE_NAME,
          column_name AS COLUMN_NAME, (%s)::INTEGER AS DATA_TYPE, data_type AS TYPE_NAME,
          COALESCE(numeric_precision, character_maximum_length,
            CASE WHEN data_type = 'DATE' THEN 10 WHEN data_type = 'TIME' THEN 15
                 WHEN data_type LIKE 'TIMESTAMP%%' THEN 29 ELSE NULL END)::INTEGER AS COLUMN_SIZE,
          NULL::INTEGER AS BUFFER_LENGTH, numeric_scale::INTEGER AS DECIMAL_DIGITS,
          CASE WHEN numeric_precision IS NULL THEN NULL ELSE numeric_precision_radix END::INTEGER AS NUM_PREC_RADIX,
          CASE WHEN is_nullable = 'YES' THEN 1 ELSE 0 END::INTEGER AS NULLABLE, NULL::VARCHAR AS REMARKS,
          column_default AS COLUMN_DEF, NULL::INTEGER AS SQL_DATA_TYPE, NULL::INTEGER AS SQL_DATETIME_SUB,
          character_octet_length::INTEGER AS CHAR_OCTET_LENGTH, ordinal_position::INTEGER AS ORDINAL_POSITION,
          is_nullable AS IS_NULLABLE, NULL::VARCHAR AS SCOPE_CATALOG, NULL::VARCHAR AS SCOPE_SCHEMA,
          NULL::VARCHAR AS SCOPE_TABLE, NULL::SMALLINT AS SOURCE_DATA_TYPE, 'NO' AS IS_AUTOINCREMENT,
          'NO' AS IS_GENERATEDCOLUMN
        FROM information_schema.columns
        WHERE (?::VARCHAR IS NULL OR table_catalog = ?::VARCHAR)
          AND table_schema LIKE ? ESCAPE '\\' AND table_name LIKE ? ESCAPE '\\' AND column_name LIKE ? ESCAPE '\\'
        ORDER BY TABLE_CAT, TABLE_SCHEM, TABLE_NAME, ORDINAL_POSITION""".formatted(SQL_TYPE_OF_DUCKDB),
        catalog, catalog, pattern(schemaPattern), pattern(tablePattern), pattern(columnPattern));
  }

  @Override
  public ResultSet getSchemas() throws SQLException {
    return getSchemas(null, null);
  }

  @Override
  public ResultSet getSchemas(String catalog, String schemaPattern) throws SQLException {
    return query("""
        SELECT schema_name AS TABLE_SCHEM, catalog_name AS TABLE_CATALOG FROM information_schema.schemata
        WHERE (?::VARCHAR IS NULL OR catalog_name = ?::VARCHAR) AND schema_name LIKE ? ESCAPE '\\'
        ORDER BY TABLE_CATALOG, TABLE_SCHEM""", catalog, catalog, pattern(schemaPattern));
  }

  @Override
  public ResultSet getCatalogs() throws SQLException {
    return query("SELECT DISTINCT catalog_name AS TABLE_CAT FROM information_schema.schemata ORDER BY TABLE_CAT");
  }

  @Override
  public ResultSet getTableTypes() {
    return MetaResults.of(List.of("TABLE_TYPE"),
        new Object[][] {{"LOCAL TEMPORARY"}, {"TABLE"}, {"VIEW"}});
  }

  @Override
  public ResultSet getTypeInfo() {
    Object[][] types = {
        typeRow("BOOLEAN", Types.BOOLEAN, 1, null, false),
        typeRow("TINYINT", Types.TINYINT, 3, null, false),
        typeRow("SMALLINT", Types.SMALLINT, 5, null, false),
        typeRow("INTEGER", Types.INTEGER, 10, null, false),
        typeRow("BIGINT", Types.BIGINT, 19, null, false),
        typeRow("UTINYINT", Types.SMALLINT, 3, null, true),
        typeRow("USMALLINT", Types.INTEGER, 5, null, true),
        typeRow("UINTEGER", Types.BIGINT, 10, null, true),
        typeRow("UBIGINT", Types.NUMERIC, 20, null, true),
        typeRow("HUGEINT", Types.DECIMAL, 38, null, false),
        typeRow("FLOAT", Types.REAL, 24, null, false),
        typeRow("DOUBLE", Types.DOUBLE, 53, null, false),
        typeRow("DECIMAL", Types.DECIMAL, 38, "precision,scale", false),
        typeRow("VARCHAR", Types.VARCHAR, Integer.MAX_VALUE, null, false),
        typeRow("BLOB", Types.VARBINARY, Integer.MAX_VALUE, null, false),
        typeRow("DATE", Types.DATE, 10, null, false),
        typeRow("TIME", Types.TIME, 15, null, false),
        typeRow("TIMESTAMP", Types.TIMESTAMP, 29, null, false),
        typeRow("TIMESTAMP WITH TIME ZONE", Types.TIMESTAMP_WITH_TIMEZONE, 35, null, false),
        typeRow("INTERVAL", Types.VARCHAR, 40, null, false),
        typeRow("UUID", Types.VARCHAR, 36, null, false),
        typeRow("LIST", Types.ARRAY, 0, null, false),
        typeRow("STRUCT", Types.STRUCT, 0, null, false),
        typeRow("MAP", Types.OTHER, 0, null, false)};
    return MetaResults.of(List.of("TYPE_NAME", "DATA_TYPE", "PRECISION", "LITERAL_PREFIX", "LITERAL_SUFFIX",
        "CREATE_PARAMS", "NULLABLE", "CASE_SENSITIVE", "SEARCHABLE", "UNSIGNED_ATTRIBUTE", "FIXED_PREC_SCALE",
        "AUTO_INCREMENT", "LOCAL_TYPE_NAME", "MINIMUM_SCALE", "MAXIMUM_SCALE", "SQL_DATA_TYPE", "SQL_DATETIME_SUB",
        "NUM_PREC_RADIX"), types);
  }

  private static Object[] typeRow(String name, int sqlType, int precision, String createParams, boolean unsigned) {
    boolean text = sqlType == Types.VARCHAR;
    boolean quoted = text || sqlType == Types.DATE || sqlType == Types.TIME || sqlType == Types.TIMESTAMP
        || sqlType == Types.TIMESTAMP_WITH_TIMEZONE || sqlType == Types.VARBINARY;
    return new Object[] {name, sqlType, precision, quoted ? "'" : "", quoted ? "'" : "", createParams == null ? ""
        : createParams, (short) typeNullable, text, (short) typeSearchable, unsigned, false, false, name,
        (short) 0, (short) (sqlType == Types.DECIMAL ? 38 : 0), sqlType, 0, 10};
  }

  @Override
  public ResultSet getPrimaryKeys(String catalog, String schema, String table) {
    return empty("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME");
  }

  private static final String[] KEY_COLUMNS = {"PKTABLE_CAT", "PKTABLE_SCHEM", "PKTABLE_NAME", "PKCOLUMN_NAME",
      "FKTABLE_CAT", "FKTABLE_SCHEM", "FKTABLE_NAME", "FKCOLUMN_NAME", "KEY_SEQ", "UPDATE_RULE", "DELETE_RULE",
      "FK_NAME", "PK_NAME", "DEFERRABILITY"};

  @Override
  public ResultSet getImportedKeys(String catalog, String schema, String table) {
    return empty(KEY_COLUMNS);
  }

  @Override
  public ResultSet getExportedKeys(String catalog, String schema, String table) {
    return empty(KEY_COLUMNS);
  }

  @Override
  public ResultSet getCrossReference(String parentCatalog, String parentSchema, String parentTable,
      String foreignCatalog, String foreignSchema, String foreignTable) {
    return empty(KEY_COLUMNS);
  }

  @Override
  public ResultSet getIndexInfo(String catalog, String schema, String table, boolean unique, boolean approximate) {
    return empty("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "NON_UNIQUE", "INDEX_QUALIFIER", "INDEX_NAME", "TYPE",
        "ORDINAL_POSITION", "COLUMN_NAME", "ASC_OR_DESC", "CARDINALITY", "PAGES", "FILTER_CONDITION");
  }

  @Override
  public ResultSet getProcedures(String catalog, String schemaPattern, String procedurePattern) {
    return empty("PROCEDURE_CAT", "PROCEDURE_SCHEM", "PROCEDURE_NAME", "reserved1", "reserved2", "reserved3",
        "REMARKS", "PROCEDURE_TYPE", "SPECIFIC_NAME");
  }

  @Override
  public ResultSet getProcedureColumns(String catalog, String schemaPattern, String procedurePattern,
      String columnPattern) {
    return empty("PROCEDURE_CAT", "PROCEDURE_SCHEM", "PROCEDURE_NAME", "COLUMN_NAME", "COLUMN_TYPE", "DATA_TYPE",
        "TYPE_NAME", "PRECISION", "LENGTH", "SCALE", "RADIX", "NULLABLE", "REMARKS", "COLUMN_DEF", "SQL_DATA_TYPE",
        "SQL_DATETIME_SUB", "CHAR_OCTET_LENGTH", "ORDINAL_POSITION", "IS_NULLABLE", "SPECIFIC_NAME");
  }

  @Override
  public ResultSet getFunctions(String catalog, String schemaPattern, String functionPattern) {
    return empty("FUNCTION_CAT", "FUNCTION_SCHEM", "FUNCTION_NAME", "REMARKS", "FUNCTION_TYPE", "SPECIFIC_NAME");
  }

  @Override
  public ResultSet getFunctionColumns(String catalog, String schemaPattern, String functionPattern,
      String columnPattern) {
    return empty("FUNCTION_CAT", "FUNCTION_SCHEM", "FUNCTION_NAME", "COLUMN_NAME", "COLUMN_TYPE", "DATA_TYPE",
        "TYPE_NAME", "PRECISION", "LENGTH", "SCALE", "RADIX", "NULLABLE", "REMARKS", "CHAR_OCTET_LENGTH",
        "ORDINAL_POSITION", "IS_NULLABLE", "SPECIFIC_NAME");
  }

  @Override
  public ResultSet getColumnPrivileges(String catalog, String schema, String table, String columnPattern) {
    return empty("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "GRANTOR", "GRANTEE", "PRIVILEGE",
        "IS_GRANTABLE");
  }

  @Override
  public ResultSet getTablePrivileges(String catalog, String schemaPattern, String tablePattern) {
    return empty("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "GRANTOR", "GRANTEE", "PRIVILEGE", "IS_GRANTABLE");
  }

  @Override
  public ResultSet getBestRowIdentifier(String catalog, String schema, String table, int scope, boolean nullable) {
    return empty("SCOPE", "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "BUFFER_LENGTH", "DECIMAL_DIGITS",
        "PSEUDO_COLUMN");
  }

  @Override
  public ResultSet getVersionColumns(String catalog, String schema, String table) {
    return empty("SCOPE", "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "BUFFER_LENGTH", "DECIMAL_DIGITS",
        "PSEUDO_COLUMN");
  }

  @Override
  public ResultSet getUDTs(String catalog, String schemaPattern, String typePattern, int[] types) {
    return empty("TYPE_CAT", "TYPE_SCHEM", "TYPE_NAME", "CLASS_NAME", "DATA_TYPE", "REMARKS", "BASE_TYPE");
  }

  @Override
  public ResultSet getSuperTypes(String catalog, String schemaPattern, String typePattern) {
    return empty("TYPE_CAT", "TYPE_SCHEM", "TYPE_NAME", "SUPERTYPE_CAT", "SUPERTYPE_SCHEM", "SUPERTYPE_NAME");
  }

  @Override
  public ResultSet getSuperTables(String catalog, String schemaPattern, String tablePattern) {
    return empty("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "SUPERTABLE_NAME");
  }

  @Override
  public ResultSet getAttributes(String catalog, String schemaPattern, String typePattern, String attributePattern) {
    return empty("TYPE_CAT", "TYPE_SCHEM", "TYPE_NAME", "ATTR_NAME", "DATA_TYPE", "ATTR_TYPE_NAME", "ATTR_SIZE",
        "DECIMAL_DIGITS", "NUM_PREC_RADIX", "NULLABLE", "REMARKS", "ATTR_DEF", "SQL_DATA_TYPE", "SQL_DATETIME_SUB",
        "CHAR_OCTET_LENGTH", "ORDINAL_POSITION", "IS_NULLABLE", "SCOPE_CATALOG", "SCOPE_SCHEMA", "SCOPE_TABLE",
        "SOURCE_DATA_TYPE");
  }

  @Override
  public ResultSet getClientInfoProperties() {
    return empty("NAME", "MAX_LEN", "DEFAULT_VALUE", "DESCRIPTION");
  }

  @Override
  public ResultSet getPseudoColumns(String catalog, String schemaPattern, String tablePattern,
      String columnPattern) {
    return empty("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "DATA_TYPE", "COLUMN_SIZE",
        "DECIMAL_DIGITS", "NUM_PREC_RADIX", "COLUMN_USAGE", "REMARKS", "CHAR_OCTET_LENGTH", "IS_NULLABLE");
  }

  private String serverVersion;

  /** DuckDB's version on the server, asked once. */
  @Override
  public String getDatabaseProductVersion() throws SQLException {
    if (serverVersion == null) {
      try (ResultSet result = query("SELECT library_version FROM pragma_version()")) {
        serverVersion = result.next() ? result.getString(1) : "";
      }
    }
    return serverVersion;
  }

  private int versionPart(int index) throws SQLException {
    String[] parts = getDatabaseProductVersion().replaceFirst("^v", "").split("[.-]");
    try {
      return parts.length > index ? Integer.parseInt(parts[index]) : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  @Override
  public int getDatabaseMajorVersion() throws SQLException {
    return versionPart(0);
  }

  @Override
  public int getDatabaseMinorVersion() throws SQLException {
    return versionPart(1);
  }

  @Override
  public String getDatabaseProductName() {
    return "DuckDB";
  }

  @Override
  public String getDriverName() {
    return ThallusDriver.NAME;
  }

  @Override
  public String getDriverVersion() {
    return ThallusDriver.VERSION;
  }

  @Override
  public int getDriverMajorVersion() {
    return ThallusDriver.MAJOR_VERSION;
  }

  @Override
  public int getDriverMinorVersion() {
    return ThallusDriver.MINOR_VERSION;
  }

  @Override
  public int getJDBCMajorVersion() {
    return 4;
  }

  @Override
  public int getJDBCMinorVersion() {
    return 3;
  }

  @Override
  public String getURL() {
    return JdbcUrl.PREFIX + "//" + connection.url().host() + ":" + connection.url().port()
        + connection.dataset().map(d -> "/" + d).orElse("");
  }

  @Override
  /** The URL's user, or else DuckDB's name for the session's user (what {@code current_user} says). */
  public String getUserName() throws SQLException {
    String user = connection.url().string(ThallusProperty.USER);
    if (!user.isEmpty()) {
      return user;
    }
    try (java.sql.Statement statement = connection.createStatement();
         ResultSet name = statement.executeQuery("SELECT current_user")) {
      return name.next() ? name.getString(1) : null;
    }
  }

  @Override
  public Connection getConnection() {
    return connection;
  }

  @Override
  public String getIdentifierQuoteString() {
    return "\"";
  }

  @Override
  public String getCatalogSeparator() {
    return ".";
  }

  @Override
  public String getCatalogTerm() {
    return "catalog";
  }

  @Override
  public String getSchemaTerm() {
    return "schema";
  }

  @Override
  public String getProcedureTerm() {
    return "procedure";
  }

  @Override
  public String getSearchStringEscape() {
    return "\\";
  }

  @Override
  public String getExtraNameCharacters() {
    return "";
  }

  @Override
  public String getSQLKeywords() {
    return "ANTI,ASOF,ATTACH,COLUMNS,DESCRIBE,DETACH,EXCLUDE,GLOB,ILIKE,PIVOT,POSITIONAL,QUALIFY,REPLACE,SAMPLE,"
        + "SEMI,SHOW,SUMMARIZE,UNPIVOT";
  }

  @Override
  public String getNumericFunctions() {
    return "ABS,ACOS,ASIN,ATAN,ATAN2,CEILING,COS,COT,DEGREES,EXP,FLOOR,LOG,LOG10,MOD,PI,POWER,RADIANS,RAND,ROUND,"
        + "SIGN,SIN,SQRT,TAN,TRUNCATE";
  }

  @Override
  public String getStringFunctions() {
    return "ASCII,CHAR,CONCAT,LCASE,LEFT,LENGTH,LOCATE,LTRIM,REPEAT,REPLACE,RIGHT,RTRIM,SUBSTRING,UCASE";
  }

  @Override
  public String getSystemFunctions() {
    return "IFNULL,USER";
  }

  @Override
  public String getTimeDateFunctions() {
    return "CURDATE,CURTIME,DAYNAME,DAYOFMONTH,DAYOFWEEK,DAYOFYEAR,HOUR,MINUTE,MONTH,MONTHNAME,NOW,QUARTER,SECOND,"
        + "WEEK,YEAR";
  }

  @Override
  public int getDefaultTransactionIsolation() {
    return Connection.TRANSACTION_REPEATABLE_READ;
  }

  @Override
  public int getResultSetHoldability() {
    return ResultSet.CLOSE_CURSORS_AT_COMMIT;
  }

  @Override
  public RowIdLifetime getRowIdLifetime() {
    return RowIdLifetime.ROWID_UNSUPPORTED;
  }

  @Override
  public int getSQLStateType() {
    return sqlStateSQL;
  }

  // No limit the driver knows of: JDBC's 0.

  @Override
  public int getMaxBinaryLiteralLength() {
    return 0;
  }

  @Override
  public int getMaxCatalogNameLength() {
    return 0;
  }

  @Override
  public int getMaxCharLiteralLength() {
    return 0;
  }

  @Override
  public int getMaxColumnNameLength() {
    return 0;
  }

  @Override
  public int getMaxColumnsInGroupBy() {
    return 0;
  }

  @Override
  public int getMaxColumnsInIndex() {
    return 0;
  }

  @Override
  public int getMaxColumnsInOrderBy() {
    return 0;
  }

  @Override
  public int getMaxColumnsInSelect() {
    return 0;
  }

  @Override
  public int getMaxColumnsInTable() {
    return 0;
  }

  @Override
  public int getMaxConnections() {
    return 0;
  }

  @Override
  public int getMaxCursorNameLength() {
    return 0;
  }

  @Override
  public int getMaxIndexLength() {
    return 0;
  }

  @Override
  public int getMaxProcedureNameLength() {
    return 0;
  }

  @Override
  public int getMaxRowSize() {
    return 0;
  }

  @Override
  public int getMaxSchemaNameLength() {
    return 0;
  }

  @Override
  public int getMaxStatementLength() {
    return 0;
  }

  @Override
  public int getMaxStatements() {
    return 0;
  }

  @Override
  public int getMaxTableNameLength() {
    return 0;
  }

  @Override
  public int getMaxTablesInSelect() {
    return 0;
  }

  @Override
  public int getMaxUserNameLength() {
    return 0;
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    return Errors.unwrap(this, type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return type.isInstance(this);
  }

  // The capability flags.

  @Override
  public boolean allProceduresAreCallable() {
    return false;
  }

  @Override
  public boolean allTablesAreSelectable() {
    return true;
  }

  @Override
  public boolean autoCommitFailureClosesAllResultSets() {
    return false;
  }

  @Override
  public boolean dataDefinitionCausesTransactionCommit() {
    return false;
  }

  @Override
  public boolean dataDefinitionIgnoredInTransactions() {
    return false;
  }

  @Override
  public boolean deletesAreDetected(int arg0) {
    return false;
  }

  @Override
  public boolean doesMaxRowSizeIncludeBlobs() {
    return true;
  }

  @Override
  public boolean generatedKeyAlwaysReturned() {
    return false;
  }

  @Override
  public boolean insertsAreDetected(int arg0) {
    return false;
  }

  @Override
  public boolean isCatalogAtStart() {
    return false;
  }

  @Override
  public boolean isReadOnly() {
    return false;
  }

  @Override
  public boolean locatorsUpdateCopy() {
    return false;
  }

  @Override
  public boolean nullPlusNonNullIsNull() {
    return true;
  }

  @Override
  public boolean nullsAreSortedAtEnd() {
    return true;
  }

  @Override
  public boolean nullsAreSortedAtStart() {
    return false;
  }

  @Override
  public boolean nullsAreSortedHigh() {
    return false;
  }

  @Override
  public boolean nullsAreSortedLow() {
    return false;
  }

  @Override
  public boolean othersDeletesAreVisible(int arg0) {
    return false;
  }

  @Override
  public boolean othersInsertsAreVisible(int arg0) {
    return false;
  }

  @Override
  public boolean othersUpdatesAreVisible(int arg0) {
    return false;
  }

  @Override
  public boolean ownDeletesAreVisible(int arg0) {
    return false;
  }

  @Override
  public boolean ownInsertsAreVisible(int arg0) {
    return false;
  }

  @Override
  public boolean ownUpdatesAreVisible(int arg0) {
    return false;
  }

  @Override
  public boolean storesLowerCaseIdentifiers() {
    return false;
  }

  @Override
  public boolean storesLowerCaseQuotedIdentifiers() {
    return false;
  }

  @Override
  public boolean storesMixedCaseIdentifiers() {
    return true;
  }

  @Override
  public boolean storesMixedCaseQuotedIdentifiers() {
    return true;
  }

  @Override
  public boolean storesUpperCaseIdentifiers() {
    return false;
  }

  @Override
  public boolean storesUpperCaseQuotedIdentifiers() {
    return false;
  }

  @Override
  public boolean supportsANSI92EntryLevelSQL() {
    return true;
  }

  @Override
  public boolean supportsANSI92FullSQL() {
    return false;
  }

  @Override
  public boolean supportsANSI92IntermediateSQL() {
    return false;
  }

  @Override
  public boolean supportsAlterTableWithAddColumn() {
    return true;
  }

  @Override
  public boolean supportsAlterTableWithDropColumn() {
    return true;
  }

  @Override
  public boolean supportsBatchUpdates() {
    return true;
  }

  @Override
  public boolean supportsCatalogsInDataManipulation() {
    return true;
  }

  @Override
  public boolean supportsCatalogsInIndexDefinitions() {
    return false;
  }

  @Override
  public boolean supportsCatalogsInPrivilegeDefinitions() {
    return false;
  }

  @Override
  public boolean supportsCatalogsInProcedureCalls() {
    return false;
  }

  @Override
  public boolean supportsCatalogsInTableDefinitions() {
    return true;
  }

  @Override
  public boolean supportsColumnAliasing() {
    return true;
  }

  @Override
  public boolean supportsConvert() {
    return false;
  }

  @Override
  public boolean supportsConvert(int arg0, int arg1) {
    return false;
  }

  @Override
  public boolean supportsCoreSQLGrammar() {
    return true;
  }

  @Override
  public boolean supportsCorrelatedSubqueries() {
    return true;
  }

  @Override
  public boolean supportsDataDefinitionAndDataManipulationTransactions() {
    return true;
  }

  @Override
  public boolean supportsDataManipulationTransactionsOnly() {
    return false;
  }

  @Override
  public boolean supportsDifferentTableCorrelationNames() {
    return false;
  }

  @Override
  public boolean supportsExpressionsInOrderBy() {
    return true;
  }

  @Override
  public boolean supportsExtendedSQLGrammar() {
    return false;
  }

  @Override
  public boolean supportsFullOuterJoins() {
    return true;
  }

  @Override
  public boolean supportsGetGeneratedKeys() {
    return false;
  }

  @Override
  public boolean supportsGroupBy() {
    return true;
  }

  @Override
  public boolean supportsGroupByBeyondSelect() {
    return true;
  }

  @Override
  public boolean supportsGroupByUnrelated() {
    return true;
  }

  @Override
  public boolean supportsIntegrityEnhancementFacility() {
    return false;
  }

  @Override
  public boolean supportsLikeEscapeClause() {
    return true;
  }

  @Override
  public boolean supportsLimitedOuterJoins() {
    return true;
  }

  @Override
  public boolean supportsMinimumSQLGrammar() {
    return true;
  }

  @Override
  public boolean supportsMixedCaseIdentifiers() {
    return false;
  }

  @Override
  public boolean supportsMixedCaseQuotedIdentifiers() {
    return false;
  }

  @Override
  public boolean supportsMultipleOpenResults() {
    return false;
  }

  @Override
  public boolean supportsMultipleResultSets() {
    return false;
  }

  @Override
  public boolean supportsMultipleTransactions() {
    return true;
  }

  @Override
  public boolean supportsNamedParameters() {
    return false;
  }

  @Override
  public boolean supportsNonNullableColumns() {
    return true;
  }

  @Override
  public boolean supportsOpenCursorsAcrossCommit() {
    return false;
  }

  @Override
  public boolean supportsOpenCursorsAcrossRollback() {
    return false;
  }

  @Override
  public boolean supportsOpenStatementsAcrossCommit() {
    return false;
  }

  @Override
  public boolean supportsOpenStatementsAcrossRollback() {
    return false;
  }

  @Override
  public boolean supportsOrderByUnrelated() {
    return true;
  }

  @Override
  public boolean supportsOuterJoins() {
    return true;
  }

  @Override
  public boolean supportsPositionedDelete() {
    return false;
  }

  @Override
  public boolean supportsPositionedUpdate() {
    return false;
  }

  @Override
  public boolean supportsResultSetConcurrency(int arg0, int arg1) {
    return arg0 == ResultSet.TYPE_FORWARD_ONLY && arg1 == ResultSet.CONCUR_READ_ONLY;
  }

  @Override
  public boolean supportsResultSetHoldability(int arg0) {
    return arg0 == ResultSet.CLOSE_CURSORS_AT_COMMIT;
  }

  @Override
  public boolean supportsResultSetType(int arg0) {
    return arg0 == ResultSet.TYPE_FORWARD_ONLY;
  }

  @Override
  public boolean supportsSavepoints() {
    return false;
  }

  @Override
  public boolean supportsSchemasInDataManipulation() {
    return true;
  }

  @Override
  public boolean supportsSchemasInIndexDefinitions() {
    return true;
  }

  @Override
  public boolean supportsSchemasInPrivilegeDefinitions() {
    return true;
  }

  @Override
  public boolean supportsSchemasInProcedureCalls() {
    return true;
  }

  @Override
  public boolean supportsSchemasInTableDefinitions() {
    return true;
  }

  @Override
  public boolean supportsSelectForUpdate() {
    return false;
  }

  @Override
  public boolean supportsStatementPooling() {
    return false;
  }

  @Override
  public boolean supportsStoredFunctionsUsingCallSyntax() {
    return false;
  }

  @Override
  public boolean supportsStoredProcedures() {
    return false;
  }

  @Override
  public boolean supportsSubqueriesInComparisons() {
    return true;
  }

  @Override
  public boolean supportsSubqueriesInExists() {
    return true;
  }

  @Override
  public boolean supportsSubqueriesInIns() {
    return true;
  }

  @Override
  public boolean supportsSubqueriesInQuantifieds() {
    return true;
  }

  @Override
  public boolean supportsTableCorrelationNames() {
    return true;
  }

  @Override
  public boolean supportsTransactionIsolationLevel(int level) {
    // Weaker levels are served by repeatable read (see ThallusConnection.setTransactionIsolation).
    return level == Connection.TRANSACTION_READ_UNCOMMITTED || level == Connection.TRANSACTION_READ_COMMITTED
        || level == Connection.TRANSACTION_REPEATABLE_READ;
  }

  @Override
  public boolean supportsTransactions() {
    return true;
  }

  @Override
  public boolean supportsUnion() {
    return true;
  }

  @Override
  public boolean supportsUnionAll() {
    return true;
  }

  @Override
  public boolean updatesAreDetected(int arg0) {
    return false;
  }

  @Override
  public boolean usesLocalFilePerTable() {
    return false;
  }

  @Override
  public boolean usesLocalFiles() {
    return false;
  }
}
