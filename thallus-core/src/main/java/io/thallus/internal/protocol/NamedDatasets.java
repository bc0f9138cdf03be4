package io.thallus.internal.protocol;

import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The rule for the view names a request binds datasets to ({@link QueryRequest.Builder#dataset(String, String)}),
 * checked alike by the client and the server: a plain identifier, so the engine can quote it without a second
 * reading, and never {@code dataset}, the request's own dataset view.
 */
public final class NamedDatasets {
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private NamedDatasets() {}

  /** Throws an IllegalArgumentException that says what is wrong with {@code name}. */
  public static void checkName(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("dataset name '" + name + "' is not a plain SQL identifier "
          + "([A-Za-z_][A-Za-z0-9_]*, at most 63 characters)");
    }
    if (name.equalsIgnoreCase("dataset")) {
      throw new IllegalArgumentException("dataset name 'dataset' is the request's own dataset: bind it with "
          + "dataset(path), or choose another name");
    }
  }

  /**
   * Splits the wire options of an OPEN into the named datasets (view name to path as sent) and the other options,
   * checking the names, their number and that no two differ only in case; INVALID_ARGUMENT otherwise.
   */
  public static Map<String, String> take(Map<String, String> options, Map<String, String> others) {
    Map<String, String> named = new LinkedHashMap<>();
    Map<String, String> lower = new LinkedHashMap<>();
    for (Map.Entry<String, String> option : options.entrySet()) {
      String key = option.getKey();
      if (!key.startsWith(QueryRequest.NAMED_DATASET_OPTION_PREFIX)) {
        others.put(key, option.getValue());
        continue;
      }
      String name = key.substring(QueryRequest.NAMED_DATASET_OPTION_PREFIX.length());
      try {
        checkName(name);
      } catch (IllegalArgumentException e) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, e.getMessage());
      }
      String earlier = lower.put(name.toLowerCase(Locale.ROOT), name);
      if (earlier != null) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "dataset names '" + earlier + "' and '" + name
            + "' differ only in case: SQL would not tell them apart");
      }
      if (option.getValue().isBlank()) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "dataset '" + name + "' has an empty path");
      }
      named.put(name, option.getValue());
    }
    if (named.size() > QueryRequest.MAX_NAMED_DATASETS) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a request binds at most "
          + QueryRequest.MAX_NAMED_DATASETS + " named datasets, got " + named.size());
    }
    return named;
  }
}
