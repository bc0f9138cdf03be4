package io.thallus.harness;

import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.rdma.verbs.ReadChain;

import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;

/**
 * RDMA READ from Java the way perftest measures it, to put next to {@code ib_read_bw} and {@code ib_read_lat} in
 * the same guest (harness/rdma-bench.sh): bandwidth with many reads in flight, each a reused stateful chain of one
 * request; latency with one read at a time, completions polled.
 * Arguments: {@code bw SIZE ITERATIONS} or {@code lat SIZE ITERATIONS}.
 */
public final class ReadBenchmarkMain {
  private ReadBenchmarkMain() {}

  public static void main(String[] args) {
    String mode = args[0];
    int size = Integer.parseInt(args[1]);
    int iterations = Integer.parseInt(args[2]);
    try (Arena arena = Arena.ofShared();
         RdmaDevice device = RdmaDevice.open(Devices.deviceName());
         ProtectionDomain domain = device.allocateProtectionDomain();
         CompletionQueue completions = device.createCompletionQueue(1024)) {
      int inFlight = Math.min(128, device.attributes().maxReadsInFlightAsInitiator());
      QueuePair.ConnectOptions options = QueuePair.ConnectOptions.forDevice(device, inFlight);
      QueuePair reader = domain.createQueuePair(completions, new QueuePair.Capacity(inFlight * 2, 1));
      QueuePair target = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1));
      reader.connect(target.endpoint(options), options);
      target.connect(reader.endpoint(options), options);
      MemorySegment remote = arena.allocate(size, 4096);
      MemorySegment local = arena.allocate(size, 4096);
      try (MemoryRegion exposed = domain.register(remote, EnumSet.of(MemoryRegion.Access.REMOTE_READ));
           MemoryRegion receive = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE))) {
        boolean spin = mode.endsWith("spin");
        if (mode.startsWith("bw")) {
          bandwidth(completions, reader, exposed, receive, size, iterations, inFlight, spin, false);
          bandwidth(completions, reader, exposed, receive, size, iterations, inFlight, spin, true);
        } else {
          latency(completions, reader, exposed, receive, size, iterations, false);
          latency(completions, reader, exposed, receive, size, iterations, true);
        }
      } finally {
        reader.close();
        target.close();
      }
    }
  }

  /** Waits for completions either event-driven or by polling (as perftest does), until the deadline. */
  private static int next(CompletionQueue completions, Deadline deadline, boolean spin) {
    if (!spin) {
      return completions.await(deadline, "reads");
    }
    int n;
    while ((n = completions.poll()) == 0) {
      if (deadline.isExpired()) {
        throw deadline.expired("reads");
      }
    }
    return n;
  }

  private static void bandwidth(CompletionQueue completions, QueuePair reader, MemoryRegion exposed,
      MemoryRegion receive, int size, int iterations, int inFlight, boolean spin, boolean report) {
    ReadChain[] chains = new ReadChain[inFlight];
    for (int i = 0; i < inFlight; i++) {
      chains[i] = reader.newReadChain(1);
      chains[i].add(receive.address(), receive.localKey(), exposed.address(), exposed.remoteKey(), size);
    }
    Deadline deadline = Deadline.after(Duration.ofMinutes(5));
    int posted = 0;
    int done = 0;
    long start = System.nanoTime();
    for (; posted < Math.min(inFlight, iterations); posted++) {
      chains[posted].post(posted);
    }
    while (done < iterations) {
      int n = next(completions, deadline, spin);
      for (int i = 0; i < n; i++) {
        completions.check(i, "read");
        int chain = (int) (completions.workRequestId(i) % inFlight);
        done++;
        if (posted < iterations) {
          chains[chain].post(posted++);
        }
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    for (ReadChain chain : chains) {
      chain.close();
    }
    if (report) {
      // MiB/s, the unit perftest prints as "MB/sec".
      System.out.printf(Locale.ROOT, "java RDMA READ bw (%s): %d bytes x %d reads, %d in flight: %.1f MiB/s%n",
          spin ? "polling" : "event-driven", size, iterations, inFlight,
          (double) size * iterations / seconds / (1 << 20));
    }
  }

  private static void latency(CompletionQueue completions, QueuePair reader, MemoryRegion exposed,
      MemoryRegion receive, int size, int iterations, boolean report) {
    // One clock reading per run, not per read: the guest's clock is a system call.
    try (ReadChain chain = reader.newReadChain(1)) {
      chain.add(receive.address(), receive.localKey(), exposed.address(), exposed.remoteKey(), size);
      Deadline deadline = Deadline.after(Duration.ofMinutes(5));
      long start = System.nanoTime();
      for (int i = 0; i < iterations; i++) {
        chain.post(i);
        next(completions, deadline, true);
        completions.check(0, "read");
      }
      double micros = (System.nanoTime() - start) / 1e3 / iterations;
      if (report) {
        System.out.printf(Locale.ROOT, "java RDMA READ lat: %d bytes x %d, one at a time, polling: average %.2f us%n",
            size, iterations, micros);
      }
    }
  }
}
