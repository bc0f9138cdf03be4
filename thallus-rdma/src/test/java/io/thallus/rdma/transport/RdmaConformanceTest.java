package io.thallus.rdma.transport;

import io.thallus.conformance.TransportConformanceSuite;

import org.junit.jupiter.api.Tag;

/** The conformance suite over rdma: runs where a device is (inside the Soft-RoCE guest, through RxeGuestTest). */
@Tag("rdma-device")
class RdmaConformanceTest extends TransportConformanceSuite {
  @Override
  protected String transport() {
    return "rdma";
  }

  /**
   * The copies the client has not read yet lie in the connection's registered pool, which counts in its budget: one
   * per credit at most, each in a power-of-two buffer under twice its size (a batch exposed in place is the stream's
   * own memory, counted already).
   */
  @Override
  protected long placedAllowance(long batchBytes) {
    return 2 * 2 * batchBytes;
  }
}
