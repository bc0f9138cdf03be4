package io.thallus.rdma.verbs;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;

/** The other process of the two-process test: registers a patterned buffer, prints where it is, and connects. */
public final class ExposingPeerMain {
  private ExposingPeerMain() {}

  static void fill(MemorySegment segment) {
    for (long i = 0; i < segment.byteSize(); i++) {
      segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i % 251));
    }
  }

  public static void main(String[] args) throws Exception {
    int length = 256 * 1024;
    try (Arena arena = Arena.ofShared();
         RdmaDevice device = RdmaDevice.open(VerbsDeviceTest.deviceName());
         ProtectionDomain domain = device.allocateProtectionDomain();
         CompletionQueue completions = device.createCompletionQueue(16);
         QueuePair qp = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1))) {
      MemorySegment buffer = arena.allocate(length, 4096);
      fill(buffer);
      try (MemoryRegion exposed = domain.register(buffer, EnumSet.of(MemoryRegion.Access.REMOTE_READ))) {
        System.out.println("EXPOSED " + qp.endpoint(VerbsDeviceTest.OPTIONS).encode() + " " + buffer.address() + " "
            + exposed.remoteKey() + " " + length);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String peer = in.readLine();
        qp.connect(QueuePair.Endpoint.decode(peer), VerbsDeviceTest.OPTIONS);
        System.out.println("CONNECTED");
        in.readLine(); // until the test closes our input or kills us
      }
    }
  }
}
