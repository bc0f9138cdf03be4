package io.thallus.jdbc;

import io.thallus.ClientOptions;
import io.thallus.ThallusException;
import io.thallus.Tls;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/** The client options a JDBC URL's properties ask for: batch size, credits, timeouts, credentials and TLS. */
final class UrlClientOptions {
  private UrlClientOptions() {}

  static ClientOptions of(JdbcUrl url) throws SQLException {
    ClientOptions.Builder options = ClientOptions.builder()
        .clientName("thallus-jdbc")
        .batchRows(url.integer(ThallusProperty.BATCH_ROWS))
        .credits(url.integer(ThallusProperty.CREDITS))
        .connectTimeout(Duration.ofSeconds(url.integer(ThallusProperty.CONNECT_TIMEOUT)))
        .timeout(Duration.ofSeconds(url.integer(ThallusProperty.TIMEOUT)))
        .receivePoolBytes((long) url.integer(ThallusProperty.RECEIVE_POOL_MB) << 20);
    for (ThallusProperty credential : List.of(ThallusProperty.USER, ThallusProperty.PASSWORD, ThallusProperty.TOKEN)) {
      String value = url.string(credential);
      if (!value.isEmpty()) {
        options.credential(credential.key(), value);
      }
    }
    if (url.bool(ThallusProperty.TLS)) {
      String trust = url.string(ThallusProperty.TLS_TRUST);
      try {
        Tls tls = trust.isEmpty() ? Tls.client() : Tls.client(Path.of(trust));
        options.tls(url.bool(ThallusProperty.TLS_VERIFY_HOSTNAME) ? tls : tls.withoutHostnameVerification());
      } catch (ThallusException e) {
        throw Errors.from(e);
      }
    }
    return options.build();
  }
}
