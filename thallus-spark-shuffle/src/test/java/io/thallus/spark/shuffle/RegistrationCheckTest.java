package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The driver's check of an executor's registration with the exchange directory, given what the block manager master
 * knows (executor id → host): unknown executors and another host than the executor's are refused with a reason; a
 * registration sent from another address than the executor's host (a multi-homed worker, a sidecar, a NAT) is taken,
 * with a warning where both are literal addresses, and no name is looked up. The refusal over Spark's RPC, in a
 * cluster, is in {@link ExchangePushTest}.
 */
class RegistrationCheckTest {
  private final RegistrationCheck check = new RegistrationCheck(() -> Map.of("0", "127.0.0.1", "1", "10.1.2.3",
      "2", "localhost", "3", "no-such-worker.invalid"));

  @Test
  void anExecutorTheDriverDoesNotKnowIsRefused() {
    assertThat(check.refusal(new ExecutorEndpoint("7", "127.0.0.1", 4242)))
        .contains("executor 7 is not one the driver knows as alive (no block manager of that id)");
  }

  @Test
  void aHostOtherThanTheExecutorsIsRefused() {
    assertThat(check.refusal(new ExecutorEndpoint("0", "127.0.0.2", 4242)))
        .contains("executor 0 runs on 127.0.0.1 (its block manager's host), not on 127.0.0.2");
  }

  @Test
  void aRegistrationSentFromAnotherAddressIsTakenWithAWarning() {
    ExecutorEndpoint endpoint = new ExecutorEndpoint("1", "10.1.2.3", 4242);
    assertThat(check.refusal(endpoint)).isEmpty();
    assertThat(check.senderWarning(endpoint, "192.0.2.77")).hasValueSatisfying(warning -> assertThat(warning)
        .startsWith("executor 1's registration came from 192.0.2.77, not from its host 10.1.2.3 (taken"));
    // A Kubernetes pod's sidecar proxies the executor's connection from 127.0.0.6.
    assertThat(check.senderWarning(endpoint, "127.0.0.6")).isPresent();
  }

  @Test
  void hostNamesAreNeitherLookedUpNorRefused() {
    // An unresolvable worker name: the old check's lookup failed, and the executor was refused.
    ExecutorEndpoint unresolvable = new ExecutorEndpoint("3", "no-such-worker.invalid", 4242);
    assertThat(check.refusal(unresolvable)).isEmpty();
    assertThat(check.senderWarning(unresolvable, "192.0.2.77")).isEmpty();
    ExecutorEndpoint named = new ExecutorEndpoint("2", "localhost", 4242);
    assertThat(check.refusal(named)).isEmpty();
    assertThat(check.senderWarning(named, "127.0.0.1")).isEmpty();
  }

  @Test
  void theExecutorsOwnRegistrationIsTakenWithoutAWarning() {
    ExecutorEndpoint endpoint = new ExecutorEndpoint("0", "127.0.0.1", 4242);
    assertThat(check.refusal(endpoint)).isEmpty();
    assertThat(check.senderWarning(endpoint, "127.0.0.1")).isEmpty();
    // Where Spark's RPC does not say who sent it, nothing is warned of.
    assertThat(check.senderWarning(new ExecutorEndpoint("1", "10.1.2.3", 4242), null)).isEmpty();
  }
}
