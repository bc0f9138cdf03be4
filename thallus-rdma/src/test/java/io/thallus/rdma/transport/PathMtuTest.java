package io.thallus.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The path MTU comes from the device and the peer, not a constant: on rxe the port's active MTU follows its netdev's
 * (1500 bytes of Ethernet: 1024; 9000: 4096), each side says its own at the handshake, and both connect at the
 * smaller. Runs in the Soft-RoCE guest, where it may change the guest's own netdev (rxenet0, see harness/rxe-vm.sh).
 */
@Tag("rdma-device")
class PathMtuTest {
  private static final String NETDEV = "rxenet0";

  private static void netdevMtu(int bytes) throws IOException, InterruptedException {
    Process ip = new ProcessBuilder("ip", "link", "set", "dev", NETDEV, "mtu", Integer.toString(bytes))
        .redirectErrorStream(true).start();
    String output = new String(ip.getInputStream().readAllBytes());
    assertThat(ip.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(ip.exitValue()).as("ip link set mtu: " + output).isZero();
  }

  /** Waits (10 s at most) for rxe to take the netdev's new MTU into its port. */
  private static int activeMtu(RdmaDevice device, int expectedCode) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    int code = device.port(1).activeMtu();
    while (code != expectedCode && System.nanoTime() < deadline) {
      Thread.sleep(50);
      code = device.port(1).activeMtu();
    }
    return code;
  }

  @AfterEach
  void standardEthernet() throws Exception {
    netdevMtu(1500);
  }

  /** Two queue pairs on the device connected as the transport connects them; the path MTU the device reports. */
  private static int connectedMtu(RdmaDevice device, Map<String, String> peer) {
    try (ProtectionDomain domain = device.allocateProtectionDomain();
         CompletionQueue completions = device.createCompletionQueue(4)) {
      QueuePair.ConnectOptions options = QueuePair.ConnectOptions.forDevice(device, 1);
      int agreed = RdmaTransport.agreedMtu(RdmaTransport.localMtu(options), peer);
      try (QueuePair a = domain.createQueuePair(completions, new QueuePair.Capacity(2, 1));
           QueuePair b = domain.createQueuePair(completions, new QueuePair.Capacity(2, 1))) {
        a.connect(b.endpoint(options), options.withMtu(agreed));
        b.connect(a.endpoint(options), options.withMtu(agreed));
        assertThat(b.pathMtuBytes()).isEqualTo(a.pathMtuBytes());
        return a.pathMtuBytes();
      }
    }
  }

  @Test
  void connectsAt4096WhereTheLinkAllowsAndAt1024WhereItDoesNot() throws Exception {
    try (RdmaDevice device = RdmaDevice.open(RdmaTransport.deviceName())) {
      netdevMtu(9000);
      assertThat(activeMtu(device, 5)).as("rxe's active MTU under a 9000-byte netdev").isEqualTo(5);
      assertThat(connectedMtu(device, Map.of(RdmaTransport.MTU, "4096"))).isEqualTo(4096);
      assertThat(connectedMtu(device, Map.of(RdmaTransport.MTU, "2048"))).as("a peer that can do less").isEqualTo(2048);
      assertThat(connectedMtu(device, Map.of())).as("a peer that does not say (1024 before)").isEqualTo(1024);
      String before = System.setProperty(RdmaTransport.MTU_PROPERTY, "1024");
      try {
        assertThat(connectedMtu(device, Map.of(RdmaTransport.MTU, "4096"))).as("the operator's cap").isEqualTo(1024);
        System.setProperty(RdmaTransport.MTU_PROPERTY, "1000");
        assertThatThrownBy(() -> connectedMtu(device, Map.of())).isInstanceOf(ThallusException.class)
            .hasMessageContaining(RdmaTransport.MTU_PROPERTY).hasMessageContaining("1000");
      } finally {
        System.clearProperty(RdmaTransport.MTU_PROPERTY);
      }

      netdevMtu(1500);
      assertThat(activeMtu(device, 3)).as("rxe's active MTU under standard Ethernet").isEqualTo(3);
      assertThat(connectedMtu(device, Map.of(RdmaTransport.MTU, "4096"))).isEqualTo(1024);
    }
  }

  @Test
  void theGidIsRoceV2OverTheInterfacesIpv4Address() {
    try (RdmaDevice device = RdmaDevice.open(RdmaTransport.deviceName())) {
      int index = device.roceGidIndex(1);
      byte[] gid = device.gid(1, index);
      // ::ffff:a.b.c.d, the address the harness gives rxenet0.
      assertThat(java.util.Arrays.copyOfRange(gid, 0, 12)).containsExactly(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1);
    }
  }

  @Test
  void theTransportMovesTheSameRowsAt4096() throws Exception {
    netdevMtu(9000);
    try (RdmaDevice device = RdmaDevice.open(RdmaTransport.deviceName())) {
      // Before the server starts: it reads its port's MTU once.
      assertThat(activeMtu(device, 5)).isEqualTo(5);
    }
    String sql = "SELECT i, i * 3 AS triple, repeat('x', (i % 97)::INTEGER) AS text FROM range(200000) t(i) ORDER BY i";
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .transports(List.of("rdma")).build().start()) {
      try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport("rdma"));
           ThallusStream stream = client.query(sql)) {
        assertThat(stream.transport()).isEqualTo("rdma");
        assertThat(Collected.fromIterator(stream).rows()).isEqualTo(DuckDBReference.run(sql, 65536).rows());
      }
    }
  }
}
