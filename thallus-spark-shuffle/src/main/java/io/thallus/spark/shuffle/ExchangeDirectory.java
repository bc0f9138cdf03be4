package io.thallus.spark.shuffle;

import java.io.Serializable;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.IsolatedThreadSafeRpcEndpoint;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEndpoint;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.RpcTimeout;
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
 * A registration is taken only if the driver believes it ({@link RegistrationCheck}: an executor Spark knows, on the
 * host it names); a refused one is logged here and answered with the reason, and that executor is no push target
 * (reducers still pull from it). One sent from an address other than the executor's host is taken, with a warning
 * logged. The check asks Spark's block manager master, so the directory has a thread of its own rather than one of
 * the RpcEnv's shared ones.
 */
final class ExchangeDirectory implements IsolatedThreadSafeRpcEndpoint {
  static final String NAME = "thallus-exchange-directory";
  private static final System.Logger LOG = System.getLogger(ExchangeDirectory.class.getName());

  /** An executor's message: its endpoint is up. The answer is an {@link Answer}. */
  record Register(ExecutorEndpoint endpoint) implements Serializable {}

  /** The directory's answer to a {@link Register}: taken, or refused for {@code reason}. */
  record Answer(boolean taken, String reason) implements Serializable {
    static Answer take() {
      return new Answer(true, null);
    }

    static Answer refuse(String reason) {
      return new Answer(false, reason);
    }
  }

  private final RpcEnv rpcEnv;
  private final RegistrationCheck check;
  private final Map<String, ExecutorEndpoint> endpoints = new ConcurrentHashMap<>();

  private ExchangeDirectory(RpcEnv rpcEnv, RegistrationCheck check) {
    this.rpcEnv = rpcEnv;
    this.check = check;
    RpcEndpoint.$init$(this);
  }

  /** Sets the directory up on the driver's RpcEnv, under {@link #NAME}, taking what {@code check} believes. */
  static ExchangeDirectory start(RpcEnv rpcEnv, RegistrationCheck check) {
    ExchangeDirectory directory = new ExchangeDirectory(rpcEnv, check);
    rpcEnv.setupEndpoint(NAME, directory);
    return directory;
  }

  /**
   * Executor side: registers {@code endpoint} with the driver's directory, waiting at most Spark's ask timeout
   * ({@code spark.rpc.askTimeout}); a refusal is an {@link IllegalStateException} with the driver's reason.
   */
  static void register(RpcEnv executorRpcEnv, SparkConf conf, ExecutorEndpoint endpoint) {
    RpcEndpointRef driver = RpcUtils$.MODULE$.makeDriverRef(NAME, conf, executorRpcEnv);
    RpcTimeout deadline = RpcUtils$.MODULE$.askRpcTimeout(conf);
    Answer answer = driver.askSync(new Register(endpoint), deadline, ClassTag$.MODULE$.apply(Answer.class));
    if (!answer.taken()) {
      throw new IllegalStateException("the driver's exchange directory refused " + endpoint + ": " + answer.reason());
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

  /** Takes {@code endpoint} if the check believes it, sent from {@code sender} (null where Spark does not say). */
  private Answer take(ExecutorEndpoint endpoint, RpcAddress sender) {
    Optional<String> refusal;
    try {
      refusal = check.refusal(endpoint);
    } catch (RuntimeException e) {
      refusal = Optional.of("the driver could not check it: " + e);
    }
    if (refusal.isPresent()) {
      LOG.log(System.Logger.Level.WARNING, "Refused the exchange endpoint {0} (registered from {1}): {2}; that "
          + "executor is no push target, reducers pull from it", endpoint, sender, refusal.get());
      return Answer.refuse(refusal.get());
    }
    check.senderWarning(endpoint, sender == null ? null : sender.host()).ifPresent(warning -> LOG.log(
        System.Logger.Level.WARNING, "Took the exchange endpoint {0} (registered from {1}): {2}", endpoint, sender,
        warning));
    // A restarted executor gets a new id; one that registers twice (a retried ask) keeps its last address.
    endpoints.put(endpoint.executorId(), endpoint);
    return Answer.take();
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
        context.reply(take(register.endpoint(), context.senderAddress()));
        @SuppressWarnings("unchecked")
        B1 unit = (B1) BoxedUnit.UNIT;
        return unit;
      }
    };
  }
}
