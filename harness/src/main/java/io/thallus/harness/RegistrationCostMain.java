package io.thallus.harness;

import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.rdma.verbs.RegisteredBufferPool;
import io.thallus.rdma.verbs.MemoryWindow;
import io.thallus.rdma.verbs.WindowBinder;

import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The rdma transport's server-memory choice, measured: exposing a batch where it lies (register DuckDB's buffers,
 * deregister on release: no copy, but a registration per batch) against copying it into a pre-registered buffer
 * (one memcpy, no registration), and what the per-batch memory window adds to the copy (bind before the
 * descriptor goes out, invalidate on release). In place is measured as one registration of the whole batch and as
 * the transport does it, one per column buffer. Prints microseconds per batch for the batch sizes Thallus uses.
 */
public final class RegistrationCostMain {
  private RegistrationCostMain() {}

  public static void main(String[] args) {
    try (RdmaDevice device = RdmaDevice.open(Devices.deviceName());
         ProtectionDomain domain = device.allocateProtectionDomain();
         RegisteredBufferPool pool = new RegisteredBufferPool(domain, EnumSet.of(MemoryRegion.Access.REMOTE_READ),
             1L << 30);
         Arena arena = Arena.ofShared();
         CompletionQueue readerCompletions = device.createCompletionQueue(16);
         CompletionQueue exposerCompletions = device.createCompletionQueue(16);
         RegisteredBufferPool windowPool = new RegisteredBufferPool(domain,
             EnumSet.of(MemoryRegion.Access.MEMORY_WINDOW_BIND), 1L << 30)) {
      QueuePair reader = domain.createQueuePair(readerCompletions, new QueuePair.Capacity(16, 1));
      QueuePair exposer = domain.createQueuePair(exposerCompletions, new QueuePair.Capacity(16, 1));
      QueuePair.ConnectOptions options = Devices.options(device);
      reader.connect(exposer.endpoint(options), options);
      exposer.connect(reader.endpoint(options), options);
      WindowBinder binder = exposer.newWindowBinder();
      MemoryWindow window = device.attributes().memoryWindows() ? domain.allocateMemoryWindow() : null;
      for (long size : new long[] {64 << 10, 4 << 20, 16 << 20, 64 << 20}) {
        int rounds = size >= (64 << 20) ? 10 : 50;
        MemorySegment batch = arena.allocate(size, 64);
        batch.fill((byte) 1); // fault the pages in, as DuckDB's result memory is
        for (int warm = 0; warm < 2; warm++) {
          domain.register(batch, EnumSet.of(MemoryRegion.Access.REMOTE_READ)).close();
        }
        long start = System.nanoTime();
        for (int i = 0; i < rounds; i++) {
          domain.register(batch, EnumSet.of(MemoryRegion.Access.REMOTE_READ)).close();
        }
        double register = (System.nanoTime() - start) / 1e3 / rounds;
        // What the transport does for a batch of eight BIGINT columns: a registration per column buffer.
        long column = size / 8;
        start = System.nanoTime();
        for (int i = 0; i < rounds; i++) {
          MemoryRegion[] columns = new MemoryRegion[8];
          for (int c = 0; c < 8; c++) {
            columns[c] = domain.register(batch.address() + c * column, column,
                EnumSet.of(MemoryRegion.Access.REMOTE_READ));
          }
          for (MemoryRegion region : columns) {
            region.close();
          }
        }
        double perColumn = (System.nanoTime() - start) / 1e3 / rounds;
        try (RegisteredBufferPool.Buffer warmBuffer = pool.borrow(size, Deadline.after(Duration.ofSeconds(10)))) {
          MemoryUtil.copyMemory(batch.address(), warmBuffer.address(), size);
        }
        start = System.nanoTime();
        for (int i = 0; i < rounds; i++) {
          try (RegisteredBufferPool.Buffer buffer = pool.borrow(size, Deadline.after(Duration.ofSeconds(10)))) {
            MemoryUtil.copyMemory(batch.address(), buffer.address(), size);
          }
        }
        double copy = (System.nanoTime() - start) / 1e3 / rounds;
        double windowed = Double.NaN;
        if (window != null) {
          for (int i = -2; i < rounds; i++) { // two rounds of warm-up
            if (i == 0) {
              start = System.nanoTime();
            }
            try (RegisteredBufferPool.Buffer buffer = windowPool.borrow(size, Deadline.after(Duration.ofSeconds(10)))) {
              MemoryUtil.copyMemory(batch.address(), buffer.address(), size);
              binder.bind(window, buffer.region(), buffer.address(), size, Deadline.after(Duration.ofSeconds(10)));
              binder.invalidate(window, Deadline.after(Duration.ofSeconds(10)));
            }
          }
          windowed = (System.nanoTime() - start) / 1e3 / rounds;
        }
        System.out.printf(Locale.ROOT, "batch %,d bytes: register+deregister in place %.1f us (as 8 column buffers"
            + " %.1f us), copy into a pre-registered buffer %.1f us (%.1fx), copy + bind and invalidate a memory window"
            + " %.1f us%n", size, register, perColumn, copy, register / copy, windowed);
      }
      if (window != null) {
        window.close();
      }
      binder.close();
      reader.close();
      exposer.close();
    }
  }
}
