package io.thallus.spark;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.Tls;
import java.io.Serializable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The options of one read, checked and typed once on the driver. Serializable: every partition carries it to its
 * executor, where it opens the connection.
 */
record ReadConf(
    List<String> urls,
    String queryText,
    String datasetPath,
    String tableName,
    String transportName,
    int batchRows,
    int partitions,
    String partitionColumnName,
    Map<String, String> credentials,
    boolean tls,
    String tlsTrustPath,
    boolean tlsVerifyHostname,
    Duration queryTimeoutOrNull,
    boolean pushDownFilters,
    boolean pushDownAggregate,
    boolean pushDownLimit,
    Map<String, String> namedDatasets,
    DrivingSource drivingOrNull,
    ShardedSource shardedOrNull) implements Serializable {

  // Optional is not Serializable, so the components hold nulls and these accessors wrap them.

  Optional<String> query() {
    return Optional.ofNullable(queryText);
  }

  Optional<String> dataset() {
    return Optional.ofNullable(datasetPath);
  }

  Optional<String> table() {
    return Optional.ofNullable(tableName);
  }

  Optional<String> transport() {
    return Optional.ofNullable(transportName);
  }

  Optional<String> partitionColumn() {
    return Optional.ofNullable(partitionColumnName);
  }

  /** The sharded dataset this read covers, with every server listed (docs/sharding.md); empty for other reads. */
  Optional<ShardedSource> sharded() {
    return Optional.ofNullable(shardedOrNull);
  }

  Optional<Duration> queryTimeout() {
    return Optional.ofNullable(queryTimeoutOrNull);
  }

  /** The source whose parts split a pushed join across partitions ({@link DrivingSource}). */
  Optional<DrivingSource> driving() {
    return Optional.ofNullable(drivingOrNull);
  }

  static final int DEFAULT_BATCH_ROWS = 65_536;

  /** Reads Spark's options (keys in any case); a missing or malformed value is an IllegalArgumentException. */
  static ReadConf from(Map<String, String> options) {
    return from(options, true);
  }

  /**
   * As {@link #from(Map)}; a catalog's connection ({@code needsSource} false) names no query, dataset or table of its
   * own, and {@link #baseSql} then reads nothing useful.
   */
  static ReadConf from(Map<String, String> options, boolean needsSource) {
    ThallusOptions.checkKnown(options.keySet());
    Map<String, String> lower = new LinkedHashMap<>();
    Map<String, String> credentials = new LinkedHashMap<>();
    for (Map.Entry<String, String> entry : options.entrySet()) {
      String key = entry.getKey().toLowerCase(Locale.ROOT);
      lower.put(key, entry.getValue());
      if (key.startsWith(ThallusOptions.CREDENTIAL_PREFIX) && key.length() > ThallusOptions.CREDENTIAL_PREFIX.length()) {
        // The credential's name keeps the case the user wrote, when Spark kept it.
        credentials.put(entry.getKey().substring(ThallusOptions.CREDENTIAL_PREFIX.length()), entry.getValue());
      }
      if (key.equals(ThallusOptions.TOKEN.toLowerCase(Locale.ROOT)) || key.equals(ThallusOptions.USER)
          || key.equals(ThallusOptions.PASSWORD)) {
        credentials.put(key, entry.getValue());
      }
    }
    String url = text(lower, ThallusOptions.URL)
        .orElseThrow(() -> new IllegalArgumentException("option 'url' is required, e.g. thallus://host:47470"));
    List<String> urls = new ArrayList<>();
    for (String part : url.split(",")) {
      if (!part.isBlank()) {
        Location.parse(part.strip()); // fails early, on the driver, with the parser's message
        urls.add(part.strip());
      }
    }
    if (urls.isEmpty()) {
      throw new IllegalArgumentException("option 'url' names no server");
    }
    Optional<String> query = text(lower, ThallusOptions.QUERY);
    Optional<String> dataset = text(lower, ThallusOptions.DATASET);
    Optional<String> table = text(lower, ThallusOptions.TABLE);
    Optional<String> sharded = text(lower, ThallusOptions.SHARDED);
    if (sharded.isPresent() && (query.isPresent() || dataset.isPresent() || table.isPresent()
        || text(lower, ThallusOptions.PARTITION_COLUMN).isPresent())) {
      throw new IllegalArgumentException("option 'sharded' reads a whole sharded dataset: it takes no 'query', "
          + "'dataset', 'table' or 'partitionColumn'");
    }
    if (needsSource && query.isEmpty() && dataset.isEmpty() && table.isEmpty() && sharded.isEmpty()) {
      throw new IllegalArgumentException("give option 'query', 'dataset' or 'table' (or 'dataset' with 'table')");
    }
    if (text(lower, ThallusOptions.TLS_TRUST).isPresent() && !bool(lower, ThallusOptions.TLS, false)) {
      throw new IllegalArgumentException("option 'tlsTrust' needs option 'tls' set to true");
    }
    if (query.isPresent() && table.isPresent()) {
      throw new IllegalArgumentException("options 'query' and 'table' exclude each other: query the table in SQL");
    }
    Optional<Integer> timeout = integer(lower, ThallusOptions.QUERY_TIMEOUT, 1);
    return new ReadConf(List.copyOf(urls), query.orElse(null), dataset.orElse(null), table.orElse(null),
        text(lower, ThallusOptions.TRANSPORT).orElse(null),
        integer(lower, ThallusOptions.BATCH_ROWS, 1).orElse(DEFAULT_BATCH_ROWS),
        integer(lower, ThallusOptions.PARTITIONS, 1).orElse(1),
        text(lower, ThallusOptions.PARTITION_COLUMN).orElse(null),
        Map.copyOf(credentials),
        bool(lower, ThallusOptions.TLS, false),
        text(lower, ThallusOptions.TLS_TRUST).orElse(null),
        bool(lower, ThallusOptions.TLS_VERIFY_HOSTNAME, true),
        timeout.map(Duration::ofSeconds).orElse(null),
        bool(lower, ThallusOptions.PUSH_DOWN_FILTERS, true),
        bool(lower, ThallusOptions.PUSH_DOWN_AGGREGATE, true),
        bool(lower, ThallusOptions.PUSH_DOWN_LIMIT, true),
        Map.of(), null,
        sharded.map(name -> ShardedSource.of(name, urls, integer(lower, ThallusOptions.PARTITIONS, 1).orElse(1)))
            .orElse(null));
  }

  /** The location of server {@code index} (round robin), with the transport option applied. */
  Location location(int index) {
    Location location = Location.parse(urls.get(Math.floorMod(index, urls.size())));
    return transportName == null ? location : location.withTransport(transportName);
  }

  ClientOptions clientOptions() {
    ClientOptions.Builder builder = ClientOptions.builder().batchRows(batchRows).clientName("thallus-spark");
    credentials.forEach(builder::credential);
    if (tls) {
      // Built here, on the executor that connects: Tls is not serializable, and the trust file is read there.
      Tls client = tlsTrustPath == null ? Tls.client() : Tls.client(Path.of(tlsTrustPath));
      builder.tls(tlsVerifyHostname ? client : client.withoutHostnameVerification());
    }
    return builder.build();
  }

  /** This connection reading {@code table} of the server's database (a catalog's table). */
  ReadConf withTable(TableName table) {
    return reading(null, null, table.sql());
  }

  /** This connection reading the result of {@code sql} (over the same dataset, if any): a pushed join. */
  ReadConf withQuery(String sql) {
    return reading(sql, datasetPath, null);
  }

  /** This connection reading {@code path} under the server's data root (a catalog's dataset). */
  ReadConf withDataset(String path) {
    return reading(null, path, null);
  }

  /**
   * This connection reading a pushed join's SQL, with the request binding {@code datasetOrNull} as its
   * {@code dataset} and {@code named} (view name to path) as named datasets ({@link JoinSources}); split by the
   * parts of {@code drivingOrNull}, if given.
   */
  ReadConf withJoin(String sql, String datasetOrNull, Map<String, String> named, DrivingSource drivingOrNull) {
    return new ReadConf(urls, sql, datasetOrNull, null, transportName, batchRows, partitions, partitionColumnName,
        credentials, tls, tlsTrustPath, tlsVerifyHostname, queryTimeoutOrNull, pushDownFilters, pushDownAggregate,
        pushDownLimit, Map.copyOf(named), drivingOrNull, shardedOrNull);
  }

  private ReadConf reading(String query, String dataset, String table) {
    return new ReadConf(urls, query, dataset, table, transportName, batchRows, partitions, partitionColumnName,
        credentials, tls, tlsTrustPath, tlsVerifyHostname, queryTimeoutOrNull, pushDownFilters, pushDownAggregate,
        pushDownLimit, namedDatasets, null, shardedOrNull);
  }

  /**
   * This connection reading {@code dataset} on {@code servers} (the first preferred), as {@code partitions} streams,
   * as part of {@code sharded} (null: a plain dataset read, one shard's).
   */
  ReadConf forShards(List<String> servers, String dataset, int partitions, ShardedSource sharded) {
    return new ReadConf(List.copyOf(servers), null, dataset, null, transportName, batchRows, partitions, null,
        credentials, tls, tlsTrustPath, tlsVerifyHostname, queryTimeoutOrNull, pushDownFilters, pushDownAggregate,
        pushDownLimit, Map.of(), null, sharded);
  }

  /** What the scan reads before any pushdown: the query, the table, or the whole dataset view. */
  String baseSql() {
    if (queryText != null) {
      return queryText;
    }
    if (tableName != null) {
      return "SELECT * FROM " + TableName.parse(tableName).sql();
    }
    return "SELECT * FROM dataset";
  }

  private static Optional<String> text(Map<String, String> options, String key) {
    String value = options.get(key.toLowerCase(Locale.ROOT));
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.strip());
  }

  private static Optional<Integer> integer(Map<String, String> options, String key, int min) {
    Optional<String> value = text(options, key);
    if (value.isEmpty()) {
      return Optional.empty();
    }
    int parsed;
    try {
      parsed = Integer.parseInt(value.get());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("option '" + key + "' must be an integer, got '" + value.get() + "'");
    }
    if (parsed < min) {
      throw new IllegalArgumentException("option '" + key + "' must be at least " + min + ", got " + parsed);
    }
    return Optional.of(parsed);
  }

  private static boolean bool(Map<String, String> options, String key, boolean absent) {
    Optional<String> value = text(options, key);
    if (value.isEmpty()) {
      return absent;
    }
    return switch (value.get().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException("option '" + key + "' must be true or false, got '"
          + value.get() + "'");
    };
  }
}
