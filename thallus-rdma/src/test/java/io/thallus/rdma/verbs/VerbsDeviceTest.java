package io.thallus.rdma.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.testing.JvmFlags;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
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
 * Real verbs on a real device: Soft-RoCE's rxe0 inside the User-Mode Linux guest ({@link RxeGuestTest} runs this
 * class there), or a NIC with {@code -Dthallus.rdma.direct=true}.
 */
@Tag("rdma-device")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class VerbsDeviceTest {
  /** rxe's RoCE v2 GID (index 1) at 1024 bytes: the loopback tests' fixed settings (forDevice has its own test). */
  static final QueuePair.ConnectOptions OPTIONS = new QueuePair.ConnectOptions(1, 1, 3, 16, 14, 7);
  private static final Duration WAIT = Duration.ofSeconds(20);

  private RdmaDevice device;
  private ProtectionDomain domain;
  private CompletionQueue completions;
  private final Arena arena = Arena.ofShared();

  static String deviceName() {
    List<String> names = RdmaDevice.deviceNames();
    assertThat(names).as("RDMA devices").isNotEmpty();
    return names.contains("rxe0") ? "rxe0" : names.getFirst();
  }

  @BeforeEach
  void open() {
    device = RdmaDevice.open(deviceName());
    domain = device.allocateProtectionDomain();
    completions = device.createCompletionQueue(256);
  }

  @AfterEach
  void close() {
    completions.close();
    domain.close();
    device.close();
    arena.close();
  }

  /** Two queue pairs of this process connected to each other over the device. */
  private QueuePair[] connectedPair() {
    QueuePair a = domain.createQueuePair(completions, new QueuePair.Capacity(128, 1));
    QueuePair b = domain.createQueuePair(completions, new QueuePair.Capacity(128, 1));
    a.connect(b.endpoint(OPTIONS), OPTIONS);
    b.connect(a.endpoint(OPTIONS), OPTIONS);
    return new QueuePair[] {a, b};
  }

  private static void fillPattern(MemorySegment segment, int seed) {
    for (long i = 0; i < segment.byteSize(); i++) {
      segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
    }
  }

  @Test
  void theDeviceIsOpenAndItsPortActive() {
    RdmaDevice.Attributes attributes = device.attributes();
    assertThat(attributes.maxReadsInFlightAsInitiator()).isPositive();
    assertThat(attributes.maxScatterGather()).isPositive();
    assertThat(attributes.ports()).isPositive();
    assertThat(device.port(1).isActive()).isTrue();
    assertThat(device.gid(1, OPTIONS.gidIndex())).hasSize(16).isNotEqualTo(new byte[16]);
  }

  @Test
  void aChainOfReadsPullsAScatteredListExactly() {
    MemorySegment remote = arena.allocate(1 << 20, 4096);
    MemorySegment local = arena.allocate(1 << 20, 4096);
    fillPattern(remote, 7);
    QueuePair[] pair = connectedPair();
    try (MemoryRegion exposed = domain.register(remote, EnumSet.of(MemoryRegion.Access.REMOTE_READ));
         MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
         ReadChain chain = pair[0].newReadChain(64)) {
      // Buffers of every shape an Arrow batch has: tiny validity bitmaps, odd lengths, large data buffers.
      long[][] pieces = {{0, 1}, {8, 3}, {4096, 64}, {10_000, 8191}, {65_536, 200_000}, {300_000, 17}, {524_288, 524_288}};
      long localOffset = 0;
      for (long[] piece : pieces) {
        chain.add(local.address() + localOffset, receive.localKey(), remote.address() + piece[0], exposed.remoteKey(),
            (int) piece[1]);
        localOffset += (piece[1] + 7) & ~7;
      }
      chain.post(42);
      int n = completions.await(Deadline.after(WAIT), "the reads");
      assertThat(n).isEqualTo(1);
      completions.check(0, "read chain");
      assertThat(completions.workRequestId(0)).isEqualTo(42);
      localOffset = 0;
      for (long[] piece : pieces) {
        assertThat(local.asSlice(localOffset, piece[1]).mismatch(remote.asSlice(piece[0], piece[1])))
            .as("piece at %d", piece[0]).isEqualTo(-1);
        localOffset += (piece[1] + 7) & ~7;
      }
      // The same chain, rewritten in place, runs again.
      chain.clear();
      fillPattern(remote, 99);
      chain.add(local.address(), receive.localKey(), remote.address(), exposed.remoteKey(), 1 << 20);
      chain.post(43);
      completions.await(Deadline.after(WAIT), "the second read");
      completions.check(0, "second read");
      assertThat(local.mismatch(remote)).isEqualTo(-1);
    } finally {
      pair[0].close();
      pair[1].close();
    }
  }

  @Test
  void oneReadScattersIntoSeveralLocalBuffers() {
    MemorySegment remote = arena.allocate(64 * 1024, 4096);
    fillPattern(remote, 3);
    QueuePair a = domain.createQueuePair(completions, new QueuePair.Capacity(16, 4));
    QueuePair b = domain.createQueuePair(completions, new QueuePair.Capacity(16, 4));
    a.connect(b.endpoint(OPTIONS), OPTIONS);
    b.connect(a.endpoint(OPTIONS), OPTIONS);
    try (RegisteredBufferPool pool = new RegisteredBufferPool(domain, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE),
             4 << 20);
         MemoryRegion exposed = domain.register(remote, EnumSet.of(MemoryRegion.Access.REMOTE_READ));
         ReadChain chain = a.newReadChain(4)) {
      int[] lengths = {100, 4000, 20_000, 41_436};
      for (int round = 0; round < 3; round++) {
        try (RegisteredBufferPool.Buffer buffer = pool.borrow(1 << 17, Deadline.after(WAIT))) {
          long[] addresses = new long[lengths.length];
          long offset = 0;
          for (int i = 0; i < lengths.length; i++) {
            addresses[i] = buffer.address() + offset + 64L * i; // gaps between the pieces, as padding would be
            offset += lengths[i];
          }
          chain.clear();
          chain.addScattered(exposed.address(), exposed.remoteKey(), buffer.localKey(), addresses, lengths);
          chain.post(round);
          completions.await(Deadline.after(WAIT), "the scattered read");
          completions.check(0, "scattered read");
          long remoteOffset = 0;
          for (int i = 0; i < lengths.length; i++) {
            MemorySegment piece = buffer.memory().asSlice(addresses[i] - buffer.address(), lengths[i]);
            assertThat(piece.mismatch(remote.asSlice(remoteOffset, lengths[i]))).as("piece %d", i).isEqualTo(-1);
            remoteOffset += lengths[i];
          }
        }
      }
      // Warm pool: three reads, one registration.
      assertThat(pool.registrations()).isEqualTo(1);
    } finally {
      a.close();
      b.close();
    }
  }

  @Test
  void aReadAfterDeregistrationFailsWithARemoteAccessError() {
    MemorySegment remote = arena.allocate(64 * 1024, 4096);
    MemorySegment local = arena.allocate(64 * 1024, 4096);
    QueuePair[] pair = connectedPair();
    try (MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
         ReadChain chain = pair[0].newReadChain(4)) {
      MemoryRegion exposed = domain.register(remote, EnumSet.of(MemoryRegion.Access.REMOTE_READ));
      int staleKey = exposed.remoteKey();
      exposed.close();
      chain.add(local.address(), receive.localKey(), remote.address(), staleKey, 4096);
      chain.post(1);
      completions.await(Deadline.after(WAIT), "the stale read");
      assertThatThrownBy(() -> completions.check(0, "read with a released key"))
          .isInstanceOfSatisfying(ThallusException.class, e -> {
            assertThat(e.code()).isEqualTo(StatusCode.PERMISSION_DENIED);
            assertThat(e.getMessage()).contains("REM_ACCESS_ERR");
          });
    } finally {
      pair[0].close();
      pair[1].close();
    }
  }

  /**
   * A reader whose reads complete on the shared queue, connected to an exposer that binds windows and waits for
   * them on {@code exposerCompletions}, a queue of its own.
   */
  private QueuePair[] readerAndExposer(CompletionQueue exposerCompletions) {
    QueuePair reader = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1));
    QueuePair exposer = domain.createQueuePair(exposerCompletions, new QueuePair.Capacity(16, 1));
    reader.connect(exposer.endpoint(OPTIONS), OPTIONS);
    exposer.connect(reader.endpoint(OPTIONS), OPTIONS);
    return new QueuePair[] {reader, exposer};
  }

  /** A read of {@code length} bytes with {@code key} through {@code reader}; returns the completion's error or null. */
  private ThallusException readWith(QueuePair reader, MemorySegment local, MemoryRegion receive, long remoteAddress,
      int key, int length) {
    try (ReadChain chain = reader.newReadChain(1)) {
      chain.add(local.address(), receive.localKey(), remoteAddress, key, length);
      chain.post(5);
      completions.await(Deadline.after(WAIT), "a read through a window");
      try {
        completions.check(0, "read through a window");
        return null;
      } catch (ThallusException e) {
        return e;
      }
    }
  }

  @Test
  void aWindowGrantsItsRangeUntilInvalidatedAndEveryBindGivesANewKey() {
    assertThat(device.attributes().memoryWindows()).as("type 2B memory windows on " + device.name()).isTrue();
    MemorySegment exposedMemory = arena.allocate(256 * 1024, 4096);
    MemorySegment local = arena.allocate(256 * 1024, 4096);
    fillPattern(exposedMemory, 11);
    try (CompletionQueue exposerCompletions = device.createCompletionQueue(16)) {
      QueuePair[] pair = readerAndExposer(exposerCompletions);
      QueuePair reader = pair[0];
      QueuePair exposer = pair[1];
      try (MemoryRegion exposed = domain.register(exposedMemory,
               EnumSet.of(MemoryRegion.Access.MEMORY_WINDOW_BIND));
           MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE))) {
        // The region itself grants no remote access: only a window's key does.
        assertThat(readWith(reader, local, receive, exposed.address(), exposed.remoteKey(), 4096))
            .isNotNull().satisfies(e -> assertThat(e.getMessage()).contains("REM_ACCESS_ERR"));
      } finally {
        reader.close();
        exposer.close();
      }
    }
    // A queue pair in error after a refused read cannot read again: the rest runs on fresh ones.
    try (CompletionQueue exposerCompletions = device.createCompletionQueue(16)) {
      QueuePair[] pair = readerAndExposer(exposerCompletions);
      QueuePair reader = pair[0];
      QueuePair exposer = pair[1];
      try (MemoryRegion exposed = domain.register(exposedMemory,
               EnumSet.of(MemoryRegion.Access.MEMORY_WINDOW_BIND));
           MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
           MemoryWindow window = domain.allocateMemoryWindow();
           WindowBinder binder = exposer.newWindowBinder()) {
        long start = exposed.address() + 8192;
        int first = binder.bind(window, exposed, start, 100_000, Deadline.after(WAIT));
        assertThat(window.isBound()).isTrue();
        assertThat(readWith(reader, local, receive, start, first, 100_000)).isNull();
        assertThat(local.asSlice(0, 100_000).mismatch(exposedMemory.asSlice(8192, 100_000))).isEqualTo(-1);

        binder.invalidate(window, Deadline.after(WAIT));
        int second = binder.bind(window, exposed, exposed.address(), 4096, Deadline.after(WAIT));
        assertThat(second).as("a rebound window's key").isNotEqualTo(first);
        assertThat(readWith(reader, local, receive, exposed.address(), second, 4096)).isNull();

        binder.invalidate(window, Deadline.after(WAIT));
        assertThat(window.isBound()).isFalse();
        binder.awaitInvalidations(Deadline.after(WAIT)); // rxe has run it already; a NIC may take a moment
        assertThat(readWith(reader, local, receive, exposed.address(), second, 4096))
            .as("a read with an invalidated window's key").isNotNull()
            .satisfies(e -> {
              assertThat(e.code()).isEqualTo(StatusCode.PERMISSION_DENIED);
              assertThat(e.getMessage()).contains("REM_ACCESS_ERR");
            });
      } finally {
        reader.close();
        exposer.close();
      }
    }
  }

  @Test
  void aWindowBoundForOneQueuePairIsRefusedToAnother() {
    MemorySegment exposedMemory = arena.allocate(64 * 1024, 4096);
    MemorySegment local = arena.allocate(64 * 1024, 4096);
    fillPattern(exposedMemory, 5);
    try (CompletionQueue exposerCompletions = device.createCompletionQueue(16);
         CompletionQueue otherCompletions = device.createCompletionQueue(16)) {
      QueuePair[] pair = readerAndExposer(exposerCompletions);
      QueuePair reader = pair[0];
      QueuePair exposer = pair[1];
      QueuePair[] otherPair = readerAndExposer(otherCompletions);
      QueuePair otherReader = otherPair[0];
      QueuePair otherExposer = otherPair[1];
      try (MemoryRegion exposed = domain.register(exposedMemory,
               EnumSet.of(MemoryRegion.Access.MEMORY_WINDOW_BIND));
           MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
           MemoryWindow window = domain.allocateMemoryWindow();
           WindowBinder binder = exposer.newWindowBinder()) {
        int key = binder.bind(window, exposed, exposed.address(), 64 * 1024, Deadline.after(WAIT));
        // Same domain, same key, live window: still refused, because the window belongs to the other connection.
        assertThat(readWith(otherReader, local, receive, exposed.address(), key, 4096))
            .as("a read with a window key bound for another queue pair").isNotNull()
            .satisfies(e -> assertThat(e.getMessage()).contains("REM_ACCESS_ERR"));
        assertThat(readWith(reader, local, receive, exposed.address(), key, 64 * 1024)).isNull();
        assertThat(local.mismatch(exposedMemory)).isEqualTo(-1);
        binder.invalidate(window, Deadline.after(WAIT));
      } finally {
        reader.close();
        exposer.close();
        otherReader.close();
        otherExposer.close();
      }
    }
  }

  @Test
  void aKeyOfAnotherProtectionDomainIsRefused() {
    // The rdma transport gives each client its own domain: this is why one client cannot read another's batches.
    MemorySegment elsewhere = arena.allocate(4096, 4096);
    MemorySegment local = arena.allocate(4096, 4096);
    QueuePair[] pair = connectedPair();
    try (ProtectionDomain other = device.allocateProtectionDomain();
         MemoryRegion foreign = other.register(elsewhere, EnumSet.of(MemoryRegion.Access.REMOTE_READ));
         MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
         ReadChain chain = pair[0].newReadChain(4)) {
      chain.add(local.address(), receive.localKey(), foreign.address(), foreign.remoteKey(), 4096);
      chain.post(7);
      completions.await(Deadline.after(WAIT), "a read with another domain's key");
      assertThatThrownBy(() -> completions.check(0, "read with another domain's key"))
          .isInstanceOfSatisfying(ThallusException.class, e -> {
            assertThat(e.code()).isEqualTo(StatusCode.PERMISSION_DENIED);
            assertThat(e.getMessage()).contains("REM_ACCESS_ERR");
          });
    } finally {
      pair[0].close();
      pair[1].close();
    }
  }

  @Test
  void aPeerThatIsGoneSurfacesAsAnErrorWithinTheDeadline() {
    MemorySegment remote = arena.allocate(4096, 4096);
    MemorySegment local = arena.allocate(4096, 4096);
    QueuePair.ConnectOptions impatient = new QueuePair.ConnectOptions(1, 1, 3, 16, 10, 1);
    QueuePair a = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1));
    QueuePair b = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1));
    a.connect(b.endpoint(impatient), impatient);
    b.connect(a.endpoint(impatient), impatient);
    try (MemoryRegion exposed = domain.register(remote, EnumSet.of(MemoryRegion.Access.REMOTE_READ));
         MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
         ReadChain chain = a.newReadChain(4)) {
      b.close(); // the peer is torn down
      chain.add(local.address(), receive.localKey(), remote.address(), exposed.remoteKey(), 4096);
      long start = System.nanoTime();
      chain.post(5);
      completions.await(Deadline.after(WAIT), "a read from a vanished peer");
      assertThatThrownBy(() -> completions.check(0, "read from a vanished peer"))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.UNAVAILABLE));
      assertThat(System.nanoTime() - start).isLessThan(WAIT.toNanos());
    } finally {
      a.close();
    }
  }

  @Test
  void twoProcessesConnectAndOneReadsTheOthersMemory() throws Exception {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(JvmFlags.forChild());
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), ExposingPeerMain.class.getName()));
    Process peer = new ProcessBuilder(command).redirectErrorStream(true).start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
         PrintWriter in = new PrintWriter(peer.getOutputStream(), true, StandardCharsets.UTF_8)) {
      String line;
      do {
        line = out.readLine();
        assertThat(line).as("the peer's output").isNotNull();
      } while (!line.startsWith("EXPOSED "));
      String[] exposed = line.split(" ");
      QueuePair.Endpoint remoteEndpoint = QueuePair.Endpoint.decode(exposed[1]);
      long address = Long.parseLong(exposed[2]);
      int rkey = Integer.parseInt(exposed[3]);
      int length = Integer.parseInt(exposed[4]);
      QueuePair qp = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1));
      MemorySegment local = arena.allocate(length, 4096);
      try (MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
           ReadChain chain = qp.newReadChain(4)) {
        in.println(qp.endpoint(OPTIONS).encode());
        qp.connect(remoteEndpoint, OPTIONS);
        assertThat(out.readLine()).isEqualTo("CONNECTED");
        chain.add(local.address(), receive.localKey(), address, rkey, length);
        chain.post(9);
        completions.await(Deadline.after(WAIT), "the read from the other process");
        completions.check(0, "cross-process read");
        MemorySegment expected = arena.allocate(length);
        ExposingPeerMain.fill(expected);
        assertThat(local.mismatch(expected)).isEqualTo(-1);
      } finally {
        qp.close();
      }
    } finally {
      peer.destroyForcibly();
      peer.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
