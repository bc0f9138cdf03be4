package io.thallus.spark.shuffle;

import io.thallus.exchange.EndpointOptions;
import io.thallus.exchange.ExchangeEndpoint;
import io.thallus.exchange.MapOutput;
import java.nio.file.Path;
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
 * The store on a Thallus exchange endpoint ({@code thallus-exchange}), one per executor, started when the executor's
 * first exchange task needs it and closed when the shuffle manager stops. A map task's batches stay in its
 * executor's endpoint (memory, then local disk) until Spark unregisters the shuffle; its MapStatus points at a
 * {@link BlockManagerId} with the executor's id and host and the endpoint's port, so reducers know where to pull and
 * Spark's bookkeeping of lost executors (by executor id and host) applies. Reducers pull, one request per peer
 * endpoint and reduce partition ({@link ExchangeReduceInput}); nothing is pushed.
 */
final class ExchangeStore implements ShuffleStore {
  private final String transport;
  private final long memoryBound;
  private BufferAllocator allocator;
  private ExchangeEndpoint endpoint;
  private BlockManagerId location;
  private boolean closed;

  ExchangeStore(SparkConf conf) {
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
  }

  @Override
  public MapOutputSink openMapOutput(int shuffleId, long mapId, ExchangeLayout layout) {
    // Pull only: no partition has a push target, so the output stays here until a reducer pulls it.
    List<io.thallus.exchange.EndpointAddress> noPush = Collections.nCopies(layout.partitions(), null);
    return new EndpointSink(endpoint().open(shuffleId, mapId, layout.arrowSchema(), layout.partitions(), noPush));
  }

  @Override
  public BatchSource openReduceInput(
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations,
      boolean fetchContiguousBlocksAtOnce, ExchangeLayout layout, BufferAllocator allocator, TaskContext context,
      ShuffleReadMetricsReporter metrics) {
    return new ExchangeReduceInput(endpoint(), locations, metrics);
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
          .push(false);
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
    private final MapOutput output;
    private long rawBytes;
    private long addNanos;

    EndpointSink(MapOutput output) {
      this.output = output;
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
      return output.commit();
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
