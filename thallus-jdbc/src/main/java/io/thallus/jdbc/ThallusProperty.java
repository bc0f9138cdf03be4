package io.thallus.jdbc;

import java.sql.DriverPropertyInfo;
import java.util.Locale;
import java.util.Properties;

/**
 * Every connection property the driver reads: in the URL's query ({@code ?transport=tcp&batchRows=1024}) or in the
 * {@code Properties} given to {@code DriverManager.getConnection}, which win over the URL.
 */
public enum ThallusProperty {
  DATASET("dataset", "", Type.STRING,
      "Path under the server's data root that queries see as the view 'dataset' (a DuckDB file: its tables). "
          + "Also the URL's path: jdbc:thallus://host:port/trips.parquet"),
  TRANSPORT("transport", "", Type.STRING,
      "Transport for batch bodies: rdma, shm, cma, tcp or ipc. Empty: the best one client and server share"),
  USER("user", "", Type.STRING, "User name sent at the handshake"),
  PASSWORD("password", "", Type.STRING, "Password sent at the handshake"),
  TOKEN("token", "", Type.STRING, "Bearer token or shared secret sent at the handshake"),
  TLS("tls", "false", Type.BOOLEAN, "Speak TLS on the control connection (the server then offers ipc, shm, cma)"),
  TLS_TRUST("tlsTrust", "", Type.STRING,
      "PEM file of the certificates to trust for TLS; empty: the JDK's certificate authorities"),
  TLS_VERIFY_HOSTNAME("tlsVerifyHostname", "true", Type.BOOLEAN,
      "Check that the server's certificate names the host in the URL"),
  BATCH_ROWS("batchRows", "65536", Type.INTEGER,
      "Rows per Arrow batch; Statement.setFetchSize overrides it per statement"),
  CREDITS("credits", "4", Type.INTEGER, "Batches the server may send ahead of the reader"),
  STREAMS("streams", "1", Type.INTEGER, "Parallel streams (1 to 64) the server may split a query's rows into, read "
      + "as one ResultSet: rows in no order across them unless the query has ORDER BY (then it is not split)"),
  CONNECT_TIMEOUT("connectTimeout", "10", Type.INTEGER, "Seconds to wait for the server's handshake"),
  TIMEOUT("timeout", "300", Type.INTEGER,
      "Seconds any single wait on the server may take (the next batch, the schema); not the query's run time"),
  RECEIVE_POOL_MB("receivePoolMB", "1024", Type.INTEGER, "Most memory, in MiB, the connection's received batches use");

  /** How a property's text is read. */
  public enum Type {
    STRING,
    INTEGER,
    BOOLEAN
  }

  private final String key;
  private final String defaultValue;
  private final Type type;
  private final String description;

  ThallusProperty(String key, String defaultValue, Type type, String description) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.type = type;
    this.description = description;
  }

  /** The name in the URL and in {@code Properties}. */
  public String key() {
    return key;
  }

  public String defaultValue() {
    return defaultValue;
  }

  public Type type() {
    return type;
  }

  public String description() {
    return description;
  }

  /** The property a key names, ignoring case, or {@code null}. */
  static ThallusProperty forKey(String key) {
    for (ThallusProperty property : values()) {
      if (property.key.toLowerCase(Locale.ROOT).equals(key.toLowerCase(Locale.ROOT))) {
        return property;
      }
    }
    return null;
  }

  DriverPropertyInfo info(Properties given) {
    DriverPropertyInfo info = new DriverPropertyInfo(key, given.getProperty(key, defaultValue));
    info.description = description + " (" + type.name().toLowerCase(Locale.ROOT) + ", default '" + defaultValue + "')";
    info.required = false;
    if (this == TRANSPORT) {
      info.choices = new String[] {"", "rdma", "shm", "cma", "tcp", "ipc"};
    } else if (type == Type.BOOLEAN) {
      info.choices = new String[] {"true", "false"};
    }
    return info;
  }
}
