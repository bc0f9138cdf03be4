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
}
