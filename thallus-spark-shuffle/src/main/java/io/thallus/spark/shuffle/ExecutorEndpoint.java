package io.thallus.spark.shuffle;

import io.thallus.exchange.EndpointAddress;
import java.io.Serializable;

/**
 * One executor's exchange endpoint, as the executor registers it with the driver's {@link ExchangeDirectory}: its
 * Spark executor id, its host and the endpoint's port.
 */
record ExecutorEndpoint(String executorId, String host, int port) implements Serializable {
  ExecutorEndpoint {
    if (executorId == null || executorId.isBlank()) {
      throw new IllegalArgumentException("an executor endpoint needs an executor id");
    }
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException("executor " + executorId + "'s endpoint needs a host");
    }
    if (port < 1 || port > 65_535) {
      throw new IllegalArgumentException("executor " + executorId + "'s endpoint port " + port + " is not 1 to 65535");
    }
  }

  EndpointAddress address() {
    return new EndpointAddress(host, port);
  }

  /** Spark's form of a preferred location on this very executor ({@code ExecutorCacheTaskLocation}). */
  String taskLocation() {
    return "executor_" + host + "_" + executorId;
  }
}
