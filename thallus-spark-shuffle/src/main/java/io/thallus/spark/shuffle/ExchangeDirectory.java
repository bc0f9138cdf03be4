package io.thallus.spark.shuffle;

import java.io.Serializable;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEndpoint;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.RpcTimeout;
import org.apache.spark.rpc.ThreadSafeRpcEndpoint;
import org.apache.spark.util.RpcUtils$;
import scala.PartialFunction;
import scala.Function1;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The driver's directory of exchange endpoints: every executor of a {@code store=exchange} application registers its
 * endpoint here when it starts (a Spark RPC endpoint on the driver's RpcEnv, asked by the executors with a deadline),
 * and the driver picks push targets among the registered executors that are still alive when it builds a shuffle.
 */
final class ExchangeDirectory implements ThreadSafeRpcEndpoint {
  static final String NAME = "thallus-exchange-directory";

  /** An executor's message: its endpoint is up. The answer is {@code true}. */
  record Register(ExecutorEndpoint endpoint) implements Serializable {}

  private final RpcEnv rpcEnv;
  private final Map<String, ExecutorEndpoint> endpoints = new ConcurrentHashMap<>();

  private ExchangeDirectory(RpcEnv rpcEnv) {
    this.rpcEnv = rpcEnv;
    RpcEndpoint.$init$(this);
  }

  /** Sets the directory up on the driver's RpcEnv, under {@link #NAME}. */
  static ExchangeDirectory start(RpcEnv rpcEnv) {
    ExchangeDirectory directory = new ExchangeDirectory(rpcEnv);
    rpcEnv.setupEndpoint(NAME, directory);
    return directory;
  }

  /**
   * Executor side: registers {@code endpoint} with the driver's directory, waiting at most Spark's ask timeout
   * ({@code spark.rpc.askTimeout}).
   */
  static void register(RpcEnv executorRpcEnv, SparkConf conf, ExecutorEndpoint endpoint) {
    RpcEndpointRef driver = RpcUtils$.MODULE$.makeDriverRef(NAME, conf, executorRpcEnv);
    RpcTimeout deadline = RpcUtils$.MODULE$.askRpcTimeout(conf);
    Object answer = driver.askSync(new Register(endpoint), deadline, ClassTag$.MODULE$.apply(Boolean.class));
    if (!Boolean.TRUE.equals(answer)) {
      throw new IllegalStateException("the driver's exchange directory did not take " + endpoint + ": " + answer);
    }
  }

  /**
   * The registered endpoints of the executors in {@code alive}, ordered by executor id (numerically where ids are
   * numbers, as Spark's are); those of executors no longer alive are forgotten.
   */
  List<ExecutorEndpoint> live(Collection<String> alive) {
    endpoints.keySet().retainAll(alive);
    return endpoints.values().stream()
        .sorted(Comparator.comparingLong((ExecutorEndpoint e) -> numeric(e.executorId()))
            .thenComparing(ExecutorEndpoint::executorId))
        .toList();
  }

  /** Takes the directory off the driver's RpcEnv. */
  void shutdown() {
    try {
      stop();
    } catch (RuntimeException e) {
      // Spark stops its RpcEnv as the context stops; the directory then goes with it.
    }
  }

  private static long numeric(String id) {
    try {
      return Long.parseLong(id);
    } catch (NumberFormatException e) {
      return Long.MAX_VALUE;
    }
  }

  @Override
  public RpcEnv rpcEnv() {
    return rpcEnv;
  }

  @Override
  public PartialFunction<Object, BoxedUnit> receiveAndReply(RpcCallContext context) {
    return new AbstractPartialFunction<>() {
      @Override
      public boolean isDefinedAt(Object message) {
        return message instanceof Register;
      }

      @Override
      public <A1, B1> B1 applyOrElse(A1 message, Function1<A1, B1> otherwise) {
        if (!(message instanceof Register register) || register.endpoint() == null) {
          return otherwise.apply(message);
        }
        // A restarted executor gets a new id; one that registers twice (a retried ask) keeps its last address.
        endpoints.put(register.endpoint().executorId(), register.endpoint());
        context.reply(Boolean.TRUE);
        @SuppressWarnings("unchecked")
        B1 unit = (B1) BoxedUnit.UNIT;
        return unit;
      }
    };
  }
}
