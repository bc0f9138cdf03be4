package io.thallus.conformance;

/** The conformance suite over shared memory. */
class ShmConformanceTest extends TransportConformanceSuite {
  @Override
  protected String transport() {
    return "shm";
  }

  /**
   * The bodies the client has not released lie in the connection's segments, which count in its budget and grow by
   * doubling from 1 MiB: two bodies of 520 KiB take a 1 MiB segment and a 2 MiB one.
   */
  @Override
  protected long placedAllowance(long batchBytes) {
    return 6 * batchBytes;
  }
}
