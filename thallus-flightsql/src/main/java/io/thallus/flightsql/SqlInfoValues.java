package io.thallus.flightsql;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.sql.SqlInfoBuilder;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlInfo;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlNullOrdering;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlOuterJoinsSupportLevel;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedCaseSensitivity;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedElementActions;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedGroupBy;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedResultSetType;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedSubqueries;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedUnions;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlTransactionIsolationLevel;
import org.apache.arrow.flight.sql.impl.FlightSql.SupportedAnsi92SqlGrammarLevel;
import org.apache.arrow.flight.sql.impl.FlightSql.SupportedSqlGrammar;

/**
 * The server's GetSqlInfo answer: every key the Flight SQL JDBC driver's {@code DatabaseMetaData} reads (it throws
 * for a missing one), with values true of DuckDB (what DuckDB's own JDBC driver answers where it answers), and the
 * keyword and function lists asked of the caller's session when a client asks for them.
 */
final class SqlInfoValues {
  /** The keys whose values are lists DuckDB's catalog functions give. */
  private static final Set<Integer> FROM_THE_ENGINE = Set.of(SqlInfo.SQL_KEYWORDS_VALUE,
      SqlInfo.SQL_NUMERIC_FUNCTIONS_VALUE, SqlInfo.SQL_STRING_FUNCTIONS_VALUE, SqlInfo.SQL_SYSTEM_FUNCTIONS_VALUE,
      SqlInfo.SQL_DATETIME_FUNCTIONS_VALUE);

  /**
   * DuckDB's keywords and functions, each list sorted: numeric functions take a number first, string ones text,
   * date and time ones a TIME or TIMESTAMP type, system ones nothing (the grouping DuckDB's own driver reports).
   */
  private static final String LISTS = "SELECT (SELECT list_sort(list(keyword_name)) FROM duckdb_keywords()),"
      + " list_sort(list_distinct(list(function_name) FILTER (WHERE parameter_types[1] IN"
      + " ('DECIMAL', 'DOUBLE', 'SMALLINT', 'BIGINT')))),"
      + " list_sort(list_distinct(list(function_name) FILTER (WHERE parameter_types[1] = 'VARCHAR'))),"
      + " list_sort(list_distinct(list(function_name) FILTER (WHERE len(parameter_types) = 0))),"
      + " list_sort(list_distinct(list(function_name) FILTER (WHERE parameter_types[1] LIKE 'TIME%')))"
      + " FROM duckdb_functions()";

  private final String serverVersion;
  private final String arrowVersion;

  SqlInfoValues(String serverVersion, String arrowVersion) {
    this.serverVersion = serverVersion;
    this.arrowVersion = arrowVersion;
  }

  /** Sends the values {@code command} asks for (all when it names none), asking the session for lists only then. */
  void send(FlightSql.CommandGetSqlInfo command, FlightSession session, ServerStreamListener listener) {
    List<Integer> asked = command.getInfoList();
    SqlInfoBuilder values = fixed();
    if (asked.isEmpty() || asked.stream().anyMatch(FROM_THE_ENGINE::contains)) {
      List<Object> lists = Metadata.rows(session, LISTS, List.of()).getFirst();
      values.withSqlKeywords(texts(lists.get(0)))
          .withSqlNumericFunctions(texts(lists.get(1)))
          .withSqlStringFunctions(texts(lists.get(2)))
          .withSqlSystemFunctions(texts(lists.get(3)))
          .withSqlDatetimeFunctions(texts(lists.get(4)));
    }
    values.send(asked, listener);
  }

  private static String[] texts(Object list) {
    List<String> texts = new ArrayList<>();
    if (list instanceof List<?> values) {
      for (Object value : values) {
        texts.add(String.valueOf(value));
      }
    }
    return texts.toArray(String[]::new);
  }

