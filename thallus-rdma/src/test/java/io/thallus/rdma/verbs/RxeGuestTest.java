package io.thallus.rdma.verbs;

import io.thallus.rdma.testing.SoftRoceGuest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The verbs binding's device tests and the rdma transport's conformance suite, on rxe0 inside the Soft-RoCE guest. */
@Timeout(value = 50, unit = TimeUnit.MINUTES)
class RxeGuestTest {
  @Test
  void verbsTestsPassOnSoftRoceInTheGuest() throws Exception {
    SoftRoceGuest.runTaggedTests("io.thallus.rdma");
  }
}
