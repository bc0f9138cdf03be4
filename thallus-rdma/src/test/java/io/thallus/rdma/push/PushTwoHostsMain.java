package io.thallus.rdma.push;

import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;

/**
 * One end of a push channel between two hosts (harness/push-2hosts.sh runs it in two Soft-RoCE guests): the ends meet
 * through files in a shared folder. {@code receiver DIR COUNT} registers a ring, writes its endpoint and ring, waits
 * for the sender's endpoint, connects, says it is ready, and takes {@code COUNT} messages, checking every byte;
 * {@code sender DIR COUNT} writes its endpoint, waits for the receiver's, connects when the receiver is ready, and
 * pushes the messages ({@link PushChannelDeviceTest#pattern}, lengths from {@link PushingPeerMain#length}). Exit
 * status 0 when every message arrived whole and in order.
 */
public final class PushTwoHostsMain {
  private PushTwoHostsMain() {}

  public static void main(String[] args) throws Exception {
    boolean receiving = args[0].equals("receiver");
    Path meet = Path.of(args[1]);
    int count = Integer.parseInt(args[2]);
    Deadline deadline = Deadline.after(Duration.ofMinutes(5));
    try (Arena arena = Arena.ofShared();
         RdmaDevice device = RdmaDevice.open(RdmaDevice.deviceNames().contains("rxe0") ? "rxe0"
             : RdmaDevice.deviceNames().getFirst());
         ProtectionDomain domain = device.allocateProtectionDomain()) {
      QueuePair.ConnectOptions options = QueuePair.ConnectOptions.forDevice(device, 16);
      if (receiving) {
        receive(domain, options, meet, count, deadline);
      } else {
        send(domain, options, arena, meet, count, deadline);
      }
    }
  }

  private static void receive(ProtectionDomain domain, QueuePair.ConnectOptions options, Path meet, int count,
      Deadline deadline) throws Exception {
    try (PushReceiver receiver = PushReceiver.create(domain, 256 * 1024, 16)) {
      publish(meet, "receiver", receiver.endpoint(options).encode() + " " + receiver.ring().encode());
      receiver.connect(QueuePair.Endpoint.decode(await(meet, "sender", deadline)), options);
      publish(meet, "ready", "ready");
      long start = System.nanoTime();
      long bytes = 0;
      for (int i = 0; i < count; i++) {
        PushReceiver.Message message = receiver.await(deadline);
        MemorySegment expected = Arena.ofAuto().allocate(PushingPeerMain.length(i));
        PushChannelDeviceTest.pattern(expected, i);
        if (message.sequence() != i || message.bytes().mismatch(expected) != -1) {
          throw new IllegalStateException("message " + i + " arrived wrong: sequence " + message.sequence()
              + ", " + message.length() + " bytes");
        }
        bytes += message.length();
        receiver.release(message);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf(Locale.ROOT, "receiver: %d messages, %d bytes, every byte as pushed, in %.2f s (%.0f msg/s)%n",
          count, bytes, seconds, count / seconds);
    }
  }

  private static void send(ProtectionDomain domain, QueuePair.ConnectOptions options, Arena arena, Path meet,
      int count, Deadline deadline) throws Exception {
    MemorySegment source = arena.allocate(16 * 64 * 1024, 4096);
    try (PushSender sender = PushSender.create(domain, 16);
         MemoryRegion region = domain.register(source, EnumSet.noneOf(MemoryRegion.Access.class))) {
      publish(meet, "sender", sender.endpoint(options).encode());
      String[] receiver = await(meet, "receiver", deadline).split(" ");
      sender.connect(QueuePair.Endpoint.decode(receiver[0]), options, PushRing.decode(receiver[1]));
      await(meet, "ready", deadline);
      long[] tickets = new long[16];
      int waits = 0;
      for (int i = 0; i < count; i++) {
        int slot = i % 16;
        if (tickets[slot] > 0) {
          sender.awaitWritten(tickets[slot], deadline); // the slot's previous message is out
        }
        MemorySegment message = source.asSlice(slot * 64 * 1024L, PushingPeerMain.length(i));
        PushChannelDeviceTest.pattern(message, i);
        long ticket = sender.tryPush(message.address(), region.localKey(), (int) message.byteSize());
        if (ticket < 0) {
          waits++;
          ticket = sender.push(message.address(), region.localKey(), (int) message.byteSize(), deadline);
        }
        tickets[slot] = ticket;
      }
      sender.awaitWritten(tickets[(count - 1) % 16], deadline);
      System.out.printf(Locale.ROOT, "sender: %d messages pushed, %d of them waited for credit%n", count, waits);
    }
  }

  private static void publish(Path meet, String name, String text) throws Exception {
    Path temporary = meet.resolve(name + ".tmp");
    Files.writeString(temporary, text);
    Files.move(temporary, meet.resolve(name), StandardCopyOption.ATOMIC_MOVE);
  }

  /** The other end's file, polled (the folder is shared between two kernels: no file events cross it). */
  private static String await(Path meet, String name, Deadline deadline) throws Exception {
    Path file = meet.resolve(name);
    while (!Files.exists(file)) {
      if (deadline.isExpired()) {
        throw deadline.expired("the other end's " + name);
      }
      Thread.sleep(50);
    }
    return Files.readString(file).strip();
  }
}