  /** The values that do not depend on the session. */
  private SqlInfoBuilder fixed() {
    return new SqlInfoBuilder()
        // The server.
        .withFlightSqlServerName("Thallus")
        .withFlightSqlServerVersion(serverVersion)
        .withFlightSqlServerArrowVersion(arrowVersion)
        .withFlightSqlServerReadOnly(false)
        .withFlightSqlServerSql(true)
        .withFlightSqlServerSubstrait(false)
        .withFlightSqlServerTransaction(FlightSql.SqlSupportedTransaction.SQL_SUPPORTED_TRANSACTION_TRANSACTION)
        .withFlightSqlServerCancel(true)
        .withFlightSqlServerBulkIngestion(true)
        .withFlightSqlServerBulkIngestionTransaction(true)
        // Names: DuckDB keeps the case it is given and matches names without regard to case, quoted or not.
        .withSqlIdentifierQuoteChar("\"")
        .withSqlIdentifierCase(SqlSupportedCaseSensitivity.SQL_CASE_SENSITIVITY_CASE_INSENSITIVE)
        .withSqlQuotedIdentifierCase(SqlSupportedCaseSensitivity.SQL_CASE_SENSITIVITY_CASE_INSENSITIVE)
        .withSqlSearchStringEscape("\\")
        .withSqlExtraNameCharacters("")
        .withSqlSchemaTerm("schema")
        .withSqlCatalogTerm("catalog")
        .withSqlProcedureTerm("procedure")
        .withSqlCatalogAtStart(true)
        .withSqlDdlCatalog(false)
        .withSqlDdlSchema(true)
        .withSqlDdlTable(true)
        .withSqlAllTablesAreSelectable(true)
        .withSqlNullOrdering(SqlNullOrdering.SQL_NULLS_SORTED_HIGH)
        // The SQL DuckDB takes.
        .withSqlSupportsColumnAliasing(true)
        .withSqlNullPlusNullIsNull(true)
        // No {fn CONVERT} escapes: DuckDB's driver says the same.
        .withSqlSupportsConvert(Map.of())
        .withSqlSupportsTableCorrelationNames(true)
        .withSqlSupportsDifferentTableCorrelationNames(false)
        .withSqlSupportsExpressionsInOrderBy(true)
        .withSqlSupportsOrderByUnrelated(true)
        .withSqlSupportedGroupBy(SqlSupportedGroupBy.SQL_GROUP_BY_UNRELATED,
            SqlSupportedGroupBy.SQL_GROUP_BY_BEYOND_SELECT)
        .withSqlSupportsLikeEscapeClause(true)
        .withSqlSupportsNonNullableColumns(true)
        .withSqlSupportedGrammar(SupportedSqlGrammar.SQL_MINIMUM_GRAMMAR, SupportedSqlGrammar.SQL_CORE_GRAMMAR,
            SupportedSqlGrammar.SQL_EXTENDED_GRAMMAR)
        .withSqlAnsi92SupportedLevel(SupportedAnsi92SqlGrammarLevel.ANSI92_ENTRY_SQL,
            SupportedAnsi92SqlGrammarLevel.ANSI92_INTERMEDIATE_SQL, SupportedAnsi92SqlGrammarLevel.ANSI92_FULL_SQL)
        .withSqlSupportsIntegrityEnhancementFacility(false)
        .withSqlOuterJoinSupportLevel(SqlOuterJoinsSupportLevel.SQL_LIMITED_OUTER_JOINS,
            SqlOuterJoinsSupportLevel.SQL_FULL_OUTER_JOINS)
        .withSqlSchemasSupportedActions(SqlSupportedElementActions.SQL_ELEMENT_IN_PROCEDURE_CALLS,
            SqlSupportedElementActions.SQL_ELEMENT_IN_INDEX_DEFINITIONS)
        .withSqlCatalogsSupportedActions(SqlSupportedElementActions.SQL_ELEMENT_IN_INDEX_DEFINITIONS)
        .withSqlSupportedPositionedCommands()
        .withSqlSelectForUpdateSupported(false)
        .withSqlStoredProceduresSupported(false)
        .withSqlSubQueriesSupported(SqlSupportedSubqueries.SQL_SUBQUERIES_IN_COMPARISONS,
            SqlSupportedSubqueries.SQL_SUBQUERIES_IN_EXISTS, SqlSupportedSubqueries.SQL_SUBQUERIES_IN_INS,
            SqlSupportedSubqueries.SQL_SUBQUERIES_IN_QUANTIFIEDS)
        .withSqlCorrelatedSubqueriesSupported(true)
        .withSqlSupportedUnions(SqlSupportedUnions.SQL_UNION, SqlSupportedUnions.SQL_UNION_ALL)
        .withSqlSupportedResultSetTypes(SqlSupportedResultSetType.SQL_RESULT_SET_TYPE_FORWARD_ONLY)
        // Limits: DuckDB sets none of these (0 is JDBC's "no limit or unknown", DuckDB's driver's answer).
        .withSqlMaxBinaryLiteralLength(0)
        .withSqlMaxCharLiteralLength(0)
        .withSqlMaxColumnNameLength(0)
        .withSqlMaxColumnsInGroupBy(0)
        .withSqlMaxColumnsInIndex(0)
        .withSqlMaxColumnsInOrderBy(0)
        .withSqlMaxColumnsInSelect(0)
        .withSqlMaxColumnsInTable(0)
        .withSqlMaxConnections(0)
        .withSqlMaxCursorNameLength(0)
        .withSqlMaxIndexLength(0)
        .withSqlDbSchemaNameLength(0)
        .withSqlMaxProcedureNameLength(0)
        .withSqlMaxCatalogNameLength(0)
        .withSqlMaxRowSize(0)
        .withSqlMaxRowSizeIncludesBlobs(false)
        .withSqlMaxStatementLength(0)
        .withSqlMaxStatements(0)
        .withSqlMaxTableNameLength(0)
        .withSqlMaxTablesInSelect(0)
        .withSqlMaxUsernameLength(0)
        // Transactions: DuckDB's snapshots give repeatable reads (and what is weaker), not serializable ones; DDL
        // is transactional. The default level is Flight SQL's ordinal, not JDBC's constant (see docs/flight-sql.md).
        .withSqlTransactionsSupported(true)
        .withSqlDefaultTransactionIsolation(SqlTransactionIsolationLevel.SQL_TRANSACTION_REPEATABLE_READ_VALUE)
        .withSqlSupportedTransactionsIsolationLevels(SqlTransactionIsolationLevel.SQL_TRANSACTION_READ_UNCOMMITTED,
            SqlTransactionIsolationLevel.SQL_TRANSACTION_READ_COMMITTED,
            SqlTransactionIsolationLevel.SQL_TRANSACTION_REPEATABLE_READ)
        .withSqlDataDefinitionCausesTransactionCommit(false)
        .withSqlDataDefinitionsInTransactionsIgnored(false)
        .withSqlBatchUpdatesSupported(true)
        .withSqlSavepointsSupported(false)
        .withSqlNamedParametersSupported(false)
        .withSqlLocatorsUpdateCopy(false)
        .withSqlStoredFunctionsUsingCallSyntaxSupported(false);
  }
}
