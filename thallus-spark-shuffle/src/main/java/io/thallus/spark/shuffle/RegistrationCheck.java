package io.thallus.spark.shuffle;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.SparkEnv;
import org.apache.spark.storage.BlockManagerId;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Whether the driver believes an executor's registration with the {@link ExchangeDirectory}. The executor id must be
 * one whose block manager Spark's {@code BlockManagerMaster} knows now, on the host the registration names: an
 * executor registers its block manager once the driver's scheduler backend has taken the executor, Spark drops it
 * when the executor is lost, and an executor registers its endpoint only after its block manager's registration
 * returned, so a live executor is never refused for being early.
 *
 * <p>Where the registration came from is not a reason to refuse it, only to warn: an executor's RpcEnv is a client,
 * so the driver sees the source address its routing picked, which differs from the executor's host on multi-homed
 * workers, behind a Kubernetes sidecar (127.0.0.6) or a NAT. With {@code spark.authenticate} on, Spark's RPC is
 * already authenticated; with it off, anyone may register a block manager too. The endpoint's port cannot be checked
 * here; the endpoints themselves ask for the application's secret when {@code spark.authenticate} is on.
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

  /**
   * Over the driver's {@code BlockManagerMaster}: one ask to its endpoint per check, for every block manager's memory
   * status, since Spark 4.2's master has no ask for one executor's host (its {@code getExecutorEndpointRef} gives an
   * endpoint of a client RpcEnv, with no host). A registration comes once per executor.
   */
  static RegistrationCheck of(SparkEnv driver) {
    return new RegistrationCheck(() -> {
      Map<String, String> hosts = new HashMap<>();
      var master = driver.blockManager().master();
      for (BlockManagerId id : CollectionConverters.asJava(master.getMemoryStatus().keySet())) {
        if (!id.isDriver()) {
          hosts.put(id.executorId(), id.host());
        }
      }
      return hosts;
    });
  }

  /** Why the registration of {@code claimed} is refused; empty if it is believed. */
  Optional<String> refusal(ExecutorEndpoint claimed) {
    String executor = "executor " + claimed.executorId();
    String host = known.hosts().get(claimed.executorId());
    if (host == null) {
      return Optional.of(executor + " is not one the driver knows as alive (no block manager of that id)");
    }
    if (!host.equals(claimed.host())) {
      return Optional.of(executor + " runs on " + host + " (its block manager's host), not on " + claimed.host());
    }
    return Optional.empty();
  }

  /**
   * What the driver logs, taking the registration all the same, where {@code claimed} was sent from {@code
   * senderHost} ({@code null} where Spark's RPC does not say) and that is plainly not its host: both are literal
   * addresses (no name is looked up), they differ, and the sender is not this machine's loopback with the host an
   * address of this machine (an executor beside the driver may connect over loopback).
   */
  Optional<String> senderWarning(ExecutorEndpoint claimed, String senderHost) {
    if (senderHost == null) {
      return Optional.empty();
    }
    Optional<InetAddress> from = literal(senderHost);
    Optional<InetAddress> host = literal(claimed.host());
    if (from.isEmpty() || host.isEmpty() || from.get().equals(host.get())
        || from.get().isLoopbackAddress() && isThisMachine(host.get())) {
      return Optional.empty();
    }
    return Optional.of("executor " + claimed.executorId() + "'s registration came from " + senderHost
        + ", not from its host " + claimed.host() + " (taken: a multi-homed worker, a sidecar or a NAT gives another"
        + " source address)");
  }

  private static Optional<InetAddress> literal(String host) {
    try {
      return Optional.of(InetAddress.ofLiteral(host));
    } catch (IllegalArgumentException notAnAddress) {
      return Optional.empty();
    }
  }

  private static boolean isThisMachine(InetAddress address) {
    try {
      return address.isLoopbackAddress() || NetworkInterface.getByInetAddress(address) != null;
    } catch (SocketException e) {
      return false;
    }
  }
}
