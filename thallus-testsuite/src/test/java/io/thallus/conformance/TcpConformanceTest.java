package io.thallus.conformance;

/** The conformance suite over tcp. */
class TcpConformanceTest extends TransportConformanceSuite {
  @Override
  protected String transport() {
    return "tcp";
  }
}
