package io.thallus.spark.shuffle;

import io.thallus.BatchCompression;
import io.thallus.exchange.EndpointAddress;
import io.thallus.exchange.EndpointOptions;
import io.thallus.exchange.ExchangeEndpoint;
import io.thallus.exchange.MapOutput;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import scala.Option;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Seq;

/**
 * The store on a Thallus exchange endpoint ({@code thallus-exchange}), one per executor, started when the executor
 * starts (or by its first exchange task, if that comes first) and closed when the shuffle manager stops. A map
 * task's batches stay in its executor's endpoint (memory, then local disk) until Spark unregisters the shuffle; its
 * MapStatus points at a {@link BlockManagerId} with the executor's id and host and the endpoint's port, so reducers
 * know where to pull and Spark's bookkeeping of lost executors (by executor id and host) applies. With a shuffle's
 * {@link PushPlan}, map tasks also push each partition's batches to the executor that will reduce it; reducers read
 * what was pushed to them and pull the rest, one request per peer endpoint and reduce partition
 * ({@link ExchangeReduceInput}).
 */
final class ExchangeStore implements ShuffleStore {
  private static final System.Logger LOG = System.getLogger(ExchangeStore.class.getName());
  private static final Duration REGISTRATION_DEADLINE = Duration.ofMinutes(2);
  private final SparkConf conf;
  private final String transport;
  private final long memoryBound;
  private final BatchCompression compression;
  private BufferAllocator allocator;
  private ExchangeEndpoint endpoint;
  private BlockManagerId location;
  private boolean closed;

  ExchangeStore(SparkConf conf) {
    this(conf, false);
  }

  /**
   * {@code executor}: this store runs on an executor (not the driver), so it starts its endpoint as soon as the
   * executor's block manager knows its host, and registers it with the driver's {@link ExchangeDirectory}, which then
   * names it as a push target. Spark makes the shuffle manager before it initializes the block manager, so that
   * happens on a thread of its own; a registration that fails only leaves this executor out of the push targets.
   */
  ExchangeStore(SparkConf conf, boolean executor) {
    String named = conf.get(ShuffleOptions.EXCHANGE_TRANSPORT, "tcp").trim().toLowerCase(Locale.ROOT);
    if (!List.of("tcp", "shm", "cma").contains(named)) {
      throw new IllegalArgumentException(ShuffleOptions.EXCHANGE_TRANSPORT + " must be tcp, shm or cma, not '"
          + named + "'");
    }
    this.transport = named;
    long bytes = conf.getSizeAsBytes(ShuffleOptions.EXCHANGE_MEMORY, "256m");
    if (bytes < 1 << 20) {
      throw new IllegalArgumentException(ShuffleOptions.EXCHANGE_MEMORY + " must be at least 1m, not " + bytes
          + " bytes");
    }
    this.memoryBound = bytes;
    this.compression = ExchangeCompression.of(conf.get(ShuffleOptions.EXCHANGE_COMPRESSION, "auto"))
        .codecFor(transport);
    this.conf = conf;
    if (executor) {
      Thread registration = new Thread(this::startAndRegister, "thallus-exchange-register");
      registration.setDaemon(true);
      registration.start();
    }
  }

