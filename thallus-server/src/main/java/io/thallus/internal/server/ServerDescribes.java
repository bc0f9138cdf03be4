package io.thallus.internal.server;

import io.thallus.DatasetDescription;
import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.TableNames;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntPredicate;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's DESCRIBE requests: each is checked on the event loop (stream id, name, dataset, the client's
 * stream limit), run on the connection's engine lane in its engine session, and answered with DESCRIBED or ERROR
 * on its stream id. A CANCEL of the id or the client's leaving stops it.
 */
final class ServerDescribes {
  private static final Logger LOG = LoggerFactory.getLogger(ServerDescribes.class);

  private final ServerContext context;
  private final Executor lane;
  private final Supplier<EngineSession> session;
  private final Supplier<BufferAllocator> allocator;
  private final Consumer<Message> send;
  private final Consumer<Status> failConnection;
  private final BooleanSupplier shuttingDown;
  /** The describes that have not answered yet, by stream id. */
  private final Map<Integer, CancelSignal> running = new ConcurrentHashMap<>();

  /**
   * The connection's pieces a describe needs: its engine {@code lane}, its engine {@code session} and memory
   * ({@code allocator}), where its answers go ({@code send}), how the connection ends on a protocol error, and
   * whether the server is shutting down (it then takes no new request).
   */
  ServerDescribes(ServerContext context, Executor lane, Supplier<EngineSession> session,
      Supplier<BufferAllocator> allocator, Consumer<Message> send, Consumer<Status> failConnection,
      BooleanSupplier shuttingDown) {
    this.context = context;
    this.lane = lane;
    this.session = session;
    this.allocator = allocator;
    this.send = send;
    this.failConnection = failConnection;
    this.shuttingDown = shuttingDown;
  }

  /** Describes not answered yet: they count against the client's streams. */
  int running() {
    return running.size();
  }

  /** Refuses a stream or ingest on {@code streamId} while a describe still runs there (one id space for all). */
  void checkFree(int streamId) {
    if (running.containsKey(streamId)) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "stream id " + streamId + " is in use");
    }
  }

  /**
   * Checks {@code request} and starts it, or answers its ERROR. {@code inUse} says whether another stream or ingest
   * has the id; {@code openElsewhere} is how many of those the client has open.
   */
  void start(Message.Describe request, IntPredicate inUse, int openElsewhere) {
    int streamId = request.streamId();
    if (streamId <= 0) {
      failConnection.accept(Status.of(StatusCode.PROTOCOL_ERROR, "stream id " + streamId
          + " is not allowed: stream ids start at 1 (0 is reserved for connection errors)"));
      return;
    }
    try {
      if (inUse.test(streamId) || running.containsKey(streamId)) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "stream id " + streamId + " is in use");
      }
      TableNames.check(request.name());
      Optional<Path> dataset = Optional.empty();
      if (!request.dataset().isEmpty()) {
        DataRoot root = context.dataRoot().orElseThrow(() -> ThallusException.of(StatusCode.PERMISSION_DENIED,
            "this server serves no datasets (it was started without a data root)"));
        dataset = Optional.of(root.resolve(request.dataset()));
      }
      int open = openElsewhere + running.size();
      if (open >= context.limits().maxStreamsPerConnection()) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "this client already has " + open
            + " streams open, the most this server allows; close one first");
      }
      if (shuttingDown.getAsBoolean()) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the server is shutting down");
      }
      CancelSignal cancel = new CancelSignal();
      running.put(streamId, cancel);
      Optional<Path> bound = dataset;
      lane.execute(() -> run(streamId, request.name(), bound, cancel));
    } catch (ThallusException e) {
      send.accept(new Message.Error(streamId, e.code(), e.status().description()));
    }
  }

  private void run(int streamId, String name, Optional<Path> dataset, CancelSignal cancel) {
    Message answer;
    try {
      if (cancel.isCancelled()) {
        throw ThallusException.of(StatusCode.CANCELLED, "describing " + name + " was cancelled by the client");
      }
      DatasetDescription description = session.get().describe(name, dataset, allocator.get(), cancel);
      answer = new Message.Described(streamId, description);
    } catch (ThallusException e) {
      answer = new Message.Error(streamId, cancel.isCancelled() ? StatusCode.CANCELLED : e.code(),
          cancel.isCancelled() ? "describing " + name + " was cancelled" : e.status().description());
    } catch (RuntimeException e) {
      LOG.error("describing {} failed", name, e);
      answer = new Message.Error(streamId, StatusCode.INTERNAL, "describing " + name + " failed: " + e);
    } finally {
      running.remove(streamId);
    }
    send.accept(answer);
  }

  /** Stops the describe on {@code streamId}, if one runs; it answers CANCELLED. */
  void cancel(int streamId) {
    CancelSignal cancel = running.get(streamId);
    if (cancel != null) {
      cancel.cancel();
    }
  }

  /** Stops every describe: the client has gone. */
  void cancelAll() {
    running.values().forEach(CancelSignal::cancel);
  }
}
