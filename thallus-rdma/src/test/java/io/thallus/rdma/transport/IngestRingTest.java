package io.thallus.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.rdma.verbs.RegisteredBufferPool;
import io.thallus.rdma.verbs.SendChain;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The two ends of rdma's ingest by RDMA WRITE, on the device without the rest of the transport: the client's pushes
 * ({@link IngestPushes}) into the server's ring ({@link IngestRing}), and everything the server must refuse from a
 * client that does not keep to the protocol: frames naming other bytes than were pushed or bytes outside the ring, an
 * immediate naming an offset where no message may start, a body that never comes; and the client's wait for credit
 * on a ring that is full, bounded by its deadline. Runs in the Soft-RoCE guest through RxeGuestTest.
 */
@Tag("rdma-device")
class IngestRingTest {
  private static final int RING = 64 << 10;
  private static final Duration SHORT = Duration.ofMillis(300);

  private BufferAllocator allocator;
  private RdmaDevice device;
  private ProtectionDomain domain;
  private IngestRing ring;
  private IngestPushes pushes;
  private RegisteredBufferPool sources;
  private RegisteredBufferPool receive;
  private QueuePair.ConnectOptions options;

  @BeforeEach
  void connect() {
    allocator = new RootAllocator();
    device = RdmaDevice.open(RdmaTransport.deviceName());
    domain = device.allocateProtectionDomain();
    options = QueuePair.ConnectOptions.forDevice(device, 1);
    ring = IngestRing.create(domain, RING, 4);
    pushes = new IngestPushes(domain);
    ring.connect(pushes.endpoint(options), options);
    pushes.connect(ring.endpoint(options), options, ring.ring());
    sources = new RegisteredBufferPool(domain, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE), 1 << 20);
    receive = new RegisteredBufferPool(domain, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE), 1 << 20);
  }

  @AfterEach
  void close() {
    pushes.close();
    ring.close();
    sources.close();
    receive.close();
    domain.close();
    device.close();
    allocator.close();
  }

  /** A body of one buffer of {@code bytes} bytes, each byte {@code seed + i}. */
  private PackedBody body(int bytes, int seed) {
    ArrowBuf buffer = allocator.buffer(bytes);
    for (int i = 0; i < bytes; i++) {
      buffer.setByte(i, seed + i);
    }
    buffer.writerIndex(bytes);
    BatchPart part = new BatchPart(BatchPart.RECORDS, false, bytes, List.of(new ArrowFieldNode(bytes, 0)),
        List.of(new BufferDescriptor(0, bytes, 0)));
    return new PackedBody(List.of(part), List.of(buffer), new long[] {0}, PackedBody.align(bytes));
  }

  /** Places {@code body} as core does: place, announce, close (the body is handed over), the source buffers freed. */
  private BatchHeader push(long batchId, PackedBody body, Duration timeout) {
    try {
      PlacedBody placed = pushes.place(body, sources, Deadline.after(timeout));
      assertThat(placed.heldUntilReleased()).isFalse();
      BatchHeader header = new BatchHeader(1, batchId, placed.parts());
      placed.close();
      return header;
    } finally {
      body.buffers().forEach(ArrowBuf::close);
    }
  }

  private FetchedBody take(BatchHeader header, Duration timeout) {
    return ring.take(header, header.extent(), receive, Deadline.after(timeout));
  }

  private static void assertBytes(FetchedBody body, int bytes, int seed) {
    MemorySegment got = MemorySegment.ofAddress(body.address()).reinterpret(body.length());
    assertThat(body.length()).isEqualTo(bytes);
    for (int i = 0; i < bytes; i++) {
      if (got.get(ValueLayout.JAVA_BYTE, i) != (byte) (seed + i)) {
        throw new AssertionError("byte " + i + " of a body of " + bytes + " differs");
      }
    }
  }

  @Test
  void bodiesCrossTheRingsEndWholeAndInOrder() {
    // 40 bodies of odd sizes through a 64 KiB ring: many skip its tail and start again at 0.
    for (int i = 0; i < 40; i++) {
      int bytes = 33_000 + 997 * (i % 13);
      BatchHeader header = push(i, body(bytes, i), Duration.ofSeconds(20));
      assertThat(ring.holds(header.extent())).isTrue();
      FetchedBody body = take(header, Duration.ofSeconds(20));
      try {
        assertBytes(body, bytes, i);
      } finally {
        body.release();
      }
    }
  }

  @Test
  void aFullRingHoldsThePushUntilItsDeadlineAndTakesItOnceRoomIsBack() {
    BatchHeader first = push(1, body(40_000, 1), Duration.ofSeconds(20));
    // The ring's other 24 KiB cannot take a second 40 KB body until the first is taken.
    long start = System.nanoTime();
    assertThatThrownBy(() -> push(2, body(40_000, 2), SHORT)).isInstanceOfSatisfying(ThallusException.class,
        e -> assertThat(e.code()).isEqualTo(StatusCode.DEADLINE_EXCEEDED))
        .hasMessageContaining("credit for a message of 40000 bytes");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(SHORT);
    FetchedBody body = take(first, Duration.ofSeconds(20));
    body.release();
    BatchHeader second = push(2, body(40_000, 2), Duration.ofSeconds(20));
    FetchedBody again = take(second, Duration.ofSeconds(20));
    try {
      assertBytes(again, 40_000, 2);
    } finally {
      again.release();
    }
  }

  @Test
  void aBodyLargerThanTheRingIsRefusedNamingBothSizes() {
    assertThatThrownBy(() -> push(1, body(RING + 8, 1), SHORT)).isInstanceOfSatisfying(ThallusException.class,
        e -> assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED))
        .hasMessageContaining("body of " + (RING + 8) + " bytes does not fit the server's push ring of " + RING);
    BatchHeader header = push(2, body(40_000, 2), Duration.ofSeconds(20));
    take(header, Duration.ofSeconds(20)).release();
  }

  @Test
  void aFrameNamingOtherBytesThanWerePushedFailsItAndEveryLaterPushedBatch() {
    BatchHeader pushed = push(1, body(40_000, 1), Duration.ofSeconds(20));
    BufferDescriptor extent = pushed.extent();
    BatchHeader lying = new BatchHeader(1, 1, List.of(pushed.parts().getFirst().withBuffers(
        List.of(new BufferDescriptor(extent.address() + 4096, 30_000, extent.key())))));
    assertThatThrownBy(() -> take(lying, Duration.ofSeconds(20))).isInstanceOfSatisfying(ThallusException.class,
        e -> assertThat(e.code()).isEqualTo(StatusCode.PROTOCOL_ERROR))
        .hasMessageContaining("names 30000 bytes at ring offset 4096, but the message pushed for it is 40000 bytes"
            + " at offset 0");
    BatchHeader next = push(2, body(10_000, 2), Duration.ofSeconds(20));
    assertThatThrownBy(() -> take(next, Duration.ofSeconds(20))).isInstanceOf(ThallusException.class)
        .hasMessageContaining("failed earlier");
  }

  @Test
  void aFrameNamingBytesOutsideTheRingIsRefused() {
    BatchHeader pushed = push(1, body(40_000, 1), Duration.ofSeconds(20));
    BufferDescriptor extent = pushed.extent();
    BatchHeader outside = new BatchHeader(1, 1, List.of(pushed.parts().getFirst().withBuffers(
        List.of(new BufferDescriptor(extent.address() + RING - 100, 40_000, extent.key())))));
    assertThatThrownBy(() -> take(outside, Duration.ofSeconds(20))).isInstanceOfSatisfying(ThallusException.class,
        e -> assertThat(e.code()).isEqualTo(StatusCode.PROTOCOL_ERROR))
        .hasMessageContaining("outside the push ring of " + RING + " bytes");
  }

  @Test
  void aBodyThatNeverComesFailsItsBatchAtTheDeadline() {
    BatchHeader announced = new BatchHeader(1, 7, List.of(new BatchPart(BatchPart.RECORDS, false, 1, List.of(),
        List.of(new BufferDescriptor(ring.ring().address(), 40_000, ring.ring().remoteKey())))));
    long start = System.nanoTime();
    assertThatThrownBy(() -> take(announced, SHORT)).isInstanceOfSatisfying(ThallusException.class,
        e -> assertThat(e.code()).isEqualTo(StatusCode.DEADLINE_EXCEEDED))
        .hasMessageContaining("waiting for the pushed body of ingested batch 7 of stream 1");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(SHORT);
  }

  @Test
  void anImmediateNamingAnOffsetWhereNoMessageMayStartIsAProtocolError() {
    // A client of its own, writing into the ring with its key, but at an offset it made up.
    try (IngestRing other = IngestRing.create(domain, RING, 4);
         CompletionQueue completions = device.createCompletionQueue(8);
         QueuePair rogue = domain.createQueuePair(completions, new QueuePair.Capacity(4, 1));
         SendChain chain = rogue.newSendChain(1);
         Arena arena = Arena.ofConfined()) {
      MemorySegment bytes = arena.allocate(4096, 4096);
      try (MemoryRegion region = domain.register(bytes, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE))) {
        other.connect(rogue.endpoint(options), options);
        rogue.connect(other.endpoint(options), options);
        chain.clear();
        chain.writeWithImmediate(bytes.address(), region.localKey(), 4096, other.ring().address() + 12_288,
            other.ring().remoteKey(), 12_288);
        chain.post(1, true);
        completions.await(Deadline.after(Duration.ofSeconds(20)), "the rogue write");
        completions.check(0, "the rogue write");
        BatchHeader announced = new BatchHeader(1, 3, List.of(new BatchPart(BatchPart.RECORDS, false, 1, List.of(),
            List.of(new BufferDescriptor(other.ring().address() + 12_288, 4096, other.ring().remoteKey())))));
        assertThatThrownBy(() -> other.take(announced, announced.extent(), receive,
            Deadline.after(Duration.ofSeconds(20)))).isInstanceOfSatisfying(ThallusException.class,
                e -> assertThat(e.code()).isEqualTo(StatusCode.PROTOCOL_ERROR))
            .hasMessageContaining("a message at offset 12288 where 0 was due");
      }
    }
  }
}
