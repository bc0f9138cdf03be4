package io.thallus.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/** A {@link DataSource} for pools and frameworks: a URL plus the {@link ThallusProperty} values to add to it. */
public final class ThallusDataSource implements DataSource {
  private String url;
  private final Properties properties = new Properties();
  private int loginTimeoutSeconds;
  private PrintWriter logWriter;

  public ThallusDataSource() {}

  public ThallusDataSource(String url) {
    this.url = url;
  }

  public void setUrl(String url) {
    this.url = url;
  }

  public String getUrl() {
    return url;
  }

  /** Sets one connection property; see {@link ThallusProperty}. */
  public void setProperty(ThallusProperty property, String value) {
    properties.setProperty(property.key(), value);
  }

  public void setUser(String user) {
    setProperty(ThallusProperty.USER, user);
  }

  public void setPassword(String password) {
    setProperty(ThallusProperty.PASSWORD, password);
  }

  @Override
  public Connection getConnection() throws SQLException {
    if (url == null) {
      throw Errors.invalid("the data source has no URL: call setUrl(\"jdbc:thallus://host:port\")");
    }
    Properties given = new Properties();
    given.putAll(properties);
    if (loginTimeoutSeconds > 0) {
      given.setProperty(ThallusProperty.CONNECT_TIMEOUT.key(), Integer.toString(loginTimeoutSeconds));
    }
    return ThallusConnection.open(JdbcUrl.parse(url, given));
  }

  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    ThallusDataSource copy = new ThallusDataSource(url);
    copy.properties.putAll(properties);
    copy.loginTimeoutSeconds = loginTimeoutSeconds;
    if (user != null) {
      copy.setUser(user);
    }
    if (password != null) {
      copy.setPassword(password);
    }
    return copy.getConnection();
  }

  @Override
  public PrintWriter getLogWriter() {
    return logWriter;
  }

  @Override
  public void setLogWriter(PrintWriter out) {
    this.logWriter = out;
  }

  @Override
  public void setLoginTimeout(int seconds) {
    this.loginTimeoutSeconds = Math.max(0, seconds);
  }

  @Override
  public int getLoginTimeout() {
    return loginTimeoutSeconds;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("the Thallus driver logs through SLF4J, not java.util.logging");
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    throw Errors.invalid("not a " + type.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return type.isInstance(this);
  }
}
