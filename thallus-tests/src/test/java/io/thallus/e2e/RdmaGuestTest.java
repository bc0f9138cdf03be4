package io.thallus.e2e;

import io.thallus.rdma.testing.SoftRoceGuest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs the rdma failure tests (a server or client killed mid-stream) on rxe0 inside the Soft-RoCE guest; the rdma
 * conformance suite runs in thallus-rdma's own guest run (RxeGuestTest).
 */
@Timeout(value = 50, unit = TimeUnit.MINUTES)
class RdmaGuestTest {
  @Test
  void rdmaPeersKilledMidStreamLeaveNothingBehindOnSoftRoce() throws Exception {
    SoftRoceGuest.runTaggedTests("io.thallus.e2e");
  }
}
