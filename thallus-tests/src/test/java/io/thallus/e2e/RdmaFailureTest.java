package io.thallus.e2e;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Peers killed mid-read (and a client mid-ingest) over rdma: runs where a device is (inside the Soft-RoCE guest, through RdmaGuestTest). */
@Tag("rdma-device")
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RdmaFailureTest {
  @Test
  void aClientKilledMidReadLeavesNothingOnTheServer() throws Exception {
    SameHostTest.clientKilledWhileHoldingBatches("rdma");
  }

  @Test
  void aServerKilledMidReadGivesTheClientAnErrorAndLeavesItsBatchesReadable() throws Exception {
    SameHostTest.serverKilledMidStream("rdma");
  }

  @Test
  void aClientKilledMidIngestLeavesTheTableAsItWas() throws Exception {
    IngestTest.clientKilledMidIngest("rdma");
  }
}
