package io.thallus.spark.shuffle;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.SparkEnv;
import org.apache.spark.storage.BlockManagerId;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Whether the driver believes an executor's registration with the {@link ExchangeDirectory}. The executor id must be
 * one whose block manager Spark's {@code BlockManagerMaster} knows now, and on the host the registration names:
 * an executor registers its block manager once the driver's scheduler backend has taken the executor, Spark drops
 * it when the executor is lost, and an executor registers its endpoint only after its block manager's registration
 * returned, so a live executor is never refused for being early. And the host must be the one the registration came from where
 * Spark's RPC says so: an executor's RpcEnv is a client, so the driver sees the address its connection comes from.
 * The endpoint's port cannot be checked here; the endpoints themselves ask for the application's secret when
 * {@code spark.authenticate} is on.
 */
final class RegistrationCheck {
  /** The host of each executor whose block manager the driver knows now, by executor id (never the driver). */
  interface KnownExecutors {
    Map<String, String> hosts();
  }

  private final KnownExecutors known;

  RegistrationCheck(KnownExecutors known) {
    this.known = known;
  }

  /** Over the driver's {@code BlockManagerMaster} (one ask to its endpoint per check). */
  static RegistrationCheck of(SparkEnv driver) {
    return new RegistrationCheck(() -> {
      Map<String, String> hosts = new HashMap<>();
      for (BlockManagerId id : CollectionConverters.asJava(driver.blockManager().master().getMemoryStatus().keySet())) {
        if (!id.isDriver()) {
          hosts.put(id.executorId(), id.host());
        }
      }
      return hosts;
    });
  }

  /**
   * Why the registration of {@code claimed}, sent from {@code senderHost} ({@code null} where Spark does not say),
   * is refused; empty if it is believed.
   */
  Optional<String> refusal(ExecutorEndpoint claimed, String senderHost) {
    String executor = "executor " + claimed.executorId();
    String host = known.hosts().get(claimed.executorId());
    if (host == null) {
      return Optional.of(executor + " is not one the driver knows as alive (no block manager of that id)");
    }
    if (!host.equals(claimed.host())) {
      return Optional.of(executor + " runs on " + host + " (its block manager's host), not on " + claimed.host());
    }
    if (senderHost != null && !sameHost(senderHost, claimed.host())) {
      return Optional.of(executor + "'s registration came from " + senderHost + ", not from its host "
          + claimed.host());
    }
    return Optional.empty();
  }

  /**
   * Whether a connection from {@code sender} (as Spark's RPC gives it: an address, or a name) can come from
   * {@code host}: the same text, or {@code host} resolves to the sender's address, or the sender is this machine's
   * loopback and {@code host} is an address of this machine (an executor beside the driver may connect over it).
   */
  private static boolean sameHost(String sender, String host) {
    if (sender.equalsIgnoreCase(host)) {
      return true;
    }
    try {
      InetAddress from = InetAddress.getByName(sender);
      for (InetAddress address : InetAddress.getAllByName(host)) {
        if (address.equals(from) || from.isLoopbackAddress() && isThisMachine(address)) {
          return true;
        }
      }
      return false;
    } catch (UnknownHostException | SocketException e) {
      return false;
    }
  }

  private static boolean isThisMachine(InetAddress address) throws SocketException {
    return address.isLoopbackAddress() || NetworkInterface.getByInetAddress(address) != null;
  }
}
