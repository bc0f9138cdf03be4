package io.thallus.internal.server;

import io.netty.buffer.ByteBufUtil;
import io.thallus.IngestMode;
import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.IngestSpec;
import io.thallus.engine.QuerySpec;
import io.thallus.engine.TransactionMode;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.QueryParameters;
import io.thallus.internal.protocol.TableNames;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The checks of a client's OPEN, INGEST and DESCRIBE, and of the credits it grants, against the server's limits and the
 * connection's open streams: what a request may ask for, before anything is made for it. A request that fails one is
 * answered with an ERROR on its stream; only a stream id the protocol does not allow fails the connection.
 */
final class RequestValidator {
  private final ServerContext context;
  private final StreamTable table;
  private final BooleanSupplier shuttingDown;

  RequestValidator(ServerContext context, StreamTable table, BooleanSupplier shuttingDown) {
    this.context = context;
    this.table = table;
    this.shuttingDown = shuttingDown;
  }

  /** An INGEST, checked: what the engine gets, the credits it starts with, and the transport's parameters. */
  record Ingest(IngestSpec spec, int credits, Map<String, String> transportParameters) {}

  /** Why a request's stream id fails the connection, if it does. */
  static Optional<Status> connectionFault(int streamId) {
    if (streamId > 0) {
      return Optional.empty();
    }
    // An ERROR on stream 0 means "the connection failed": answering a stream 0 would read as that.
    return Optional.of(Status.of(StatusCode.PROTOCOL_ERROR, "stream id " + streamId
        + " is not allowed: stream ids start at 1 (0 is reserved for connection errors)"));
  }

