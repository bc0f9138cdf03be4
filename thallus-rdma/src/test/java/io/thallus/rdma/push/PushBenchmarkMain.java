package io.thallus.rdma.push;

import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.rdma.verbs.ReadChain;
import io.thallus.rdma.verbs.ReceiveSlots;
import io.thallus.rdma.verbs.SendChain;
import io.thallus.spi.Deadline;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * RDMA READ against RDMA WRITE with immediate, and the push channel built on the latter, in one process on one device
 * (harness/verbs-push-bench.sh runs it in the Soft-RoCE guest): messages per second and CPU per GB, the process's
 * own and the whole machine's (the guest's one vCPU also runs rxe, whose packet work is kernel time outside any
 * process). Every mode keeps 16 messages in flight and waits event-driven.
 * <ul>
 *   <li>{@code read}: the pull pattern; one side posts READs of the other's registered buffer.</li>
 *   <li>{@code write-imm}: the bare verb; one thread posts WRITEs with immediate, another takes the receive
 *   completions and reposts the receives.</li>
 *   <li>{@code push}: {@link PushSender} into a {@link PushReceiver}'s ring of 8 messages' bytes, the receiver on its
 *   own thread releasing each message as it comes (credit returned by SENDs).</li>
 * </ul>
 * Arguments: {@code SIZE COUNT [ROUNDS]}.
 */
public final class PushBenchmarkMain {
  private static final int IN_FLIGHT = 16;
  /** Which modes run ({@code -Dmodes=read,write-imm,push,push-1t}, all by default). */
  private static final java.util.Set<String> MODES =
      java.util.Set.of(System.getProperty("modes", "read,write-imm,push,push-1t").split(","));
  private static final QueuePair.ConnectOptions OPTIONS = new QueuePair.ConnectOptions(1, 1, 3, IN_FLIGHT, 14, 7);

  private PushBenchmarkMain() {}

