package io.thallus.internal.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.thallus.Status;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What one server reports to a Micrometer registry: clients, streams, queries by outcome and their latency, batches
 * and bytes sent per transport, describes answered by kind, credit stalls, batches made ahead on producer threads,
 * and the batch memory held against its budget. With no registry given
 * the server reports into an empty composite, which records nothing.
 */
public final class ServerMetrics implements AutoCloseable {
  private static final String PREFIX = "thallus.";

  private final MeterRegistry registry;
  private final List<Meter> meters = new CopyOnWriteArrayList<>();
  private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();
  private final Map<String, Counter[]> sent = new ConcurrentHashMap<>();
  private final Map<String, Counter[]> received = new ConcurrentHashMap<>();
  private final Map<String, Counter> describes = new ConcurrentHashMap<>();
  private final Timer queryDuration;
  private final Counter creditStalls;
  private final Counter batchesMadeAhead;

  /** What the server counts of its connections and streams now (its registry's counts). */
  public interface Counts {
    int clientCount();

    int pendingCount();

    int statementsWaiting();

    int streamCount();
  }

  public ServerMetrics(MeterRegistry registry, Counts streams, BufferAllocator batchMemory) {
    this.registry = registry;
    keep(Gauge.builder(PREFIX + "clients", streams, Counts::clientCount)
        .description("Authenticated clients connected").register(registry));
    keep(Gauge.builder(PREFIX + "handshakes.pending", streams, Counts::pendingCount)
        .description("Connections still authenticating").register(registry));
    keep(Gauge.builder(PREFIX + "statements.waiting", streams, Counts::statementsWaiting)
        .description("Statements waiting for their credential's turn on the engine threads (maxStatementsPerCredential)")
        .register(registry));
    keep(Gauge.builder(PREFIX + "streams.open", streams, Counts::streamCount)
        .description("Result streams open").register(registry));
    keep(Gauge.builder(PREFIX + "batch.memory.held", batchMemory, BufferAllocator::getAllocatedMemory)
        .baseUnit("bytes").description("Arrow memory the server holds for its streams and clients").register(registry));
    keep(Gauge.builder(PREFIX + "batch.memory.budget", batchMemory, BufferAllocator::getLimit)
        .baseUnit("bytes").description("The server's Arrow memory budget (memoryLimit)").register(registry));
    queryDuration = keep(Timer.builder(PREFIX + "query.duration")
        .description("Time from OPEN to END or ERROR, every outcome")
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofMinutes(10))
        .register(registry));
    creditStalls = keep(Counter.builder(PREFIX + "credit.stalls")
        .description("Times a stream had a batch ready and waited for its client to grant a credit")
        .register(registry));
    batchesMadeAhead = keep(Counter.builder(PREFIX + "batches.made.ahead")
        .description("Batches a producer thread made while their stream sent the one before (overlap)")
        .register(registry));
  }

  private <M extends Meter> M keep(M meter) {
    meters.add(meter);
    return meter;
  }

  /** A stream ended: {@code failure} null for END, else the status its ERROR carried (or would have). */
  void queryEnded(Status failure, long nanos) {
    String outcome = failure == null ? "ok" : failure.code().name().toLowerCase(Locale.ROOT);
    outcomes.computeIfAbsent(outcome, o -> keep(Counter.builder(PREFIX + "queries")
        .description("Queries by outcome: ok, or the status code they failed with")
        .tag("outcome", o).register(registry))).increment();
    queryDuration.record(Duration.ofNanos(nanos));
  }

  /** A batch went out over {@code transport} ({@code bytes} of Arrow buffers). */
  void batchSent(String transport, long bytes) {
    Counter[] counters = sent.computeIfAbsent(transport, t -> new Counter[] {
        keep(Counter.builder(PREFIX + "batches.sent").description("Batches sent, per transport")
            .tag("transport", t).register(registry)),
        keep(Counter.builder(PREFIX + "sent").baseUnit("bytes")
            .description("Arrow buffer bytes sent, per transport").tag("transport", t).register(registry))});
    counters[0].increment();
    counters[1].increment(bytes);
  }

  /** An ingest wrote {@code batches} received over {@code transport} ({@code bytes} of Arrow buffers). */
  void batchesReceived(String transport, long batches, long bytes) {
    Counter[] counters = received.computeIfAbsent(transport, t -> new Counter[] {
        keep(Counter.builder(PREFIX + "batches.received").description("Batches ingested, per transport")
            .tag("transport", t).register(registry)),
        keep(Counter.builder(PREFIX + "received").baseUnit("bytes")
            .description("Arrow buffer bytes ingested, per transport").tag("transport", t).register(registry))});
    counters[0].increment(batches);
    counters[1].increment(bytes);
  }

  /** A DESCRIBE was answered with a name of {@code kind} (a sharded dataset's answer is its layout). */
  void described(io.thallus.DatasetDescription.Kind kind) {
    describes.computeIfAbsent(kind.name().toLowerCase(Locale.ROOT), k -> keep(Counter.builder(PREFIX + "describes")
        .description("DESCRIBE requests answered, by kind: table, view, files, shard").tag("kind", k)
        .register(registry))).increment();
  }

  void creditStall() {
    creditStalls.increment();
  }

  void batchMadeAhead() {
    batchesMadeAhead.increment();
  }

  /** Takes this server's meters out of the registry (another server may report into it next). */
  @Override
  public void close() {
    meters.forEach(registry::remove);
    meters.clear();
  }
}
