package io.thallus;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The rows of a {@link ShardedDataset#query}: each file's rows, read from one server holding it, one file after
 * another. {@link #next()} returns a root the caller owns (close it), as {@link ThallusStream#next()} does.
 *
 * <p>A file whose server turns out to be down before any of its rows were handed out is read from the next server
 * holding a replica of it; an error after its first rows were handed out fails the read (a retry would repeat
 * them), with the server and the file named, as does a file that no live server holds (UNAVAILABLE).
 */
public final class ShardedStream implements Iterator<VectorSchemaRoot>, AutoCloseable {
  /** One file read to its end: its id, the server it was read from, and the rows it gave. */
  public record PartRead(String id, Location server, long rows) {}

  private final ShardedDataset dataset;
  private final String sql;
  private final List<Object> parameters;
  private final Deque<String> todo;
  private final List<PartRead> reads = new ArrayList<>();
  private Schema schema;
  private ThallusStream current;
  private String currentId;
  private int currentServer;
  private long currentRows;
  private boolean handedOut;
  private boolean closed;

  ShardedStream(ShardedDataset dataset, String sql, List<Object> parameters) {
    this.dataset = dataset;
    this.sql = sql;
    this.parameters = parameters;
    this.todo = new ArrayDeque<>(dataset.ids());
    // The first file opens now, so that an error in the SQL surfaces from query() and the schema is known.
    try {
      openNext();
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The result's schema (the same from every server). */
  public Schema getSchema() {
    return schema;
  }

  /** The files read to their end so far, in the order read. */
  public List<PartRead> reads() {
    return List.copyOf(reads);
  }

  @Override
  public boolean hasNext() {
    if (closed) {
      return false;
    }
    while (current != null) {
      boolean more;
      try {
        more = current.hasNext();
      } catch (ThallusException e) {
        closeCurrent();
        if (!handedOut && isDown(e, currentServer)) {
          dataset.markDown(currentServer);
          todo.addFirst(currentId);
          openNext();
          continue;
        }
        throw failure(e, currentServer, currentId);
      }
      if (more) {
        return true;
      }
      reads.add(new PartRead(currentId, dataset.location(currentServer), currentRows));
      closeCurrent();
      openNext();
    }
    return false;
  }

  @Override
  public VectorSchemaRoot next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the sharded read has ended");
    }
    VectorSchemaRoot root;
    try {
      root = current.next();
    } catch (ThallusException e) {
      throw failure(e, currentServer, currentId);
    }
    handedOut = true;
    currentRows += root.getRowCount();
    return root;
  }

  /** Opens the next file left on the first live server holding it, skipping servers found down. */
  private void openNext() {
    String id = todo.poll();
    if (id == null) {
      return;
    }
    while (true) {
      int server = dataset.readerOf(id);
      ThallusStream stream;
      try {
        stream = dataset.client(server).query(QueryRequest.builder(sql).dataset(id).parameters(parameters).build());
      } catch (ThallusException e) {
        if (isDown(e, server)) {
          dataset.markDown(server);
          continue;
        }
        throw failure(e, server, id);
      }
      Schema each = stream.getSchema();
      if (schema == null) {
        for (Field field : each.getFields()) {
          if (field.getDictionary() != null) {
            stream.close();
            throw ThallusException.of(StatusCode.UNIMPLEMENTED, "column " + field.getName() + " is dictionary-encoded"
                + " (a DuckDB ENUM): a sharded read does not merge dictionaries of several servers; cast it to "
                + "VARCHAR in the query");
          }
        }
        schema = each;
      } else if (!schema.equals(each)) {
        stream.close();
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "file " + id + " on server "
            + dataset.location(server) + " answers with schema " + each + ", the files before it with " + schema);
      }
      current = stream;
      currentId = id;
      currentServer = server;
      currentRows = 0;
      handedOut = false;
      return;
    }
  }

  /** Whether {@code error} from {@code server} means the server is gone (not that the query is wrong). */
  private boolean isDown(ThallusException error, int server) {
    return error.code() == StatusCode.UNAVAILABLE || !dataset.client(server).isConnected();
  }

  private ThallusException failure(ThallusException error, int server, String id) {
    return ThallusException.of(error.code(), "server " + dataset.location(server) + " (file " + id + "): "
        + error.getMessage(), error);
  }

  private void closeCurrent() {
    if (current != null) {
      ThallusStream stream = current;
      current = null;
      stream.close();
    }
  }

  /** Stops the read: the file being read is closed (its server told to stop); the clients stay with the dataset. */
  @Override
  public void close() {
    closed = true;
    closeCurrent();
  }
}