  /** Checks an OPEN; the query it asks for. */
  QuerySpec open(Message.Open open) {
    checkIdFree(open.streamId());
    if (open.batchRows() < 1 || open.batchRows() > context.maxBatchRows()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT,
          "batch rows must be within 1.." + context.maxBatchRows() + ", got " + open.batchRows());
    }
    credits(0, open.credits());
    if (open.sql().isBlank()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "empty SQL");
    }
    int sqlBytes = ByteBufUtil.utf8Bytes(open.sql());
    if (sqlBytes > context.limits().maxSqlBytes()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "SQL text of " + sqlBytes
          + " bytes is over this server's limit of " + context.limits().maxSqlBytes());
    }
    checkRoom();
    Optional<Path> dataset = dataset(open.dataset());
    Map<String, String> options = new HashMap<>();
    Map<String, Path> named = new java.util.LinkedHashMap<>();
    io.thallus.internal.protocol.NamedDatasets.take(open.options(), options).forEach((name, path) -> {
      try {
        named.put(name, dataset(path).orElseThrow());
      } catch (ThallusException e) {
        throw ThallusException.of(e.code(), "dataset '" + name + "': " + e.getMessage(), e);
      }
    });
    checkRunning();
    return new QuerySpec(open.sql(), dataset, open.batchRows(), QueryParameters.forEngine(open.parameters()),
        open.schemaOnly(), open.inTransaction() ? TransactionMode.SESSION : TransactionMode.AUTOCOMMIT,
        options, open.parameterRows(), named);
  }

  /**
   * Checks what a split OPEN adds to {@link #open}: its ids all free, its streams within the client's limit and their
   * credits within the client's, and a request that streams rows (not a schema, a description or rows of
   * parameters).
   */
  void split(Message.Open request) {
    if (request.schemaOnly() || request.describeStatement() || request.parameterRows().length > 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a request for parallel streams streams rows: not with "
          + "a schema only, a description or rows of parameters");
    }
    int parts = request.parts();
    for (int i = 1; i < parts; i++) {
      checkIdFree(request.streamId() + i);
    }
    int openNow = table.openCount();
    if (openNow + parts > context.limits().maxStreamsPerConnection()) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "this client has " + openNow + " streams open and "
          + "asks for " + parts + " more; this server allows " + context.limits().maxStreamsPerConnection()
          + " (maxStreamsPerConnection)");
    }
    long credits = (long) request.credits() * parts + table.credits();
    if (credits > context.limits().maxCreditsPerConnection()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a client may hold at most "
          + context.limits().maxCreditsPerConnection() + " credits over all its streams (maxCreditsPerConnection); "
          + parts + " streams of " + request.credits() + " make " + credits);
    }
  }

  /** Checks a DESCRIBE; the dataset it names, if any. */
  Optional<Path> describe(Message.Describe request) {
    checkIdFree(request.streamId());
    TableNames.check(request.name());
    Optional<Path> dataset = dataset(request.dataset());
    checkRoom();
    checkRunning();
    return dataset;
  }

  /** Checks a LIST_SHARDS: its stream id is free (the answer goes out on it at once, holding nothing). */
  void listShards(Message.ListShards request) {
    checkIdFree(request.streamId());
  }

  /** Checks an INGEST of a connection on {@code transportName}. */
  Ingest ingest(Message.Ingest request, String transportName) {
    checkIdFree(request.streamId());
    IngestMode mode = IngestMode.fromWireValue(request.mode());
    if (mode == null) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "ingest mode " + request.mode()
          + " is unknown: 0 create, 1 append, 2 replace");
    }
    TableNames.check(request.table());
    if (request.credits() < 1) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "an ingest needs at least 1 credit, got "
          + request.credits());
    }
    // Batches inside frames are held from their arrival: their credits keep them within half the client's budget.
    long framesInBudget = context.limits().memoryPerClient() / (2L * context.limits().maxFrameBytes());
    int credits = (int) Math.max(1, Math.min(framesInBudget,
        Math.min(request.credits(), context.limits().maxCreditsPerStream())));
    Schema schema;
    try {
      schema = Schema.deserializeMessage(ByteBuffer.wrap(request.schema()));
    } catch (RuntimeException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the ingest's schema is not an Arrow IPC schema "
          + "message: " + e.getMessage(), e);
    }
    if (schema.getFields().isEmpty()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the ingest's schema has no columns");
    }
    checkRoom();
    checkRunning();
    Map<String, String> transportParameters = new HashMap<>();
    String prefix = transportName + ".";
    request.options().forEach((key, value) -> {
      if (key.startsWith(prefix)) {
        transportParameters.put(key, value);
      }
    });
    IngestSpec spec = new IngestSpec(request.table(), mode, schema,
        request.inTransaction() ? TransactionMode.SESSION : TransactionMode.AUTOCOMMIT,
        request.insertStatement().isEmpty() ? Optional.empty() : Optional.of(request.insertStatement()));
    return new Ingest(spec, credits, transportParameters);
  }

  /**
   * Refuses credits over the server's maxima: credits are what a stream may send ahead of the client, so they bound
   * what a client that reads nothing makes the server hold.
   */
  void credits(int current, int more) {
    if (more < 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "negative credits " + more);
    }
    long stream = (long) current + more;
    if (stream > context.limits().maxCreditsPerStream()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a stream may hold at most "
          + context.limits().maxCreditsPerStream() + " credits (maxCreditsPerStream); this grant makes " + stream);
    }
    long connection = more + table.credits();
    if (connection > context.limits().maxCreditsPerConnection()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a client may hold at most "
          + context.limits().maxCreditsPerConnection() + " credits over all its streams (maxCreditsPerConnection);"
          + " this grant makes " + connection);
    }
  }

  /** The dataset a request names under the server's data root (none for an empty name). */
  private Optional<Path> dataset(String name) {
    if (name.isEmpty()) {
      return Optional.empty();
    }
    DataRoot root = context.dataRoot().orElseThrow(() -> ThallusException.of(StatusCode.PERMISSION_DENIED,
        "this server serves no datasets (it was started without a data root)"));
    return Optional.of(root.resolve(name));
  }

  private void checkIdFree(int streamId) {
    if (table.inUse(streamId)) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "stream id " + streamId + " is in use");
    }
  }

  /** The client's limit of open streams and ingests (maxStreamsPerConnection). */
  private void checkRoom() {
    int open = table.openCount();
    if (open >= context.limits().maxStreamsPerConnection()) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "this client already has " + open
          + " streams open, the most this server allows; close one first");
    }
  }

  private void checkRunning() {
    if (shuttingDown.getAsBoolean()) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the server is shutting down");
    }
  }
}