  private void startAndRegister() {
    try {
      long deadline = System.nanoTime() + REGISTRATION_DEADLINE.toNanos();
      // The block manager's id (this executor's id and host) is set when the executor initializes it, just after it
      // made this shuffle manager: wait for it, at most the deadline.
      while (SparkEnv.get() == null || SparkEnv.get().blockManager().blockManagerId() == null) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the executor's block manager was not initialized within "
              + REGISTRATION_DEADLINE);
        }
        Thread.sleep(10);
      }
      ExchangeEndpoint started = endpoint();
      BlockManagerId executor = SparkEnv.get().blockManager().blockManagerId();
      ExchangeDirectory.register(SparkEnv.get().rpcEnv(), conf,
          new ExecutorEndpoint(executor.executorId(), executor.host(), started.address().port()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "The Thallus exchange endpoint was not registered with the driver; "
          + "reducers will pull from this executor and nothing is pushed to it", e);
    }
  }

  @Override
  public MapOutputSink openMapOutput(int shuffleId, long mapId, ExchangeLayout layout) {
    // Pull only: no partition has a push target, so the output stays here until a reducer pulls it.
    List<EndpointAddress> noPush = Collections.nCopies(layout.partitions(), null);
    return new EndpointSink(endpoint(),
        endpoint().open(shuffleId, mapId, layout.arrowSchema(), layout.partitions(), noPush), null, null);
  }

  /**
   * With the dependency's push plan, each partition's batches are also pushed to its target executor as they fill
   * (the endpoint skips partitions whose target is this executor), and the commit waits (bounded) for them to land.
   */
  @Override
  public MapOutputSink openMapOutput(int shuffleId, long mapId, ArrowShuffleDependency dependency) {
    ExchangeLayout layout = dependency.layout();
    PushPlan plan = dependency.pushPlan();
    if (plan == null || plan.partitions() != layout.partitions()) {
      return openMapOutput(shuffleId, mapId, layout);
    }
    return new EndpointSink(endpoint(),
        endpoint().open(shuffleId, mapId, layout.arrowSchema(), layout.partitions(), plan.addresses()), plan,
        dependency.metrics());
  }

  @Override
  public BatchSource openReduceInput(
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations,
      boolean fetchContiguousBlocksAtOnce, ArrowShuffleDependency dependency, BufferAllocator allocator,
      TaskContext context, ShuffleReadMetricsReporter metrics) {
    return new ExchangeReduceInput(endpoint(), locations, metrics, dependency.metrics());
  }

  @Override
  public BatchSource openReduceInput(
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations,
      boolean fetchContiguousBlocksAtOnce, ExchangeLayout layout, BufferAllocator allocator, TaskContext context,
      ShuffleReadMetricsReporter metrics) {
    return new ExchangeReduceInput(endpoint(), locations, metrics, null);
  }

  @Override
  public synchronized BlockManagerId location() {
    endpoint();
    return location;
  }

  @Override
  public void removeShuffle(int shuffleId, Collection<Long> mapIds) {
    ExchangeEndpoint started;
    synchronized (this) {
      started = endpoint;
    }
    // An executor that ran no exchange task of any shuffle has nothing to remove.
    if (started != null) {
      started.removeShuffle(shuffleId);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (endpoint != null) {
      endpoint.close();
      allocator.close();
    }
  }

  /** The executor's endpoint, started at first use on the executor's host, spilling into Spark's local dirs. */
  private synchronized ExchangeEndpoint endpoint() {
    if (closed) {
      throw new IllegalStateException("the Thallus shuffle manager has stopped");
    }
    if (endpoint == null) {
      SparkEnv env = SparkEnv.get();
      BlockManagerId executor = env.blockManager().blockManagerId();
      Path spill = env.blockManager().diskBlockManager().localDirs()[0].toPath().resolve("thallus-exchange");
      allocator = ArrowUtils.rootAllocator().newChildAllocator("thallus-exchange-" + executor.executorId(), 0,
          Long.MAX_VALUE);
      EndpointOptions.Builder options = EndpointOptions.builder(allocator, spill)
          .bindHost(executor.host())
          .peerTransport(transport)
          .memoryBound(memoryBound)
          .compression(compression)
          .push(true);
      // With spark.authenticate, only this application's executors may pull or push: the endpoint asks for the
      // application's secret, as Spark's own block transfer does. Without it Spark's own ports are open to anyone
      // who reaches them (RPC included), and so is the endpoint.
      if (env.securityManager().isAuthenticationEnabled()) {
        options.secret(env.securityManager().getSecretKey());
      }
      try {
        endpoint = ExchangeEndpoint.start(options.build());
      } catch (RuntimeException e) {
        allocator.close();
        throw e;
      }
      // Spark finds a lost executor's map outputs by executor id and host; the port is where reducers pull.
      location = BlockManagerId$.MODULE$.apply(executor.executorId(), executor.host(), endpoint.address().port(),
          Option.empty());
    }
    return endpoint;
  }

  /** A map task's batches into its endpoint output; commit answers the bytes kept per partition. */
  private static final class EndpointSink implements MapOutputSink {
    private final ExchangeEndpoint endpoint;
    private final MapOutput output;
    private final PushPlan plan;
    private final ExchangeMetrics metrics;
    private long rawBytes;
    private long addNanos;

    EndpointSink(ExchangeEndpoint endpoint, MapOutput output, PushPlan plan, ExchangeMetrics metrics) {
      this.endpoint = endpoint;
      this.output = output;
      this.plan = plan;
      this.metrics = metrics;
    }

    @Override
    public void add(int partition, VectorSchemaRoot batch) {
      long started = System.nanoTime();
      for (FieldVector vector : batch.getFieldVectors()) {
        rawBytes += vector.getBufferSize();
      }
      output.add(partition, batch);
      addNanos += System.nanoTime() - started;
    }

    @Override
    public long[] commit() {
      long[] sizes = output.commit();
      if (plan != null && output.pushesSubmitted() > 0) {
        metrics.pushes.add(output.pushesSubmitted());
        if (plan.commitWaitMillis() > 0) {
          // The reduce stage starts when the last map commits: a push still queued then arrives too late to be
          // read, and the reducer pulls that map instead. So the map waits, bounded, for its pushes to land; at
          // the bound it commits anyway (the reducers pull what did not arrive).
          long started = System.nanoTime();
          try {
            endpoint.awaitPushes(Duration.ofMillis(plan.commitWaitMillis()));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          metrics.pushWaitTime.add(System.nanoTime() - started);
        }
      }
      return sizes;
    }

    @Override
    public long rawBytes() {
      return rawBytes;
    }

    @Override
    public long encodeNanos() {
      return addNanos;
    }

    @Override
    public void close() {
      output.close();
    }
  }
}
