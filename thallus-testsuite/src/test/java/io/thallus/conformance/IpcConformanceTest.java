package io.thallus.conformance;

/** The conformance suite over the ipc baseline. */
class IpcConformanceTest extends TransportConformanceSuite {
  @Override
  protected String transport() {
    return "ipc";
  }
}
