package io.thallus.internal.client;

import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchReceiver;
import io.thallus.spi.BatchContents;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * Where the batches of a connection's result streams go once its {@link BatchReceiver} has them in order and checked:
 * to their {@link StreamState}s (freed when the stream has gone); a refused batch fails its stream; a failed receive
 * fails the connection; a released body is queued for the stream's next NEXT.
 */
final class StreamResults implements BatchReceiver.Consumer {
  private final Map<Integer, StreamState> streams;
  private final ReleasedBatches released;
  private final IntConsumer releasesWaiting;
  private final Consumer<ThallusException> failConnection;

  /**
   * {@code releasesWaiting} is told a stream has releases queued (one that grants no more credits sends them alone);
   * {@code failConnection} ends the connection.
   */
  StreamResults(Map<Integer, StreamState> streams, ReleasedBatches released, IntConsumer releasesWaiting,
      Consumer<ThallusException> failConnection) {
    this.streams = streams;
    this.released = released;
    this.releasesWaiting = releasesWaiting;
    this.failConnection = failConnection;
  }

  @Override
  public void batch(int streamId, BatchContents contents) {
    StreamState state = streams.get(streamId);
    if (state == null) {
      contents.close();
    } else {
      state.onBatch(contents);
    }
  }

  @Override
  public void refused(int streamId, ThallusException error) {
    StreamState state = streams.get(streamId);
    if (state != null) {
      state.onRefused(error);
    }
  }

  @Override
  public void released(int streamId, long batchId) {
    released.add(streamId, batchId);
    releasesWaiting.accept(streamId);
  }

  @Override
  public boolean isOpen(int streamId) {
    return streams.containsKey(streamId);
  }

  @Override
  public void failed(int streamId, ThallusException error) {
    // A body that cannot be fetched or rebuilt leaves the transport out of step: the connection cannot go on.
    failConnection.accept(error);
  }
}
