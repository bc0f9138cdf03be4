package io.thallus.spark;

import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * What the connector shares within one JVM (driver or executor): the Arrow allocator every client's memory is
 * accounted under, and a short record of the SQL sent to servers, so tests see what the server was asked.
 */
final class Connector {
  private Connector() {}

  private static final BufferAllocator ALLOCATOR = new RootAllocator();
  private static final int SQL_HISTORY = 256;
  private static final Deque<String> SENT_SQL = new ArrayDeque<>();
  private static final Deque<String> CONNECTED = new ArrayDeque<>();

  static ThallusClient connect(ReadConf conf, int server) {
    io.thallus.Location location = conf.location(server);
    remember(CONNECTED, location.toString());
    return ThallusClient.connect(ALLOCATOR, location, conf.clientOptions());
  }

  private static void remember(Deque<String> history, String entry) {
    synchronized (history) {
      if (history.size() == SQL_HISTORY) {
        history.removeFirst();
      }
      history.addLast(entry);
    }
  }

  /** The servers this JVM connected to, oldest first (at most the last 256). */
  static List<String> connected() {
    synchronized (CONNECTED) {
      return new ArrayList<>(CONNECTED);
    }
  }

  /** A request for {@code sql} with the read's dataset, batch size and timeout; recorded as sent. */
  static QueryRequest request(ReadConf conf, String sql) {
    QueryRequest.Builder builder = QueryRequest.builder(sql).batchRows(conf.batchRows());
    conf.dataset().ifPresent(builder::dataset);
    conf.queryTimeout().ifPresent(builder::timeout);
    remember(SENT_SQL, sql);
    return builder.build();
  }

  /** Bytes the connector's clients hold in this JVM right now; zero once every reader has closed. */
  static long allocatedBytes() {
    return ALLOCATOR.getAllocatedMemory();
  }

  /** The SQL sent by this JVM, oldest first (at most the last 256 queries). */
  static List<String> sentSql() {
    synchronized (SENT_SQL) {
      return new ArrayList<>(SENT_SQL);
    }
  }

  static void clearSentSql() {
    synchronized (SENT_SQL) {
      SENT_SQL.clear();
    }
    synchronized (CONNECTED) {
      CONNECTED.clear();
    }
  }
}
