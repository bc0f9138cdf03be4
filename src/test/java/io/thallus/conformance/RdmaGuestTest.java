package io.thallus.conformance;

import io.thallus.rdma.testing.SoftRoceGuest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs the rdma conformance suite and the rdma failure tests on rxe0 inside the Soft-RoCE guest. */
@Timeout(value = 50, unit = TimeUnit.MINUTES)
class RdmaGuestTest {
  @Test
  void theRdmaTransportPassesTheConformanceSuiteOnSoftRoce() throws Exception {
    SoftRoceGuest.runTaggedTests("io.thallus.conformance", "io.thallus.e2e");
  }
}
