package io.thallus.spark;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the two sides of a pushed join read from, in one request. A request binds one {@code dataset} (the view
 * {@code dataset}, or a DuckDB file as the default catalog) and any number of named datasets of files
 * ({@code QueryRequest.Builder.dataset(name, path)}). Two sides over the same dataset (or none) keep it as it is;
 * otherwise each side's files are bound under a view of their own, named after their path
 * ({@code thallus_dataset_<hash>}: the same files keep one name through any number of joins, different files never
 * share one), and a side's SQL reads that view (its {@code query} sees it as {@code dataset}, through a CTE that
 * shadows the name). A DuckDB database file can only be the request's dataset: such sides join only with sides of
 * the same file.
 */
final class JoinSources {
  private JoinSources() {}

  /** The SQL each side reads before its own filters, and what the join's request binds. */
  record Bound(String leftBase, String rightBase, String datasetOrNull, Map<String, String> named) {}

  /** How {@code left} and {@code right} read from one request, or empty when they cannot. */
  static Optional<Bound> of(ReadConf left, ReadConf right) {
    if (Objects.equals(left.datasetPath(), right.datasetPath())) {
      return merge(left.namedDatasets(), right.namedDatasets())
          .map(named -> new Bound(left.baseSql(), right.baseSql(), left.datasetPath(), named));
    }
    Optional<Side> l = side(left);
    Optional<Side> r = side(right);
    if (l.isEmpty() || r.isEmpty()) {
      return Optional.empty();
    }
    return merge(l.get().named(), r.get().named())
        .map(named -> new Bound(l.get().base(), r.get().base(), null, named));
  }

  private record Side(String base, Map<String, String> named) {}

  /** A side that needs no {@code dataset} of the request: its files under their own view. */
  private static Optional<Side> side(ReadConf conf) {
    String path = conf.datasetPath();
    if (path == null || conf.table().isPresent() && !isDatabaseFile(path)) {
      // No dataset, or a table of the server's database beside files it does not read.
      return Optional.of(new Side(conf.baseSql(), conf.namedDatasets()));
    }
    if (isDatabaseFile(path)) {
      return Optional.empty();
    }
    String view = viewName(path);
    Map<String, String> named = new LinkedHashMap<>(conf.namedDatasets());
    named.put(view, path);
    String files = "SELECT * FROM " + Sql.identifier(view);
    String base = conf.query().isEmpty() ? files
        : "WITH dataset AS (" + files + ")\nSELECT * FROM (\n" + conf.query().get() + "\n) AS thallus_query";
    return Optional.of(new Side(base, named));
  }

  /** Both sides' named datasets, or empty if one name stands for two paths. */
  private static Optional<Map<String, String>> merge(Map<String, String> left, Map<String, String> right) {
    Map<String, String> named = new LinkedHashMap<>(left);
    for (Map.Entry<String, String> entry : right.entrySet()) {
      String earlier = named.putIfAbsent(entry.getKey(), entry.getValue());
      if (earlier != null && !earlier.equals(entry.getValue())) {
        return Optional.empty();
      }
    }
    return Optional.of(named);
  }

  /** The view a dataset of files is bound to in a join: named after its path, a plain identifier. */
  static String viewName(String path) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(path.getBytes(StandardCharsets.UTF_8));
      return "thallus_dataset_" + HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }

  /** The server's rule (DuckDBEngine.isDatabaseFile): such a dataset is attached, not read as files. */
  static boolean isDatabaseFile(String path) {
    String name = path.toLowerCase(Locale.ROOT);
    return name.endsWith(".duckdb") || name.endsWith(".db");
  }
}
