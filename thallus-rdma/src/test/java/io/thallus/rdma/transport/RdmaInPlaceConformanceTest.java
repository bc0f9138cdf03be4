package io.thallus.rdma.transport;

import io.thallus.conformance.TransportConformanceSuite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The conformance suite over rdma with every out-of-line body exposed where it lies (registered in place, a READ per
 * buffer) instead of copied into the server's pool, which by default only batches of 16 MiB and more are: every type,
 * dictionaries, credits, cancels and departures through the in-place path. Batches with more buffers than a client
 * reads per batch (256: the 200-column test) still go the copy's way. Runs inside the Soft-RoCE guest, through
 * RxeGuestTest. Against a server on another host the threshold is that server's own:
 * harness/rdma-conformance-2hosts.sh starts one with it at 0 and runs RdmaConformanceTest there.
 */
@Tag("rdma-device")
class RdmaInPlaceConformanceTest extends TransportConformanceSuite {
  @BeforeAll
  static void exposeEveryBodyInPlace() {
    Assumptions.assumeTrue(System.getProperty("thallus.conformance.server") == null,
        "a remote server's threshold is set where it runs (-Dthallus.rdma.inPlaceBytes=0 on its command line)");
    System.setProperty(RdmaTransport.IN_PLACE_BYTES_PROPERTY, "0");
  }

  @AfterAll
  static void backToTheDefault() {
    System.clearProperty(RdmaTransport.IN_PLACE_BYTES_PROPERTY);
  }

  @Override
  protected String transport() {
    return "rdma";
  }
}
