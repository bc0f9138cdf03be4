package io.thallus.internal.server;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One connection's open streams and ingests, by stream id (one id space for them and its describes): what the request
 * checks count and the handler routes frames by. Thread-safe: streams and ingests leave it from engine threads.
 */
final class StreamTable {
  private final Map<Integer, ServerStream> streams = new ConcurrentHashMap<>();
  /** Streams the client has closed whose threads are still winding down: they no longer count against its limit. */
  private final Set<Integer> closing = ConcurrentHashMap.newKeySet();
  private final Map<Integer, ServerIngest> ingests = new ConcurrentHashMap<>();
  private final ServerDescribes describes;

  StreamTable(ServerDescribes describes) {
    this.describes = describes;
  }

  /** Whether a stream, an ingest or a describe has {@code streamId}. */
  boolean inUse(int streamId) {
    return streams.containsKey(streamId) || ingests.containsKey(streamId) || describes.isRunning(streamId);
  }

  /** Streams, ingests and describes that count against the client's limit (maxStreamsPerConnection). */
  int openCount() {
    return streams.size() - closing.size() + ingests.size() + describes.running();
  }

  /** The credits all open streams and ingests hold. */
  long credits() {
    long total = 0;
    for (ServerStream open : streams.values()) {
      total += open.credits();
    }
    for (ServerIngest open : ingests.values()) {
      total += open.credits();
    }
    return total;
  }

  boolean isEmpty() {
    return streams.isEmpty() && ingests.isEmpty();
  }

  ServerStream stream(int streamId) {
    return streams.get(streamId);
  }

  ServerIngest ingest(int streamId) {
    return ingests.get(streamId);
  }

  Collection<ServerStream> streams() {
    return streams.values();
  }

  Collection<ServerIngest> ingests() {
    return ingests.values();
  }

  void add(ServerStream stream) {
    streams.put(stream.id(), stream);
  }

  void add(ServerIngest ingest) {
    ingests.put(ingest.id(), ingest);
  }

  /** The client closed the stream: it stops counting against the limit while it winds down. */
  void closing(int streamId) {
    if (streams.containsKey(streamId)) {
      closing.add(streamId);
    }
  }

  void remove(ServerStream stream) {
    streams.remove(stream.id(), stream);
    closing.remove(stream.id());
  }

  void remove(ServerIngest ingest) {
    ingests.remove(ingest.id(), ingest);
  }
}
