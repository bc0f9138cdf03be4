package io.thallus.conformance;

/** The conformance suite over shared memory. */
class ShmConformanceTest extends TransportConformanceSuite {
  @Override
  protected String transport() {
    return "shm";
  }
}
