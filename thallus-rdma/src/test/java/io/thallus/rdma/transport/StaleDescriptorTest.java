package io.thallus.rdma.transport;


import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.rdma.verbs.ReadChain;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.Deadline;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The rdma server's descriptors as an attacker would use them, for batches copied into its pool and for batches
 * exposed where they lie (in place): the "clients" here are bare queue pairs that read
 * whatever address and key they like, not Thallus clients, which would never reuse a released descriptor. The
 * server side is the real transport on a real device (rxe0 in the Soft-RoCE guest, through RxeGuestTest).
 */
@Tag("rdma-device")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class StaleDescriptorTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final int ROWS = 100_000;

  private BufferAllocator allocator;
  private ServerTransport server;

  @BeforeEach
  void start() {
    allocator = new RootAllocator();
    server = RdmaServer.start(new ServerTransport.Context(allocator, new InetSocketAddress("127.0.0.1", 1),
        WAIT, 64L << 20));
  }

  @AfterEach
  void stop() {
    server.close();
    allocator.close(); // fails on any byte still held
  }

  /** A peer that speaks only verbs: its own device context, domain, queue pair and receive buffer. */
  private static final class BareReader implements AutoCloseable {
    final RdmaDevice device = RdmaDevice.open(RdmaTransport.deviceName());
    final ProtectionDomain domain = device.allocateProtectionDomain();
    final CompletionQueue completions = device.createCompletionQueue(16);
    final QueuePair pair = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1));
    final QueuePair.ConnectOptions options = new QueuePair.ConnectOptions(1, 1, 3, 16, 14, 7);
    final Arena arena = Arena.ofShared();
    final MemorySegment local = arena.allocate(4L << 20, 4096);
    final MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
    ServerSession session;

    /** {@code clientMemory}: the budget the server's session accounts what it exposes in. */
    BareReader connect(ServerTransport server, BufferAllocator clientMemory) {
      return connect(server, Map.of(), clientMemory);
    }

    /** Connects, saying {@code more} in its offer as well (the READs it takes per batch, say). */
    BareReader connect(ServerTransport server, Map<String, String> more, BufferAllocator clientMemory) {
      Map<String, String> offer = new java.util.HashMap<>(more);
      offer.put(RdmaTransport.ENDPOINT, pair.endpoint(options).encode());
      session = server.accept(new InetSocketAddress("127.0.0.1", 2), offer, clientMemory);
      pair.connect(QueuePair.Endpoint.decode(session.welcomeParameters().get(RdmaTransport.ENDPOINT)), options);
      return this;
    }

    /** Reads the batch's whole span with its descriptor's key; null when the device allowed it. */
    ThallusException read(BufferDescriptor span) {
      try (ReadChain chain = pair.newReadChain(1)) {
        chain.add(local.address(), receive.localKey(), span.address(), span.key(), (int) span.length());
        chain.post(1);
        completions.await(Deadline.after(WAIT), "a read of a batch");
        try {
          completions.check(0, "read of a batch");
          return null;
        } catch (ThallusException e) {
          return e;
        }
      }
    }

    /**
     * Reads every buffer with bytes with its own descriptor, one READ each, packed one after the other as a Thallus
     * client does for a batch exposed in place; null when the device allowed every read.
     */
    ThallusException readEach(BatchHeader header) {
      long[] offsets = header.packedOffsets();
      assertThat(header.packedLength()).isLessThanOrEqualTo(local.byteSize());
      try (ReadChain chain = pair.newReadChain(offsets.length)) {
        int i = 0;
        for (var part : header.parts()) {
          for (BufferDescriptor d : part.buffers()) {
            long offset = offsets[i++];
            if (d.length() > 0) {
              chain.add(local.address() + offset, receive.localKey(), d.address(), d.key(), (int) d.length());
            }
          }
        }
        chain.post(1);
        completions.await(Deadline.after(WAIT), "reads of a batch");
        try {
          completions.check(0, "reads of a batch");
          return null;
        } catch (ThallusException e) {
          return e;
        }
      }
    }

    @Override
    public void close() {
      if (session != null) {
        session.close();
      }
      pair.close();
      receive.close();
      completions.close();
      domain.close();
      device.close();
      arena.close();
    }
  }

  /** A batch of one BIGINT column, {@code i * seed} (nulls every 1000th row), far larger than what goes inline. */
  private BatchContents batch(long seed) {
    try (BigIntVector values = new BigIntVector("v", allocator)) {
      values.allocateNew(ROWS);
      for (int i = 0; i < ROWS; i++) {
        if (i % 1000 == 0) {
          values.setNull(i);
        } else {
          values.set(i, i * seed);
        }
      }
      values.setValueCount(ROWS);
      try (VectorSchemaRoot root = VectorSchemaRoot.of(values)) {
        return new BatchContents(List.of(), new VectorUnloader(root).getRecordBatch());
      }
    }
  }

  /** Places the batch as core does for one too large to go inline; the placement is what core's ledger would hold. */
  private static Sent send(ServerSession session, long batchId, BatchContents contents) {
    try (contents) {
      PackedBody body = BatchLayouts.pack(contents);
      assertThat(body.length()).as("a body that goes out of line").isGreaterThan(BatchLayouts.INLINE_MAX);
      PlacedBody placed = session.place(body, Deadline.after(WAIT));
      assertThat(placed).as("a placement").isNotNull();
      BatchHeader header = new BatchHeader(1, batchId, placed.parts());
      return new Sent(header, RdmaTransport.exposedInPlace(header) ? null : header.extent(), placed);
    }
  }

  private record Sent(BatchHeader header, BufferDescriptor span, PlacedBody placed) {}

  /**
   * The rows the reader received, rebuilt from its receive buffer with the descriptors (as they lie on the server
   * for a copied batch, packed one after the other for one read in place), checked value by value.
   */
  private void assertReceived(BareReader reader, Sent sent, long seed) {
    BatchHeader header = sent.header();
    BufferDescriptor span = sent.span();
    long base = reader.local.address();
    long length = span == null ? header.packedLength() : span.length();
    ArrowBuf received = allocator.wrapForeignAllocation(new ForeignAllocation(length, base) {
      @Override
      protected void release0() {}
    });
    long[] packed = header.packedOffsets();
    int[] next = {0};
    try (received;
         BatchContents contents = BatchLayouts.assemble(header, d -> span == null
             ? received.slice(packed[next[0]++], d.length()) : received.slice(d.address() - span.address(),
                 d.length()));
         BigIntVector values = new BigIntVector("v", allocator);
         VectorSchemaRoot root = VectorSchemaRoot.of(values)) {
      ArrowRecordBatch records = contents.records();
      new VectorLoader(root).load(records);
      assertThat(root.getRowCount()).isEqualTo(ROWS);
      for (int i = 0; i < ROWS; i++) {
        if (i % 1000 == 0) {
          assertThat(values.isNull(i)).as("row %d", i).isTrue();
        } else {
          assertThat(values.get(i)).as("row %d", i).isEqualTo(i * seed);
        }
      }
    }
  }

  private static void assertRefused(ThallusException error, String why) {
    assertThat(error).as(why).isNotNull();
    assertThat(error.code()).isEqualTo(StatusCode.PERMISSION_DENIED);
    assertThat(error.getMessage()).contains("REM_ACCESS_ERR");
  }

  @Test
  void aReleasedBatchsDescriptorIsRefusedEvenWhereItsMemoryHoldsTheNextBatch() {
    assertThat(((RdmaServer) server).usesMemoryWindows()).as("memory windows on " + RdmaTransport.deviceName())
        .isTrue();
    try (BareReader reader = new BareReader().connect(server, allocator)) {
      Sent first = send(reader.session, 1, batch(7));
      assertThat(reader.read(first.span())).isNull();
      assertReceived(reader, first, 7);

      first.placed().close(); // the client released it
      Sent second = send(reader.session, 2, batch(11));
      // The pool hands the same buffer to the next batch, so the stale descriptor names live memory.
      assertThat(second.span().address()).isEqualTo(first.span().address());
      assertThat(second.span().key()).as("the next batch's key").isNotEqualTo(first.span().key());
      assertThat(reader.read(second.span())).isNull();
      assertReceived(reader, second, 11);

      assertRefused(reader.read(first.span()), "a read with the released batch's descriptor");
      second.placed().close();
    }
    assertThat(allocator.getAllocatedMemory()).isZero();
  }

  @Test
  void aBatchsDescriptorIsRefusedToEveryOtherClient() {
    try (BareReader owner = new BareReader().connect(server, allocator);
         BareReader other = new BareReader().connect(server, allocator)) {
      Sent sent = send(owner.session, 1, batch(3));
      assertRefused(other.read(sent.span()), "another client's read with a live descriptor");
      assertThat(owner.read(sent.span())).isNull();
      assertReceived(owner, sent, 3);
      sent.placed().close();
    }
    assertThat(allocator.getAllocatedMemory()).isZero();
  }

  @Test
  void aClientThatGoesAwayWithBatchesHeldLeavesNothingBehind() {
    BareReader reader = new BareReader().connect(server, allocator);
    try {
      for (long id = 1; id <= 4; id++) {
        send(reader.session, id, batch(id));
      }
      assertThat(allocator.getAllocatedMemory()).isPositive();
    } finally {
      // The session closes with four windows bound and four buffers held: all of them must go.
      reader.close();
    }
    assertThat(allocator.getAllocatedMemory()).isZero();
  }

  // Batches exposed in place: each buffer registered where it lies, for the client that reads buffer by buffer.

  private static final Map<String, String> READS_BUFFER_BY_BUFFER = Map.of(RdmaTransport.READS_PER_BATCH, "64");

  /** A server that exposes every out-of-line body in place for clients that read buffer by buffer. */
  private ServerTransport inPlaceServer() {
    return RdmaServer.start(new ServerTransport.Context(allocator, new InetSocketAddress("127.0.0.1", 1), WAIT,
        64L << 20), 0);
  }

  /** Where the batch's buffers lie on the server, the ones with bytes, in body order. */
  private static List<Long> addresses(BatchHeader header) {
    return header.parts().stream().flatMap(p -> p.buffers().stream()).filter(d -> d.length() > 0)
        .map(BufferDescriptor::address).toList();
  }

  @Test
  void anInPlaceBatchIsReadWhereItLiesAndEachDescriptorDiesWhenItIsReleased() {
    try (ServerTransport inPlace = inPlaceServer();
         BareReader reader = new BareReader().connect(inPlace, READS_BUFFER_BY_BUFFER, allocator)) {
      BatchContents contents = batch(7);
      List<Long> sources = contents.records().getBuffers().stream().filter(b -> b.readableBytes() > 0)
          .map(ArrowBuf::memoryAddress).toList();
      Sent sent = send(reader.session, 1, contents);
      assertThat(RdmaTransport.exposedInPlace(sent.header())).as("exposed buffer by buffer").isTrue();
      assertThat(addresses(sent.header())).as("the descriptors name the batch's own buffers: no copy")
          .isEqualTo(sources);
      assertThat(reader.readEach(sent.header())).isNull();
      assertReceived(reader, sent, 7);
      assertThat(allocator.getAllocatedMemory()).as("the buffers live on while the client may read them")
          .isPositive();

      sent.placed().close(); // the client released it
      assertThat(allocator.getAllocatedMemory()).as("the batch's memory, given back").isZero();
      for (var part : sent.header().parts()) {
        for (BufferDescriptor d : part.buffers()) {
          if (d.length() > 0) {
            assertRefused(reader.read(d), "a read with a released in-place buffer's descriptor");
            break; // the first refusal breaks the queue pair; one is the point
          }
        }
      }
    }
    assertThat(allocator.getAllocatedMemory()).isZero();
  }

  @Test
  void anInPlaceBatchsDescriptorsAreRefusedToEveryOtherClient() {
    try (ServerTransport inPlace = inPlaceServer();
         BareReader owner = new BareReader().connect(inPlace, READS_BUFFER_BY_BUFFER, allocator);
         BareReader other = new BareReader().connect(inPlace, READS_BUFFER_BY_BUFFER, allocator)) {
      Sent sent = send(owner.session, 1, batch(3));
      assertThat(RdmaTransport.exposedInPlace(sent.header())).isTrue();
      assertRefused(other.readEach(sent.header()), "another client's reads with live in-place descriptors");
      assertThat(owner.readEach(sent.header())).isNull();
      assertReceived(owner, sent, 3);
      sent.placed().close();
    }
    assertThat(allocator.getAllocatedMemory()).isZero();
  }

  @Test
  void aClientThatReadsOneBodyPerBatchGetsACopyAndSoDoesABatchWithMoreBuffersThanItReads() {
    try (ServerTransport inPlace = inPlaceServer();
         BareReader packedOnly = new BareReader().connect(inPlace, allocator);
         BareReader twoReads = new BareReader().connect(inPlace, Map.of(RdmaTransport.READS_PER_BATCH, "1"),
             allocator)) {
      Sent copied = send(packedOnly.session, 1, batch(5));
      assertThat(RdmaTransport.exposedInPlace(copied.header())).as("packed for a client that did not say").isFalse();
      assertThat(packedOnly.read(copied.span())).isNull();
      assertReceived(packedOnly, copied, 5);
      copied.placed().close();
      // Validity and values have bytes: two READs, one more than this client takes.
      Sent alsoCopied = send(twoReads.session, 1, batch(9));
      assertThat(RdmaTransport.exposedInPlace(alsoCopied.header())).isFalse();
      assertThat(twoReads.read(alsoCopied.span())).isNull();
      assertReceived(twoReads, alsoCopied, 9);
      alsoCopied.placed().close();
    }
    assertThat(allocator.getAllocatedMemory()).isZero();
  }

  @Test
  void aClientThatGoesAwayWithInPlaceBatchesHeldLeavesNothingBehind() {
    try (ServerTransport inPlace = inPlaceServer()) {
      BareReader reader = new BareReader().connect(inPlace, READS_BUFFER_BY_BUFFER, allocator);
      try {
        for (long id = 1; id <= 4; id++) {
          assertThat(RdmaTransport.exposedInPlace(send(reader.session, id, batch(id)).header())).isTrue();
        }
        assertThat(allocator.getAllocatedMemory()).isPositive();
      } finally {
        // The session closes with four batches registered in place: every region goes, then every buffer.
        reader.close();
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }
}
