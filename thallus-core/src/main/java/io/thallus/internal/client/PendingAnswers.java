package io.thallus.internal.client;

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
 * A connection's requests that wait for one answer, by stream id (DESCRIBE answered by DESCRIBED, LIST_SHARDS by
 * SHARDS, either by ERROR), each waited for no longer than the client's timeout.
 */
final class PendingAnswers {
  private final Map<Integer, CompletableFuture<Message>> waiting = new ConcurrentHashMap<>();

  /**
   * Sends {@code request} (on {@code streamId}) with {@code send} and waits for its answer, of type {@code answer};
   * {@code what} names the request in errors ("describing t"). The id is free again afterwards.
   */
  <T extends Message> T ask(int streamId, Message request, Class<T> answer, String what, Consumer<Message> send,
      Duration timeout) {
    CompletableFuture<Message> arrived = new CompletableFuture<>();
    waiting.put(streamId, arrived);
    try {
      send.accept(request);
      Message message = arrived.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (!answer.isInstance(message)) {
        throw ThallusException.of(StatusCode.PROTOCOL_ERROR, what + " was answered with " + message.type());
      }
      return answer.cast(message);
    } catch (TimeoutException e) {
      cancelQuietly(streamId, send);
      throw ThallusException.of(StatusCode.DEADLINE_EXCEEDED, "the server did not answer " + what + " within "
          + timeout.toMillis() + " ms");
    } catch (ExecutionException e) {
      throw e.getCause() instanceof ThallusException t ? ThallusException.of(t.code(), t.status().description(), t)
          : ThallusException.of(StatusCode.INTERNAL, what + " failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while " + what);
    } finally {
      waiting.remove(streamId);
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

  /** The answer (DESCRIBED, SHARDS) to the request waiting on {@code streamId}, if one still waits. */
  void onAnswer(int streamId, Message answer) {
    CompletableFuture<Message> arrived = waiting.get(streamId);
    if (arrived != null) {
      arrived.complete(answer);
    }
  }

  void onError(Message.Error error) {
    CompletableFuture<Message> arrived = waiting.get(error.streamId());
    if (arrived != null) {
      arrived.completeExceptionally(ThallusException.of(error.code(), error.message()));
    }
  }

  void failAll(ThallusException error) {
    for (CompletableFuture<Message> arrived : List.copyOf(waiting.values())) {
      arrived.completeExceptionally(error);
    }
  }
}
