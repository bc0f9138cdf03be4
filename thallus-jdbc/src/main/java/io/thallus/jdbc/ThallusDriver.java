package io.thallus.jdbc;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.logging.Logger;

/**
 * The JDBC driver for {@code jdbc:thallus://host:port[/dataset][?property=value&...]}; see {@link ThallusProperty}
 * for the properties. Registered with {@link DriverManager} when loaded, and found through
 * {@code META-INF/services/java.sql.Driver}.
 */
public final class ThallusDriver implements Driver {
  static final String NAME = "Thallus JDBC";
  static final String VERSION = "0.1.0";
  static final int MAJOR_VERSION = 0;
  static final int MINOR_VERSION = 1;

  static {
    try {
      DriverManager.registerDriver(new ThallusDriver());
    } catch (SQLException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Returns {@code null} for a URL that is not Thallus's, as {@link DriverManager} expects. */
  @Override
  public Connection connect(String url, Properties info) throws SQLException {
    if (!acceptsURL(url)) {
      return null;
    }
    return ThallusConnection.open(JdbcUrl.parse(url, info));
  }

  @Override
  public boolean acceptsURL(String url) {
    return JdbcUrl.accepts(url);
  }

  @Override
  public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
    Properties given = info == null ? new Properties() : info;
    ThallusProperty[] properties = ThallusProperty.values();
    DriverPropertyInfo[] infos = new DriverPropertyInfo[properties.length];
    for (int i = 0; i < properties.length; i++) {
      infos[i] = properties[i].info(given);
    }
    return infos;
  }

  @Override
  public int getMajorVersion() {
    return MAJOR_VERSION;
  }

  @Override
  public int getMinorVersion() {
    return MINOR_VERSION;
  }

  /** Not compliant in the strict sense: no transactions, and forward-only, read-only result sets. */
  @Override
  public boolean jdbcCompliant() {
    return false;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("the Thallus driver logs through SLF4J, not java.util.logging");
  }
}
