package io.thallus.rdma.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The pushing verbs on a real device ({@link RxeGuestTest} runs this class in the Soft-RoCE guest): RECV and SEND
 * with and without an immediate value, RDMA WRITE with and without one, and the failures a pusher must be told of
 * clearly. Sender and receiver have a completion queue each, as two hosts would.
 */
@Tag("rdma-device")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PushVerbsDeviceTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final QueuePair.ConnectOptions OPTIONS = VerbsDeviceTest.OPTIONS;

  private RdmaDevice device;
  private ProtectionDomain domain;
  private CompletionQueue senderCompletions;
  private CompletionQueue receiverCompletions;
  private QueuePair sender;
  private QueuePair receiver;
  private final Arena arena = Arena.ofShared();

  /** One completion, copied out of the queue's batch. */
  record Completion(long id, int status, boolean receive, boolean writeWithImmediate, int byteLength,
      boolean hasImmediate, int immediate) {}

  @BeforeEach
  void open() {
    device = RdmaDevice.open(VerbsDeviceTest.deviceName());
    domain = device.allocateProtectionDomain();
    senderCompletions = device.createCompletionQueue(64);
    receiverCompletions = device.createCompletionQueue(64);
    sender = domain.createQueuePair(senderCompletions, new QueuePair.Capacity(16, 1, 4));
    receiver = domain.createQueuePair(receiverCompletions, new QueuePair.Capacity(16, 1, 16));
  }

  /** The receiver lets its peer write ({@code REMOTE_WRITE}) or only read, as the existing transport's pairs do. */
  private void connect(boolean receiverTakesWrites) {
    sender.connect(receiver.endpoint(OPTIONS), OPTIONS);
    receiver.connect(sender.endpoint(OPTIONS), OPTIONS, receiverTakesWrites
        ? EnumSet.of(MemoryRegion.Access.REMOTE_WRITE) : EnumSet.of(MemoryRegion.Access.REMOTE_READ));
  }

  @AfterEach
  void close() {
    sender.close();
    receiver.close();
    senderCompletions.close();
    receiverCompletions.close();
    domain.close();
    device.close();
    arena.close();
  }

  /** Waits, event-driven, for {@code count} completions (failed ones included), within the deadline. */
  static List<Completion> take(CompletionQueue queue, int count, String what) {
    Deadline deadline = Deadline.after(WAIT);
    List<Completion> taken = new ArrayList<>();
    while (taken.size() < count) {
      int n = queue.await(deadline, what);
      for (int i = 0; i < n; i++) {
        boolean ok = queue.status(i) == 0;
        taken.add(new Completion(queue.workRequestId(i), queue.status(i), ok && queue.isReceive(i),
            ok && queue.isWriteWithImmediate(i), ok ? queue.byteLength(i) : -1, ok && queue.hasImmediate(i),
            ok && queue.hasImmediate(i) ? queue.immediate(i) : 0));
      }
    }
    return taken;
  }

  private static void fill(MemorySegment segment, int seed) {
    for (long i = 0; i < segment.byteSize(); i++) {
      segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + seed));
    }
  }

  @Test
  void sendsLandInPostedReceivesWithTheirBytesAndImmediateValues() {
    connect(false);
    MemorySegment inbox = arena.allocate(4 * 4096, 4096);
    MemorySegment outbox = arena.allocate(4096, 4096);
    fill(outbox, 5);
    try (MemoryRegion in = domain.register(inbox, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
         MemoryRegion out = domain.register(outbox, EnumSet.noneOf(MemoryRegion.Access.class));
         ReceiveSlots slots = receiver.newReceiveSlots(4);
         SendChain chain = sender.newSendChain(4)) {
      for (int slot = 0; slot < 4; slot++) {
        slots.set(slot, inbox.address() + slot * 4096L, in.localKey(), 4096);
      }
      slots.postAll();
      chain.send(outbox.address(), out.localKey(), 100);
      chain.sendWithImmediate(outbox.address() + 100, out.localKey(), 50, 0xCAFEBABE);
      chain.sendWithImmediate(0, 0, 0, 7); // a bare notification: no bytes, just the value
      chain.post(1, true);

      assertThat(take(senderCompletions, 1, "the sends")).singleElement()
          .satisfies(c -> assertThat(c.status()).isZero()).satisfies(c -> assertThat(c.id()).isEqualTo(1));
      List<Completion> received = take(receiverCompletions, 3, "the receives");
      assertThat(received).allSatisfy(c -> {
        assertThat(c.status()).isZero();
        assertThat(c.receive()).isTrue();
        assertThat(c.writeWithImmediate()).isFalse();
        assertThat(ReceiveSlots.isReceive(c.id())).isTrue();
      });
      // Receives complete in the order they were posted, one per send.
      assertThat(received).extracting(c -> ReceiveSlots.slotOf(c.id())).containsExactly(0, 1, 2);
      assertThat(received).extracting(Completion::byteLength).containsExactly(100, 50, 0);
      assertThat(received).extracting(Completion::hasImmediate).containsExactly(false, true, true);
      assertThat(received.get(1).immediate()).isEqualTo(0xCAFEBABE);
      assertThat(received.get(2).immediate()).isEqualTo(7);
      assertThat(inbox.asSlice(0, 100).mismatch(outbox.asSlice(0, 100))).isEqualTo(-1);
      assertThat(inbox.asSlice(4096, 50).mismatch(outbox.asSlice(100, 50))).isEqualTo(-1);

      // The same chain and slot, rewritten in place, run again.
      slots.post(0);
      chain.clear();
      chain.sendWithImmediate(outbox.address() + 1000, out.localKey(), 3000, -1);
      chain.post(2, true);
      assertThat(take(senderCompletions, 1, "the second send").getFirst().status()).isZero();
      Completion again = take(receiverCompletions, 1, "the second receive").getFirst();
      assertThat(ReceiveSlots.slotOf(again.id())).isEqualTo(3);
      assertThat(again.immediate()).isEqualTo(-1);
      assertThat(inbox.asSlice(3 * 4096, 3000).mismatch(outbox.asSlice(1000, 3000))).isEqualTo(-1);
    }
  }

  @Test
  void aWriteWithImmediateLandsAtItsOffsetAndNotifiesThePeerAfterTheData() {
    connect(true);
    MemorySegment ring = arena.allocate(1 << 20, 4096);
    MemorySegment source = arena.allocate(1 << 17, 4096);
    fill(source, 9);
    try (MemoryRegion exposed = domain.register(ring,
             EnumSet.of(MemoryRegion.Access.LOCAL_WRITE, MemoryRegion.Access.REMOTE_WRITE));
         MemoryRegion out = domain.register(source, EnumSet.noneOf(MemoryRegion.Access.class));
         ReceiveSlots slots = receiver.newReceiveSlots(2);
         SendChain chain = sender.newSendChain(4)) {
      slots.postAll(); // zero-byte slots: a write with immediate only needs a receive to consume
      chain.write(source.address(), out.localKey(), 1000, ring.address() + 500_000, exposed.remoteKey());
      chain.writeWithImmediate(source.address() + 1000, out.localKey(), 65_536, ring.address() + 12_345,
          exposed.remoteKey(), 777);
      chain.post(3, true);
      assertThat(take(senderCompletions, 1, "the writes").getFirst().status()).isZero();
      Completion arrived = take(receiverCompletions, 1, "the notification").getFirst();
      assertThat(arrived.status()).isZero();
      assertThat(arrived.writeWithImmediate()).isTrue();
      assertThat(arrived.immediate()).isEqualTo(777);
      assertThat(arrived.byteLength()).isEqualTo(65_536);
      assertThat(ReceiveSlots.slotOf(arrived.id())).isZero();
      // Both writes are in place when the notification is seen (a queue pair delivers in order), and nothing else.
      assertThat(ring.asSlice(12_345, 65_536).mismatch(source.asSlice(1000, 65_536))).isEqualTo(-1);
      assertThat(ring.asSlice(500_000, 1000).mismatch(source.asSlice(0, 1000))).isEqualTo(-1);
      assertThat(ring.get(ValueLayout.JAVA_BYTE, 12_344)).isZero();
      assertThat(ring.get(ValueLayout.JAVA_BYTE, 12_345 + 65_536)).isZero();
      assertThat(ring.get(ValueLayout.JAVA_BYTE, 499_999)).isZero();
      // A plain write consumed no receive: slot 1 is still posted and takes the next notification.
      chain.clear();
      chain.writeWithImmediate(source.address(), out.localKey(), 8, ring.address(), exposed.remoteKey(), 778);
      chain.post(4, true);
      assertThat(take(senderCompletions, 1, "the third write").getFirst().status()).isZero();
      Completion next = take(receiverCompletions, 1, "the second notification").getFirst();
      assertThat(ReceiveSlots.slotOf(next.id())).isEqualTo(1);
      assertThat(next.immediate()).isEqualTo(778);
    }
  }

  /**
   * Posts one write with immediate and returns the sender's failure, named: from its completion, or from the post
   * itself where the provider refuses to queue on a queue pair in error.
   */
  private ThallusException failedWrite(long remoteAddress, int remoteKey, int length) {
    MemorySegment source = arena.allocate(length, 4096);
    try (MemoryRegion out = domain.register(source, EnumSet.noneOf(MemoryRegion.Access.class));
         SendChain chain = sender.newSendChain(1)) {
      chain.writeWithImmediate(source.address(), out.localKey(), length, remoteAddress, remoteKey, 1);
      try {
        chain.post(9, true);
      } catch (ThallusException refused) {
        return refused;
      }
      Completion done = take(senderCompletions, 1, "the refused write").getFirst();
      assertThat(done.id()).isEqualTo(9);
      assertThat(done.status()).as("the write's completion status").isNotZero();
      return WorkCompletions.failure(done.status(), "write with immediate");
    }
  }

  private void assertRemoteAccessError(ThallusException error) {
    assertThat(error).isNotNull();
    assertThat(error.code()).isEqualTo(StatusCode.PERMISSION_DENIED);
    assertThat(error.getMessage()).contains("write with immediate failed: REM_ACCESS_ERR");
  }

  @Test
  void aWritePastThePeersRegionIsRefusedWithARemoteAccessError() {
    connect(true);
    MemorySegment ring = arena.allocate(64 * 1024, 4096);
    try (MemoryRegion exposed = domain.register(ring,
             EnumSet.of(MemoryRegion.Access.LOCAL_WRITE, MemoryRegion.Access.REMOTE_WRITE));
         ReceiveSlots slots = receiver.newReceiveSlots(2)) {
      slots.postAll();
      assertRemoteAccessError(failedWrite(ring.address() + 64 * 1024 - 100, exposed.remoteKey(), 4096));
      // The sender's queue pair is in error now: a later request is flushed at once, not left hanging.
      ThallusException after = failedWrite(ring.address(), exposed.remoteKey(), 8);
      assertThat(after.code()).isEqualTo(StatusCode.UNAVAILABLE);
      assertThat(after.getMessage()).containsAnyOf("WR_FLUSH_ERR", "ibv_post_send");
    }
  }

  @Test
  void aWriteWithAWrongKeyIsRefusedWithARemoteAccessError() {
    connect(true);
    MemorySegment ring = arena.allocate(64 * 1024, 4096);
    try (MemoryRegion exposed = domain.register(ring,
             EnumSet.of(MemoryRegion.Access.LOCAL_WRITE, MemoryRegion.Access.REMOTE_WRITE));
         ReceiveSlots slots = receiver.newReceiveSlots(2)) {
      slots.postAll();
      assertRemoteAccessError(failedWrite(ring.address(), exposed.remoteKey() ^ 0x5a00, 4096));
    }
  }

  @Test
  void aPeerConnectedForReadsOnlyRefusesWritesEvenToWritableMemory() {
    connect(false); // as every queue pair of the read path is
    MemorySegment ring = arena.allocate(64 * 1024, 4096);
    try (MemoryRegion exposed = domain.register(ring,
             EnumSet.of(MemoryRegion.Access.LOCAL_WRITE, MemoryRegion.Access.REMOTE_WRITE));
         ReceiveSlots slots = receiver.newReceiveSlots(2)) {
      slots.postAll();
      // rxe answers "invalid request" (the queue pair takes no writes at all), a NIC may say "access": either is named.
      assertThat(failedWrite(ring.address(), exposed.remoteKey(), 4096).getMessage())
          .containsAnyOf("REM_INV_REQ_ERR", "REM_ACCESS_ERR");
      assertThat(ring.asSlice(0, 4096).mismatch(arena.allocate(4096))).isEqualTo(-1);
    }
  }

  @Test
  void receiveSlotsAndCapacityAreBounded() {
    assertThatThrownBy(() -> receiver.newReceiveSlots(17)).isInstanceOfSatisfying(ThallusException.class,
        e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> new QueuePair.Capacity(16, 1, 0)).isInstanceOf(ThallusException.class);
    try (SendChain chain = sender.newSendChain(1)) {
      chain.send(0, 0, 0);
      assertThatThrownBy(() -> chain.send(0, 0, 0)).isInstanceOfSatisfying(ThallusException.class,
          e -> assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED));
    }
  }
}
