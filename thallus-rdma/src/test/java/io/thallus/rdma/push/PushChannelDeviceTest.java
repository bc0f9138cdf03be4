package io.thallus.rdma.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A push channel on a real device (the Soft-RoCE guest runs it through {@code RxeGuestTest}): messages written with
 * immediate into the receiver's ring, credit returned with SENDs, and a broken channel reported by name.
 */
@Tag("rdma-device")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PushChannelDeviceTest {
  /** rxe's RoCE v2 GID (index 1) at 1024 bytes, as the verbs tests connect. */
  static final QueuePair.ConnectOptions OPTIONS = new QueuePair.ConnectOptions(1, 1, 3, 16, 14, 7);
  private static final Duration WAIT = Duration.ofSeconds(30);

  private RdmaDevice device;
  private ProtectionDomain domain;
  private final Arena arena = Arena.ofShared();
  private MemorySegment source;
  private MemoryRegion sourceRegion;

  @BeforeEach
  void open() {
    java.util.List<String> names = RdmaDevice.deviceNames();
    assertThat(names).as("RDMA devices").isNotEmpty();
    device = RdmaDevice.open(names.contains("rxe0") ? "rxe0" : names.getFirst());
    domain = device.allocateProtectionDomain();
    source = arena.allocate(1 << 20, 4096);
    sourceRegion = domain.register(source, EnumSet.noneOf(MemoryRegion.Access.class));
  }

  @AfterEach
  void close() {
    sourceRegion.close();
    domain.close();
    device.close();
    arena.close();
  }

  private static void connect(PushSender sender, PushReceiver receiver, PushRing advertised) {
    sender.connect(receiver.endpoint(OPTIONS), OPTIONS, PushRing.decode(advertised.encode()));
    receiver.connect(sender.endpoint(OPTIONS), OPTIONS);
  }

  /** Message {@code sequence}'s bytes: a pattern of its own, so a message in the wrong place shows. */
  static void pattern(MemorySegment into, long sequence) {
    for (long i = 0; i < into.byteSize(); i++) {
      into.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + sequence * 31 + 1));
    }
  }

  private static void assertMessage(PushReceiver.Message message, long sequence, int length) {
    assertThat(message.sequence()).isEqualTo(sequence);
    assertThat(message.length()).isEqualTo(length);
    MemorySegment expected = Arena.ofAuto().allocate(Math.max(1, length)).asSlice(0, length);
    pattern(expected, sequence);
    assertThat(message.bytes().mismatch(expected)).as("message %d's bytes", sequence).isEqualTo(-1);
  }

  /** Pushes message {@code sequence} of {@code length} bytes from the start of the source buffer, if credit allows. */
  private long tryPush(PushSender sender, long sequence, int length) {
    pattern(source.asSlice(0, length), sequence);
    long ticket = sender.tryPush(source.address(), sourceRegion.localKey(), length);
    if (ticket > 0) {
      sender.awaitWritten(ticket, Deadline.after(WAIT)); // the source is rewritten for the next message
    }
    return ticket;
  }

  @Test
  void messagesArriveInOrderWithTheirBytesAcrossTheRingsEnd() {
    try (PushReceiver receiver = PushReceiver.create(domain, 64 * 1024, 8);
         PushSender sender = PushSender.create(domain, 8)) {
      connect(sender, receiver, receiver.ring());
      int[] lengths = new int[40];
      for (int i = 0; i < lengths.length; i++) {
        lengths[i] = 1 + (i * 7919) % 20_000; // odd sizes: the ring's end falls inside messages
      }
      int next = 0;
      int checked = 0;
      boolean wrapped = false;
      while (checked < lengths.length) {
        if (next < lengths.length && tryPush(sender, next, lengths[next]) > 0) {
          next++;
          continue;
        }
        PushReceiver.Message message = receiver.await(Deadline.after(WAIT));
        assertMessage(message, checked, lengths[checked]);
        wrapped |= message.offset() == 0 && checked > 0;
        receiver.release(message);
        checked++;
      }
      assertThat(wrapped).as("some message started again at the ring's start").isTrue();
      assertThat(receiver.poll()).isNull();
      assertThat(sender.pushed()).isEqualTo(lengths.length);
    }
  }

  @Test
  void theSenderStopsWithoutCreditAndResumesWhenTheReceiverReturnsIt() {
    try (PushReceiver receiver = PushReceiver.create(domain, 16 * 1024, 4);
         PushSender sender = PushSender.create(domain, 4)) {
      connect(sender, receiver, receiver.ring());
      // Out of message credit: four receives posted, four messages in flight.
      for (int i = 0; i < 4; i++) {
        assertThat(tryPush(sender, i, 1000)).as("push %d", i).isPositive();
      }
      assertThat(tryPush(sender, 4, 1000)).as("a fifth message without credit").isEqualTo(-1);
      assertThat(sender.inFlight()).isEqualTo(4);
      // Nothing comes back until the receiver releases: credit flows only from release.
      PushReceiver.Message first = receiver.await(Deadline.after(WAIT));
      assertMessage(first, 0, 1000);
      assertThat(tryPush(sender, 4, 1000)).as("still without credit while the receiver holds message 0")
          .isEqualTo(-1);
      receiver.release(first);
      // The credit SEND is on its way: push waits for it, event-driven, with a deadline.
      pattern(source.asSlice(0, 1000), 4);
      long ticket = sender.push(source.address(), sourceRegion.localKey(), 1000, Deadline.after(WAIT));
      sender.awaitWritten(ticket, Deadline.after(WAIT));
      for (int i = 1; i <= 4; i++) {
        PushReceiver.Message message = receiver.await(Deadline.after(WAIT));
        assertMessage(message, i, 1000);
        receiver.release(message);
      }
    }
    try (PushReceiver receiver = PushReceiver.create(domain, 16 * 1024, 8);
         PushSender sender = PushSender.create(domain, 8)) {
      connect(sender, receiver, receiver.ring());
      // Out of byte credit: 15,000 of 16,384 bytes in flight, and a 5,000-byte message would have to wrap.
      for (int i = 0; i < 3; i++) {
        assertThat(tryPush(sender, i, 5000)).isPositive();
      }
      assertThat(tryPush(sender, 3, 5000)).as("a message that does not fit").isEqualTo(-1);
      PushReceiver.Message first = receiver.await(Deadline.after(WAIT));
      receiver.release(first); // 5,000 bytes back: more than a quarter of the ring, so credit goes at once
      pattern(source.asSlice(0, 5000), 3);
      long ticket = sender.push(source.address(), sourceRegion.localKey(), 5000, Deadline.after(WAIT));
      sender.awaitWritten(ticket, Deadline.after(WAIT));
      for (int i = 1; i <= 3; i++) {
        PushReceiver.Message message = receiver.await(Deadline.after(WAIT));
        assertMessage(message, i, 5000);
        if (i == 3) {
          assertThat(message.offset()).as("the wrapped message").isZero();
        }
        receiver.release(message);
      }
    }
  }

  @Test
  void aSenderAndAReceiverOnTwoThreadsMoveEveryMessageThroughASmallRing() throws Exception {
    int messages = 300;
    try (PushReceiver receiver = PushReceiver.create(domain, 256 * 1024, 16);
         PushSender sender = PushSender.create(domain, 16)) {
      connect(sender, receiver, receiver.ring());
      // The sender cycles through 16 source slots of 64 KiB; a slot is reused only once its push is written.
      CompletableFuture<Void> pushing = CompletableFuture.runAsync(() -> {
        long[] tickets = new long[16];
        Deadline deadline = Deadline.after(Duration.ofMinutes(2));
        for (int i = 0; i < messages; i++) {
          int slot = i % 16;
          if (tickets[slot] > 0) {
            sender.awaitWritten(tickets[slot], deadline);
          }
          int length = 1 + (i * 104_729) % 65_536;
          MemorySegment from = source.asSlice(slot * 65_536L, length);
          pattern(from, i);
          tickets[slot] = sender.push(from.address(), sourceRegion.localKey(), length, deadline);
        }
      });
      Deadline deadline = Deadline.after(Duration.ofMinutes(2));
      for (int i = 0; i < messages; i++) {
        PushReceiver.Message message = receiver.await(deadline);
        assertMessage(message, i, 1 + (i * 104_729) % 65_536);
        receiver.release(message);
      }
      pushing.get(2, TimeUnit.MINUTES);
    }
  }

  @Test
  void aWriteOutsideTheRingBreaksTheChannelWithTheStatusNamed() {
    try (PushReceiver receiver = PushReceiver.create(domain, 16 * 1024, 4);
         PushSender sender = PushSender.create(domain, 4)) {
      PushRing real = receiver.ring();
      // A ring advertised larger than the memory registered behind it: the second message lands past its end.
      connect(sender, receiver, new PushRing(real.address(), real.remoteKey(), 64 * 1024, 4));
      assertThat(tryPush(sender, 0, 8000)).isPositive();
      assertThatThrownBy(() -> tryPush(sender, 1, 16_000)).isInstanceOfSatisfying(ThallusException.class, e -> {
        assertThat(e.code()).isEqualTo(StatusCode.PERMISSION_DENIED);
        assertThat(e.getMessage()).contains("push sender send 2 failed: REM_ACCESS_ERR");
      });
      // Broken for good, and said so at once: no wait on a queue pair in error.
      assertThatThrownBy(() -> sender.tryPush(source.address(), sourceRegion.localKey(), 8))
          .isInstanceOfSatisfying(ThallusException.class, e -> {
            assertThat(e.code()).isEqualTo(StatusCode.PERMISSION_DENIED);
            assertThat(e.getMessage()).contains("push sender failed earlier").contains("REM_ACCESS_ERR");
          });
      // The receiver is told too (rxe reports the refused write on the receive it would have consumed, then flushes
      // the rest): the message that landed before may come first, then the failure, named, without waiting out the
      // deadline.
      assertThatThrownBy(() -> {
        for (int i = 0; i < 2; i++) {
          assertMessage(receiver.await(Deadline.after(WAIT)), 0, 8000);
        }
      }).isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.getMessage())
          .contains("push receiver receive failed").containsAnyOf("REM_ACCESS_ERR", "WR_FLUSH_ERR"));
      assertThatThrownBy(receiver::poll).isInstanceOfSatisfying(ThallusException.class,
          e -> assertThat(e.getMessage()).contains("push receiver failed earlier"));
    }
  }

  @Test
  void aWrongKeyBreaksTheChannelWithTheStatusNamed() {
    try (PushReceiver receiver = PushReceiver.create(domain, 16 * 1024, 4);
         PushSender sender = PushSender.create(domain, 4)) {
      PushRing real = receiver.ring();
      connect(sender, receiver, new PushRing(real.address(), real.remoteKey() ^ 0x5a00, real.bytes(), 4));
      assertThatThrownBy(() -> tryPush(sender, 0, 100)).isInstanceOfSatisfying(ThallusException.class, e -> {
        assertThat(e.code()).isEqualTo(StatusCode.PERMISSION_DENIED);
        assertThat(e.getMessage()).contains("REM_ACCESS_ERR");
      });
      assertThatThrownBy(receiver::poll).isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.getMessage())
          .contains("push receiver receive failed").containsAnyOf("REM_ACCESS_ERR", "WR_FLUSH_ERR"));
    }
  }

  @Test
  void releasesAreInOrderAndMessagesMustFitTheRing() {
    try (PushReceiver receiver = PushReceiver.create(domain, 16 * 1024, 4);
         PushSender sender = PushSender.create(domain, 4)) {
      connect(sender, receiver, receiver.ring());
      assertThatThrownBy(() -> sender.tryPush(source.address(), sourceRegion.localKey(), 16 * 1024 + 1))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT));
      assertThat(tryPush(sender, 0, 10)).isPositive();
      assertThat(tryPush(sender, 1, 10)).isPositive();
      PushReceiver.Message first = receiver.await(Deadline.after(WAIT));
      PushReceiver.Message second = receiver.await(Deadline.after(WAIT));
      assertThatThrownBy(() -> receiver.release(second)).isInstanceOfSatisfying(ThallusException.class,
          e -> assertThat(e.code()).isEqualTo(StatusCode.FAILED_PRECONDITION));
      receiver.release(first);
      receiver.release(second);
    }
    assertThatThrownBy(() -> PushRing.decode("1:2:3")).isInstanceOf(ThallusException.class);
  }

  @Test
  void aSenderInAnotherProcessPushesIntoThisProcesssRing() throws Exception {
    int count = 60;
    java.util.List<String> command = new java.util.ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(io.thallus.testing.JvmFlags.forChild());
    command.addAll(java.util.List.of("-cp", System.getProperty("java.class.path"), PushingPeerMain.class.getName(),
        Integer.toString(count)));
    Process peer = new ProcessBuilder(command).redirectErrorStream(true).start();
    try (java.io.BufferedReader out = peer.inputReader(java.nio.charset.StandardCharsets.UTF_8);
         java.io.PrintWriter in = new java.io.PrintWriter(peer.getOutputStream(), true,
             java.nio.charset.StandardCharsets.UTF_8);
         PushReceiver receiver = PushReceiver.create(domain, 128 * 1024, 8)) {
      String line;
      do {
        line = out.readLine();
        assertThat(line).as("the peer's output").isNotNull();
      } while (!line.startsWith("SENDER "));
      receiver.connect(QueuePair.Endpoint.decode(line.split(" ")[1]), OPTIONS);
      in.println("RING " + receiver.endpoint(OPTIONS).encode() + " " + receiver.ring().encode());
      Deadline deadline = Deadline.after(Duration.ofMinutes(2));
      for (int i = 0; i < count; i++) {
        PushReceiver.Message message = receiver.await(deadline);
        assertMessage(message, i, PushingPeerMain.length(i));
        receiver.release(message);
      }
      assertThat(out.readLine()).isEqualTo("PUSHED " + count);
      assertThat(receiver.poll()).isNull();
    } finally {
      peer.destroyForcibly();
      peer.waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void aPeerThatBreaksTheProtocolBreaksTheChannelWithTheReasonNamed() {
    // A bare queue pair as the "sender": it writes a message where the ring's order says none can start.
    try (PushReceiver receiver = PushReceiver.create(domain, 16 * 1024, 4);
         io.thallus.rdma.verbs.CompletionQueue queue = device.createCompletionQueue(16)) {
      QueuePair rogue = domain.createQueuePair(queue, new QueuePair.Capacity(4, 1, 4));
      try (io.thallus.rdma.verbs.SendChain chain = rogue.newSendChain(1)) {
        rogue.connect(receiver.endpoint(OPTIONS), OPTIONS);
        receiver.connect(rogue.endpoint(OPTIONS), OPTIONS);
        PushRing ring = receiver.ring();
        chain.writeWithImmediate(source.address(), sourceRegion.localKey(), 100, ring.address() + 4096,
            ring.remoteKey(), 4096);
        chain.post(1, true);
        queue.await(Deadline.after(WAIT), "the rogue write");
        queue.check(0, "rogue write");
        assertThatThrownBy(() -> receiver.await(Deadline.after(WAIT))).isInstanceOfSatisfying(ThallusException.class,
            e -> {
              assertThat(e.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
              assertThat(e.getMessage()).contains("a message at offset 4096 where 0 was due");
            });
        assertThatThrownBy(receiver::poll).isInstanceOfSatisfying(ThallusException.class,
            e -> assertThat(e.getMessage()).contains("push receiver failed earlier"));
      } finally {
        rogue.close();
      }
    }
  }
}