  public static void main(String[] args) throws Exception {
    int size = Integer.parseInt(args[0]);
    int count = Integer.parseInt(args[1]);
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 2;
    try (RdmaDevice device = RdmaDevice.open(RdmaDevice.deviceNames().contains("rxe0") ? "rxe0"
             : RdmaDevice.deviceNames().getFirst());
         ProtectionDomain domain = device.allocateProtectionDomain();
         Arena arena = Arena.ofShared()) {
      QueuePair.ConnectOptions options = QueuePair.ConnectOptions.forDevice(device, IN_FLIGHT);
      MemorySegment local = arena.allocate(size, 4096);
      MemorySegment remote = arena.allocate(size, 4096);
      try (MemoryRegion localRegion = domain.register(local, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE));
           MemoryRegion remoteRegion = domain.register(remote, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE,
               MemoryRegion.Access.REMOTE_WRITE, MemoryRegion.Access.REMOTE_READ))) {
        // A warm-up of each, untimed, then the rounds alternating.
        for (int round = 0; round <= rounds; round++) {
          int n = round == 0 ? Math.max(8, count / 10) : count;
          if (MODES.contains("read")) {
            read(domain, options, localRegion, remoteRegion, size, n, label("read", round));
          }
          if (MODES.contains("write-imm")) {
            writeWithImmediate(domain, options, localRegion, remoteRegion, size, n, label("write-imm", round));
          }
          if (MODES.contains("push")) {
            push(domain, options, localRegion, size, n, label("push", round));
          }
          if (MODES.contains("push-1t")) {
            pushOneThread(domain, options, localRegion, size, n, label("push-1t", round));
          }
        }
      }
    }
  }

  /** Round 0 is the untimed warm-up. */
  private static String label(String mode, int round) {
    return round == 0 ? null : String.format(Locale.ROOT, "%-9s round %d", mode, round);
  }

  /** CPU seconds: this process's (user and system, /proc/self/stat), and the machine's busy time (/proc/stat). */
  private record Cpu(long wallNanos, double processSeconds, double machineSeconds) {
    static Cpu now() {
      return new Cpu(System.nanoTime(), processBusySeconds(), machineBusySeconds());
    }

    private static double processBusySeconds() {
      try {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / 100.0; // utime, stime; USER_HZ
      } catch (IOException | RuntimeException e) {
        return Double.NaN;
      }
    }

    private static double machineBusySeconds() {
      try {
        String[] fields = Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split("\\s+");
        long busy = 0;
        for (int i = 1; i < fields.length; i++) {
          if (i != 4 && i != 5) { // idle and iowait
            busy += Long.parseLong(fields[i]);
          }
        }
        return busy / 100.0; // USER_HZ
      } catch (IOException | RuntimeException e) {
        return Double.NaN;
      }
    }
  }

  private static void report(String label, int size, int count, Cpu start) {
    if (label == null) {
      return;
    }
    Cpu end = Cpu.now();
    double seconds = (end.wallNanos() - start.wallNanos()) / 1e9;
    double gigabytes = (double) size * count / 1e9;
    System.out.printf(Locale.ROOT, "%s: %d x %d bytes in %.3f s: %.0f msg/s, %.1f MiB/s, process CPU %.2f s/GB,"
        + " machine CPU %.2f s/GB%n", label, count, size, seconds, count / seconds,
        (double) size * count / seconds / (1 << 20), (end.processSeconds() - start.processSeconds()) / gigabytes,
        (end.machineSeconds() - start.machineSeconds()) / gigabytes);
  }

  private static QueuePair[] pair(ProtectionDomain domain, CompletionQueue a, CompletionQueue b,
      QueuePair.ConnectOptions options) {
    QueuePair first = domain.createQueuePair(a, new QueuePair.Capacity(IN_FLIGHT * 2, 1, IN_FLIGHT * 2));
    QueuePair second = domain.createQueuePair(b, new QueuePair.Capacity(IN_FLIGHT * 2, 1, IN_FLIGHT * 2));
    first.connect(second.endpoint(options), options);
    second.connect(first.endpoint(options), options,
        EnumSet.of(MemoryRegion.Access.REMOTE_READ, MemoryRegion.Access.REMOTE_WRITE));
    return new QueuePair[] {first, second};
  }

  private static void read(ProtectionDomain domain, QueuePair.ConnectOptions options, MemoryRegion local,
      MemoryRegion remote, int size, int count, String label) {
    try (CompletionQueue readerQueue = domain.device().createCompletionQueue(IN_FLIGHT * 4);
         CompletionQueue targetQueue = domain.device().createCompletionQueue(16)) {
      QueuePair[] pair = pair(domain, readerQueue, targetQueue, options);
      ReadChain[] chains = new ReadChain[IN_FLIGHT];
      try {
        for (int i = 0; i < IN_FLIGHT; i++) {
          chains[i] = pair[0].newReadChain(1);
          chains[i].add(local.address(), local.localKey(), remote.address(), remote.remoteKey(), size);
        }
        Deadline deadline = Deadline.after(Duration.ofMinutes(5));
        Cpu start = Cpu.now();
        int posted = 0;
        int done = 0;
        for (; posted < Math.min(IN_FLIGHT, count); posted++) {
          chains[posted].post(posted);
        }
        while (done < count) {
          int n = readerQueue.await(deadline, "reads");
          for (int i = 0; i < n; i++) {
            readerQueue.check(i, "read");
            int chain = (int) (readerQueue.workRequestId(i) % IN_FLIGHT);
            done++;
            if (posted < count) {
              chains[chain].post(posted++);
            }
          }
        }
        report(label, size, count, start);
      } finally {
        for (ReadChain chain : chains) {
          if (chain != null) {
            chain.close();
          }
        }
        pair[0].close();
        pair[1].close();
      }
    }
  }

  private static void writeWithImmediate(ProtectionDomain domain, QueuePair.ConnectOptions options,
      MemoryRegion local, MemoryRegion remote, int size, int count, String label) throws Exception {
    try (CompletionQueue writerQueue = domain.device().createCompletionQueue(IN_FLIGHT * 4);
         CompletionQueue targetQueue = domain.device().createCompletionQueue(IN_FLIGHT * 4)) {
      QueuePair[] pair = pair(domain, writerQueue, targetQueue, options);
      try (SendChain chain = pair[0].newSendChain(1);
           ReceiveSlots receives = pair[1].newReceiveSlots(IN_FLIGHT * 2)) {
        receives.postAll();
        Deadline deadline = Deadline.after(Duration.ofMinutes(5));
        Cpu start = Cpu.now();
        // One thread, as the read mode: at most IN_FLIGHT writes beyond the notifications taken (so a receive is
        // always posted: without that bound a writer outruns the reposting and stalls on the peer's RNR timer),
        // writes signalled every fourth (a completion frees the send-queue slots before it).
        long posted = 0;
        long completed = 0;
        int received = 0;
        while (received < count) {
          while (posted < count && posted - received < IN_FLIGHT && posted - completed < IN_FLIGHT * 2) {
            chain.clear();
            chain.writeWithImmediate(local.address(), local.localKey(), size, remote.address(), remote.remoteKey(),
                (int) posted);
            posted++;
            chain.post(posted, posted % 4 == 0 || posted == count);
          }
          boolean sendQueueFull = posted - completed >= IN_FLIGHT * 2;
          int n = sendQueueFull ? 0 : targetQueue.await(deadline, "notifications");
          for (int i = 0; i < n; i++) {
            targetQueue.check(i, "receive");
            if (targetQueue.byteLength(i) != size || targetQueue.immediate(i) != received) {
              throw new IllegalStateException("notification " + received + ": " + targetQueue.byteLength(i)
                  + " bytes, immediate " + targetQueue.immediate(i));
            }
            receives.post(ReceiveSlots.slotOf(targetQueue.workRequestId(i)));
            received++;
          }
          int w = sendQueueFull ? writerQueue.await(deadline, "writes") : writerQueue.poll();
          for (int i = 0; i < w; i++) {
            writerQueue.check(i, "write");
            completed = Math.max(completed, writerQueue.workRequestId(i));
          }
        }
        report(label, size, count, start);
      } finally {
        pair[0].close();
        pair[1].close();
      }
    }
  }

  private static void push(ProtectionDomain domain, QueuePair.ConnectOptions options, MemoryRegion local, int size,
      int count, String label) throws Exception {
    try (PushReceiver receiver = PushReceiver.create(domain, size * 8, IN_FLIGHT);
         PushSender sender = PushSender.create(domain, IN_FLIGHT)) {
      sender.connect(receiver.endpoint(options), options, receiver.ring());
      receiver.connect(sender.endpoint(options), options);
      Deadline deadline = Deadline.after(Duration.ofMinutes(5));
      Cpu start = Cpu.now();
      CompletableFuture<Void> receiving = CompletableFuture.runAsync(() -> {
        for (int i = 0; i < count; i++) {
          PushReceiver.Message message = receiver.await(deadline);
          if (message.length() != size) {
            throw new IllegalStateException("message " + i + ": " + message.length() + " bytes");
          }
          receiver.release(message);
        }
      });
      long ticket = 0;
      for (int i = 0; i < count; i++) {
        ticket = sender.push(local.address(), local.localKey(), size, deadline);
      }
      sender.awaitWritten(ticket, deadline);
      receiving.get();
      report(label, size, count, start);
    }
  }

  /** The push channel driven by one thread, as the read mode is: no hand-off between a sender and a receiver thread. */
  private static void pushOneThread(ProtectionDomain domain, QueuePair.ConnectOptions options, MemoryRegion local,
      int size, int count, String label) {
    try (PushReceiver receiver = PushReceiver.create(domain, size * 8, IN_FLIGHT);
         PushSender sender = PushSender.create(domain, IN_FLIGHT)) {
      sender.connect(receiver.endpoint(options), options, receiver.ring());
      receiver.connect(sender.endpoint(options), options);
      Deadline deadline = Deadline.after(Duration.ofMinutes(5));
      Cpu start = Cpu.now();
      long ticket = 0;
      int released = 0;
      while (released < count) {
        long pushed;
        while (sender.pushed() < count
            && (pushed = sender.tryPush(local.address(), local.localKey(), size)) > 0) {
          ticket = pushed;
        }
        if (sender.pushed() == released) {
          // Everything pushed is released and its credit on the way: wait for it on the sender's side.
          ticket = sender.push(local.address(), local.localKey(), size, deadline);
          continue;
        }
        PushReceiver.Message message = receiver.await(deadline);
        do {
          if (message.length() != size) {
            throw new IllegalStateException("message " + released + ": " + message.length() + " bytes");
          }
          receiver.release(message);
          released++;
        } while ((message = receiver.poll()) != null);
      }
      sender.awaitWritten(ticket, deadline);
      report(label, size, count, start);
    }
  }
}
