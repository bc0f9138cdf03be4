package io.thallus.engine;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One query as the engine receives it. {@code dataset} is already resolved inside the server's data root and
 * known to exist. {@code parameters} are the values of the SQL's {@code ?}s in order ({@code null} is SQL NULL;
 * numbers, String, byte[], Boolean, UUID, BigInteger, and java.time dates and times). With {@code schemaOnly}
 * the engine need only produce the schema: the server asks for no batch. {@code parameterRows}, when not empty,
 * is an Arrow IPC stream of rows of parameters: the statement runs once per row, all rows in one transaction, and
 * answers with one update count per row. The array is the request's own, not a copy (it may be megabytes): read it,
 * do not change it. {@code transaction} says which transaction the statement runs in. {@code options} are what the
 * client set with {@link io.thallus.QueryRequest.Builder#option}, for an engine that understands them.
 * {@code namedDatasets} are the datasets of files the request binds to view names of its own
 * ({@link io.thallus.QueryRequest.Builder#dataset(String, String)}), in the request's order: each name a plain
 * identifier other than {@code dataset}, no two equal ignoring case, each path resolved inside the data root and
 * known to exist, like {@code dataset}.
 */
public record QuerySpec(String sql, Optional<Path> dataset, int batchRows, List<Object> parameters,
    boolean schemaOnly, TransactionMode transaction, Map<String, String> options, byte[] parameterRows,
    Map<String, Path> namedDatasets) {
  public QuerySpec {
    parameters = Collections.unmodifiableList(new ArrayList<>(parameters));
    java.util.Objects.requireNonNull(transaction, "transaction");
    options = Map.copyOf(options);
    namedDatasets = Collections.unmodifiableMap(new java.util.LinkedHashMap<>(namedDatasets));
  }

  /** A query that binds no named datasets. */
  public QuerySpec(String sql, Optional<Path> dataset, int batchRows, List<Object> parameters, boolean schemaOnly,
      TransactionMode transaction, Map<String, String> options, byte[] parameterRows) {
    this(sql, dataset, batchRows, parameters, schemaOnly, transaction, options, parameterRows, Map.of());
  }

  public QuerySpec(String sql, Optional<Path> dataset, int batchRows, List<Object> parameters, boolean schemaOnly,
      Map<String, String> options) {
    this(sql, dataset, batchRows, parameters, schemaOnly, TransactionMode.AUTOCOMMIT, options, new byte[0]);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof QuerySpec o && sql.equals(o.sql) && dataset.equals(o.dataset) && batchRows == o.batchRows
        && parameters.equals(o.parameters) && schemaOnly == o.schemaOnly && transaction == o.transaction
        && options.equals(o.options) && namedDatasets.equals(o.namedDatasets)
        && java.util.Arrays.equals(parameterRows, o.parameterRows);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(sql, dataset, batchRows, parameters, schemaOnly, transaction, options,
        namedDatasets, java.util.Arrays.hashCode(parameterRows));
  }

  @Override
  public String toString() {
    return "QuerySpec[sql=" + sql + ", dataset=" + dataset + ", batchRows=" + batchRows + ", parameters="
        + parameters.size() + ", schemaOnly=" + schemaOnly + ", transaction=" + transaction + ", options=" + options
        + ", parameterRows="
        + parameterRows.length + " bytes, namedDatasets=" + namedDatasets + "]";
  }

  /** Whether the statement runs once per row of {@link #parameterRows} (an Arrow IPC stream, one column per ?). */
  public boolean hasParameterRows() {
    return parameterRows.length > 0;
  }

  public QuerySpec(String sql, Optional<Path> dataset, int batchRows, Map<String, String> options) {
    this(sql, dataset, batchRows, List.of(), false, options);
  }

  /** Whether the statement runs in the session's transaction ({@link TransactionMode#SESSION}). */
  public boolean inSessionTransaction() {
    return transaction == TransactionMode.SESSION;
  }
}
