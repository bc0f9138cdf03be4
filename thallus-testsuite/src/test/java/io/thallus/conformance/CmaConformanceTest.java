package io.thallus.conformance;

/** The conformance suite over cross-memory attach. */
class CmaConformanceTest extends TransportConformanceSuite {
  @Override
  protected String transport() {
    return "cma";
  }
}
