package io.thallus.jdbc;

import io.thallus.Location;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.Map;
import java.util.Properties;

/** A parsed {@code jdbc:thallus://host:port[/dataset][?key=value&...]} with its properties, typed. */
final class JdbcUrl {
  static final String PREFIX = "jdbc:thallus:";

  private final String host;
  private final int port;
  private final Map<ThallusProperty, String> values;

  private JdbcUrl(String host, int port, Map<ThallusProperty, String> values) {
    this.host = host;
    this.port = port;
    this.values = values;
  }

  static boolean accepts(String url) {
    return url != null && url.startsWith(PREFIX);
  }

  /** Parses the URL; {@code info} (may be null) overrides what the URL's query says. */
  static JdbcUrl parse(String url, Properties info) throws SQLException {
    if (!accepts(url)) {
      throw Errors.invalid("not a Thallus URL: " + url + " (expected " + PREFIX + "//host:port[/dataset])");
    }
    String rest = url.substring(PREFIX.length());
    if (!rest.startsWith("//")) {
      throw Errors.invalid("a Thallus URL needs //host:port after " + PREFIX + ", got " + url);
    }
    rest = rest.substring(2);
    String query = "";
    int question = rest.indexOf('?');
    if (question >= 0) {
      query = rest.substring(question + 1);
      rest = rest.substring(0, question);
    }
    String dataset = "";
    int slash = rest.indexOf('/');
    if (slash >= 0) {
      dataset = decode(rest.substring(slash + 1), url);
      rest = rest.substring(0, slash);
    }
    String host;
    String portText;
    if (rest.startsWith("[")) {
      int close = rest.indexOf(']');
      if (close < 0) {
        throw Errors.invalid("unclosed IPv6 address in " + url);
      }
      host = rest.substring(1, close);
      portText = rest.substring(close + 1).startsWith(":") ? rest.substring(close + 2) : "";
    } else {
      int colon = rest.lastIndexOf(':');
      host = colon < 0 ? rest : rest.substring(0, colon);
      portText = colon < 0 ? "" : rest.substring(colon + 1);
    }
    if (host.isEmpty()) {
      throw Errors.invalid("no host in " + url);
    }
    int port = Location.DEFAULT_PORT;
    if (!portText.isEmpty()) {
      try {
        port = Integer.parseInt(portText);
      } catch (NumberFormatException e) {
        throw Errors.invalid("port '" + portText + "' is not a number in " + url);
      }
      if (port < 1 || port > 65535) {
        throw Errors.invalid("port " + port + " is out of range in " + url);
      }
    }
    Map<ThallusProperty, String> values = new EnumMap<>(ThallusProperty.class);
    if (!dataset.isEmpty()) {
      values.put(ThallusProperty.DATASET, dataset);
    }
    if (!query.isEmpty()) {
      for (String pair : query.split("&")) {
        if (pair.isEmpty()) {
          continue;
        }
        int equals = pair.indexOf('=');
        String key = decode(equals < 0 ? pair : pair.substring(0, equals), url);
        String value = equals < 0 ? "" : decode(pair.substring(equals + 1), url);
        put(values, key, value, "the URL");
      }
    }
    if (info != null) {
      for (String key : info.stringPropertyNames()) {
        put(values, key, info.getProperty(key), "the connection properties");
      }
    }
    for (Map.Entry<ThallusProperty, String> entry : values.entrySet()) {
      if (entry.getKey().type() == ThallusProperty.Type.INTEGER) {
        integer(entry.getKey(), entry.getValue());
      } else if (entry.getKey().type() == ThallusProperty.Type.BOOLEAN) {
        bool(entry.getKey(), entry.getValue());
      }
    }
    return new JdbcUrl(host, port, values);
  }

  private static void put(Map<ThallusProperty, String> values, String key, String value, String where)
      throws SQLException {
    ThallusProperty property = ThallusProperty.forKey(key);
    if (property == null) {
      throw Errors.invalid("unknown property '" + key + "' in " + where + "; known: " + known());
    }
    values.put(property, value);
  }

  private static String known() {
    StringBuilder names = new StringBuilder();
    for (ThallusProperty property : ThallusProperty.values()) {
      names.append(names.isEmpty() ? "" : ", ").append(property.key());
    }
    return names.toString();
  }

  private static String decode(String text, String url) throws SQLException {
    try {
      return URLDecoder.decode(text, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw Errors.invalid("bad %-escape in " + url + ": " + e.getMessage());
    }
  }

  private static int integer(ThallusProperty property, String text) throws SQLException {
    try {
      int value = Integer.parseInt(text.trim());
      if (value < 1) {
        throw Errors.invalid(property.key() + " must be at least 1, got " + value);
      }
      if (property == ThallusProperty.STREAMS && value > io.thallus.QueryRequest.MAX_STREAMS) {
        throw Errors.invalid("streams must be at most " + io.thallus.QueryRequest.MAX_STREAMS + ", got " + value);
      }
      return value;
    } catch (NumberFormatException e) {
      throw Errors.invalid(property.key() + " must be a whole number, got '" + text + "'");
    }
  }

  private static boolean bool(ThallusProperty property, String text) throws SQLException {
    return switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
      case "true", "yes", "1", "on" -> true;
      case "false", "no", "0", "off" -> false;
      default -> throw Errors.invalid(property.key() + " must be true or false, got '" + text + "'");
    };
  }

  boolean bool(ThallusProperty property) {
    String text = values.getOrDefault(property, property.defaultValue()).trim().toLowerCase(java.util.Locale.ROOT);
    // Validated in parse.
    return text.equals("true") || text.equals("yes") || text.equals("1") || text.equals("on");
  }

  String string(ThallusProperty property) {
    return values.getOrDefault(property, property.defaultValue());
  }

  int integer(ThallusProperty property) {
    // Validated in parse.
    return Integer.parseInt(values.getOrDefault(property, property.defaultValue()).trim());
  }

  Location location() {
    String transport = string(ThallusProperty.TRANSPORT);
    return transport.isEmpty() ? Location.of(host, port) : Location.of(host, port, transport);
  }

  String host() {
    return host;
  }

  int port() {
    return port;
  }
}
