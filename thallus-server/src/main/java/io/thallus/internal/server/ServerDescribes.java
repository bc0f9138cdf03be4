package io.thallus.internal.server;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.internal.protocol.Message;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's DESCRIBE requests once checked (by the {@link RequestValidator}, as OPEN and INGEST are): each runs
 * on the connection's engine lane in its engine session and is answered with DESCRIBED or ERROR on its stream id. A
 * CANCEL of the id or the client's leaving stops it.
 */
final class ServerDescribes {
  private static final Logger LOG = LoggerFactory.getLogger(ServerDescribes.class);

  private final ServerConnection connection;
  /** The describes that have not answered yet, by stream id. */
  private final Map<Integer, CancelSignal> running = new ConcurrentHashMap<>();

  ServerDescribes(ServerConnection connection) {
    this.connection = connection;
  }

  /** Describes not answered yet: they count against the client's streams. */
  int running() {
    return running.size();
  }

  boolean isRunning(int streamId) {
    return running.containsKey(streamId);
  }

  /** Starts describing {@code name} (within {@code dataset}, if given) on {@code streamId}. */
  void start(int streamId, String name, Optional<Path> dataset) {
    CancelSignal cancel = new CancelSignal();
    running.put(streamId, cancel);
    connection.lane().submit(() -> run(streamId, name, dataset, cancel));
  }

  private void run(int streamId, String name, Optional<Path> dataset, CancelSignal cancel) {
    Message answer;
    try {
      if (cancel.isCancelled()) {
        throw ThallusException.of(StatusCode.CANCELLED, "describing " + name + " was cancelled by the client");
      }
      ServerShards shards = connection.context().shards();
      DatasetDescription description = shards.declares(name, dataset)
          ? shards.describe(name, connection.engineSession(), connection.allocator(), cancel)
          : connection.engineSession().describe(name, dataset, connection.allocator(), cancel);
      answer = new Message.Described(streamId, description);
      connection.context().metrics().described(description.kind());
    } catch (ThallusException e) {
      answer = new Message.Error(streamId, cancel.isCancelled() ? StatusCode.CANCELLED : e.code(),
          cancel.isCancelled() ? "describing " + name + " was cancelled" : e.status().description());
    } catch (RuntimeException e) {
      LOG.error("describing {} failed", name, e);
      answer = new Message.Error(streamId, StatusCode.INTERNAL, "describing " + name + " failed: " + e);
    } finally {
      running.remove(streamId);
    }
    connection.outbox().send(answer);
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
