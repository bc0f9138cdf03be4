package io.thallus.e2e;

import io.thallus.rdma.testing.SoftRoceGuest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The rdma conformance suite across two hosts: two Soft-RoCE guests on a private link, one serving with
 * {@code thallus serve}, the other running RdmaConformanceTest against it (harness/rdma-conformance-2hosts.sh). Lives
 * here, not in thallus-rdma, because the server is the CLI's. About two minutes once the guests' kernel is built.
 */
@Timeout(value = 50, unit = TimeUnit.MINUTES)
class RdmaTwoHostsTest {
  @Test
  void theRdmaConformanceSuitePassesAgainstAServerOnAnotherHost() throws Exception {
    SoftRoceGuest.runConformanceAcrossTwoHosts();
  }
}
