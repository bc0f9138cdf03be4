package io.thallus.spark;

/**
 * The option keys of {@code spark.read.format("thallus")}, in one place. {@link ReadConf} reads them typed.
 * Spark hands options over case-insensitively, so the keys are matched that way too.
 */
final class ThallusOptions {
  private ThallusOptions() {}

  /** One server, or a comma-separated list of servers that serve the same data: {@code thallus://host:port,...}. */
  static final String URL = "url";
  /** SQL to run on the server; it may read the dataset through the view {@code dataset}. */
  static final String QUERY = "query";
  /** A path below the server's data root: a Parquet/CSV file, glob or directory, or a DuckDB file. */
  static final String DATASET = "dataset";
  /** A table: of the DuckDB dataset file, or of the server's own database when no dataset is named. */
  static final String TABLE = "table";
  /** A sharded dataset's name: the servers in {@code url} are asked which parts each holds (docs/sharding.md). */
  static final String SHARDED = "sharded";
  /** Overrides the transport the URL asks for: {@code tcp}, {@code shm}, {@code cma}, {@code ipc}, {@code rdma}. */
  static final String TRANSPORT = "transport";
  /** Rows per Arrow batch the server produces (one Spark ColumnarBatch each). */
  static final String BATCH_ROWS = "batchRows";
  /** How many independent streams (Spark partitions) the scan is split into. */
  static final String PARTITIONS = "partitions";
  /** A column whose hash splits a query's rows across partitions (default: the whole row). */
  static final String PARTITION_COLUMN = "partitionColumn";
  /** Credentials sent at HELLO, as the server's Authentication expects them: a token, or user and password. */
  static final String TOKEN = "token";
  static final String USER = "user";
  static final String PASSWORD = "password";
  /** Prefix of any other credential sent at HELLO: {@code credential.NAME} → credential {@code NAME}. */
  static final String CREDENTIAL_PREFIX = "credential.";
  /** TLS on the control connection (the server then offers ipc, shm, cma); the server is verified by default. */
  static final String TLS = "tls";
  /** PEM file of the certificates to trust, readable on every executor (default: the JDK's trust store). */
  static final String TLS_TRUST = "tlsTrust";
  /** Whether the server's certificate must name the host connected to (default true). */
  static final String TLS_VERIFY_HOSTNAME = "tlsVerifyHostname";
  /** Seconds the server may run one partition's query before it cancels it. */
  static final String QUERY_TIMEOUT = "queryTimeoutSeconds";
  /** Whether filters, aggregates, limits and top-N may run on the server (all default to true). */
  static final String PUSH_DOWN_FILTERS = "pushDownFilters";
  static final String PUSH_DOWN_AGGREGATE = "pushDownAggregate";
  static final String PUSH_DOWN_LIMIT = "pushDownLimit";

  /** Every key above (the credential prefix aside), as written. */
  static final java.util.List<String> KEYS = java.util.List.of(URL, QUERY, DATASET, TABLE, TRANSPORT, BATCH_ROWS,
      PARTITIONS, PARTITION_COLUMN, TOKEN, USER, PASSWORD, TLS, TLS_TRUST, TLS_VERIFY_HOSTNAME, QUERY_TIMEOUT,
      PUSH_DOWN_FILTERS, PUSH_DOWN_AGGREGATE, PUSH_DOWN_LIMIT, SHARDED);

  /**
   * Fails on a key that is none of the above, naming it and the closest known key: a misspelt option silently
   * ignored would read or write something other than what was asked.
   */
  static void checkKnown(java.util.Collection<String> keys) {
    for (String key : keys) {
      String lower = key.toLowerCase(java.util.Locale.ROOT);
      if (lower.startsWith(CREDENTIAL_PREFIX) && lower.length() > CREDENTIAL_PREFIX.length()) {
        continue;
      }
      if (KEYS.stream().noneMatch(known -> known.equalsIgnoreCase(key))) {
        String closest = KEYS.stream().min(java.util.Comparator.comparingInt(
            known -> distance(known.toLowerCase(java.util.Locale.ROOT), lower))).orElseThrow();
        throw new IllegalArgumentException("unknown option '" + key + "' for format thallus (did you mean '"
            + closest + "'?); the options are " + KEYS + " and credential.NAME");
      }
    }
  }

  /** Edit distance (insertions, deletions, substitutions) between two keys. */
  private static int distance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }
}
