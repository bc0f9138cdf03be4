package io.thallus.spi;

import java.util.Map;

/** One client connection's use of a transport on the server. */
public interface ServerSession extends AutoCloseable {
  /** Parameters for WELCOME. */
  Map<String, String> welcomeParameters();

  /**
   * Sends batch {@code batchId} of stream {@code streamId}: writes its BATCH message (whose header this transport
   * builds) through {@code control} and moves its body the way this transport does. Takes ownership of {@code contents}: the session closes them once the client can no longer need them
   * (after the write for tcp and ipc; after the client released the batch for shm and rdma). Called on a stream's
   * own thread, never on an event loop, so it may block until {@code deadline}.
   */
  void send(int streamId, long batchId, BatchContents contents, ControlWriter control, Deadline deadline);

  /** The client has finished with this batch (piggybacked on NEXT). */
  default void released(int streamId, long batchId) {}

  /** The stream is over: release whatever of it the client did not release. */
  default void streamClosed(int streamId) {}

  /** The connection is over: release everything. Idempotent. */
  @Override
  void close();
}
