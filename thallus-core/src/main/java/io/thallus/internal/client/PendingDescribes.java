package io.thallus.internal.client;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.protocol.Message;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A connection's DESCRIBE requests that wait for their answer, by stream id: each is one request and one answer
 * (DESCRIBED or ERROR), waited for no longer than the client's timeout.
 */
final class PendingDescribes {
  private final Map<Integer, CompletableFuture<DatasetDescription>> waiting = new ConcurrentHashMap<>();

  /** Sends {@code request} with {@code send} and waits for its answer; the id is free again afterwards. */
  DatasetDescription ask(Message.Describe request, Consumer<Message> send, Duration timeout) {
    CompletableFuture<DatasetDescription> answer = new CompletableFuture<>();
    waiting.put(request.streamId(), answer);
    try {
      send.accept(request);
      return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      cancelQuietly(request.streamId(), send);
      throw ThallusException.of(StatusCode.DEADLINE_EXCEEDED, "the server did not describe " + request.name()
          + " within " + timeout.toMillis() + " ms");
    } catch (ExecutionException e) {
      throw e.getCause() instanceof ThallusException t ? ThallusException.of(t.code(), t.status().description(), t)
          : ThallusException.of(StatusCode.INTERNAL, "describing " + request.name() + " failed: " + e.getCause(),
              e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while describing " + request.name());
    } finally {
      waiting.remove(request.streamId());
    }
  }

  /** Tells the server to stop working on an answer nobody waits for any more. */
  private static void cancelQuietly(int streamId, Consumer<Message> send) {
    try {
      send.accept(new Message.Cancel(streamId));
    } catch (ThallusException connectionGone) {
      // Nothing runs on a connection that is gone.
    }
  }

  boolean isWaiting(int streamId) {
    return waiting.containsKey(streamId);
  }

  void onDescribed(Message.Described described) {
    CompletableFuture<DatasetDescription> answer = waiting.get(described.streamId());
    if (answer != null) {
      answer.complete(described.description());
    }
  }

  void onError(Message.Error error) {
    CompletableFuture<DatasetDescription> answer = waiting.get(error.streamId());
    if (answer != null) {
      answer.completeExceptionally(ThallusException.of(error.code(), error.message()));
    }
  }

  void failAll(ThallusException error) {
    for (CompletableFuture<DatasetDescription> answer : List.copyOf(waiting.values())) {
      answer.completeExceptionally(error);
    }
  }
}
