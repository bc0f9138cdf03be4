package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The driver's check of an executor's registration with the exchange directory, given what the block manager master
 * knows (executor id → host): unknown executors, another host than the executor's, and a registration sent from
 * elsewhere are refused with a reason; the executor's own registration is taken. The refusal over Spark's RPC, in a
 * cluster, is in {@link ExchangePushTest}.
 */
class RegistrationCheckTest {
  private final RegistrationCheck check = new RegistrationCheck(
      () -> Map.of("0", "127.0.0.1", "1", "127.0.0.1", "2", "localhost"));

  @Test
  void anExecutorTheDriverDoesNotKnowIsRefused() {
    assertThat(check.refusal(new ExecutorEndpoint("7", "127.0.0.1", 4242), "127.0.0.1"))
        .contains("executor 7 is not one the driver knows as alive (no block manager of that id)");
  }

  @Test
  void aHostOtherThanTheExecutorsIsRefused() {
    assertThat(check.refusal(new ExecutorEndpoint("0", "127.0.0.2", 4242), "127.0.0.2"))
        .contains("executor 0 runs on 127.0.0.1 (its block manager's host), not on 127.0.0.2");
  }

  @Test
  void aRegistrationSentFromAnotherHostIsRefused() {
    assertThat(check.refusal(new ExecutorEndpoint("1", "127.0.0.1", 4242), "192.0.2.77"))
        .contains("executor 1's registration came from 192.0.2.77, not from its host 127.0.0.1");
  }

  @Test
  void theExecutorsOwnRegistrationIsTaken() {
    assertThat(check.refusal(new ExecutorEndpoint("0", "127.0.0.1", 4242), "127.0.0.1")).isEmpty();
    // Where Spark's RPC does not say who sent it, the block manager master's knowledge decides alone.
    assertThat(check.refusal(new ExecutorEndpoint("1", "127.0.0.1", 4242), null)).isEmpty();
    // A host given by name: the connection comes from an address the name resolves to.
    assertThat(check.refusal(new ExecutorEndpoint("2", "localhost", 4242), "127.0.0.1")).isEmpty();
  }
}
