package io.thallus.rdma.push;

import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.spi.Deadline;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;

/**
 * The other process of the cross-process push test: a sender that prints its endpoint, takes the receiver's endpoint
 * and ring, and pushes {@code COUNT} patterned messages ({@link PushChannelDeviceTest#pattern}) of the given lengths.
 */
public final class PushingPeerMain {
  private PushingPeerMain() {}

  /** Message {@code i}'s length. */
  static int length(int i) {
    return 1 + (i * 7_919) % 50_000;
  }

  public static void main(String[] args) throws Exception {
    int count = Integer.parseInt(args[0]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (Arena arena = Arena.ofShared();
         RdmaDevice device = RdmaDevice.open(RdmaDevice.deviceNames().contains("rxe0") ? "rxe0"
             : RdmaDevice.deviceNames().getFirst());
         ProtectionDomain domain = device.allocateProtectionDomain();
         PushSender sender = PushSender.create(domain, 8)) {
      MemorySegment source = arena.allocate(64 * 1024, 4096);
      try (MemoryRegion region = domain.register(source, EnumSet.noneOf(MemoryRegion.Access.class))) {
        System.out.println("SENDER " + sender.endpoint(PushChannelDeviceTest.OPTIONS).encode());
        String[] ring = in.readLine().split(" ");
        sender.connect(QueuePair.Endpoint.decode(ring[1]), PushChannelDeviceTest.OPTIONS, PushRing.decode(ring[2]));
        Deadline deadline = Deadline.after(Duration.ofMinutes(2));
        for (int i = 0; i < count; i++) {
          MemorySegment message = source.asSlice(0, length(i));
          PushChannelDeviceTest.pattern(message, i);
          // One source buffer: each message is written before the next one overwrites it.
          sender.awaitWritten(sender.push(message.address(), region.localKey(), length(i), deadline), deadline);
        }
        System.out.println("PUSHED " + sender.pushed());
        in.readLine(); // until the test closes our input or kills us
      }
    }
  }
}
