package io.thallus;

import io.thallus.internal.client.ClientConnection;
import io.thallus.internal.client.StreamState;
import io.thallus.internal.protocol.Message;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A connection to a Thallus server. Thread-safe: several threads may run streams on one client at once.
 *
 * <pre>{@code
 * try (BufferAllocator allocator = new RootAllocator();
 *      ThallusClient client = ThallusClient.connect(allocator, Location.parse("thallus://localhost:47470"));
 *      ThallusStream stream = client.query("SELECT * FROM dataset", "trips.parquet")) {
 *   while (stream.hasNext()) {
 *     try (VectorSchemaRoot batch = stream.next()) {
 *       ...
 *     }
 *   }
 * }
 * }</pre>
 */
public final class ThallusClient implements AutoCloseable {
  /**
   * A root allocator that works in this JVM: Arrow's default (Netty's pooled allocator) where Netty may use
   * {@code sun.misc.Unsafe}, else one that takes memory from the C heap directly. The second is what a JVM started
   * without {@code --sun-misc-unsafe-memory-access=allow} needs on JDK 24 and later, as in tools that load a JDBC
   * driver and let nobody set JVM flags.
   */
  public static org.apache.arrow.memory.BufferAllocator newRootAllocator() {
    if (io.thallus.internal.client.DirectAllocationManager.defaultWorks()) {
      return new org.apache.arrow.memory.RootAllocator();
    }
    return new org.apache.arrow.memory.RootAllocator(org.apache.arrow.memory.RootAllocator.configBuilder()
        .allocationManagerFactory(io.thallus.internal.client.DirectAllocationManager.FACTORY).build());
  }

  private final BufferAllocator allocator;
  private final ClientOptions options;
  private final ClientConnection connection;
  private final Set<ThallusStream> openStreams = ConcurrentHashMap.newKeySet();
  private final Set<ThallusIngest> openIngests = ConcurrentHashMap.newKeySet();
  private boolean closed;

  private ThallusClient(BufferAllocator allocator, ClientOptions options, ClientConnection connection) {
    this.allocator = allocator;
    this.options = options;
    this.connection = connection;
  }

  public static ThallusClient connect(BufferAllocator allocator, Location location) {
    return connect(allocator, location, ClientOptions.defaults());
  }

  public static ThallusClient connect(BufferAllocator parent, Location location, ClientOptions options) {
    Objects.requireNonNull(parent, "allocator");
    BufferAllocator allocator = parent.newChildAllocator("thallus-client", 0, Long.MAX_VALUE);
    try {
      ClientConnection connection = ClientConnection.connect(allocator, location, new ClientConnection.Settings(
          options.clientName(), options.connectTimeout(), options.timeout(), options.maxFrameBytes(),
          options.receivePoolBytes(), options.credentials(), options.tls().orElse(null),
          options.resultCompression()));
      return new ThallusClient(allocator, options, connection);
    } catch (RuntimeException e) {
      allocator.close();
      throw e;
    }
  }

  /** The transport client and server agreed on ({@code "tcp"}, {@code "ipc"}, ...). */
  public String transport() {
    return connection.transport();
  }

  public ThallusStream query(String sql) {
    return query(QueryRequest.of(sql));
  }

  public ThallusStream query(String sql, String dataset) {
    return query(QueryRequest.builder(sql).dataset(dataset).build());
  }

  /**
   * Opens a stream and returns once its schema is known (the server has compiled and started the query). With
   * {@link QueryRequest.Builder#streams} above 1 the server may split the result into that many parallel streams;
   * this stream reads them as one (batches in arrival order; a query the server does not split, one with ORDER BY
   * say, keeps its order). Cancelling or closing it stops them all.
   */
  public ThallusStream query(QueryRequest request) {
    if (request.streams() > 1) {
      List<StreamState> parts = openParts(request);
      try {
        Schema schema = awaitSchemas(parts);
        ThallusStream stream = new ThallusStream(new io.thallus.internal.client.MergedBatches(parts,
            options.timeout()), schema, allocator, openStreams::remove);
        openStreams.add(stream);
        return stream;
      } catch (RuntimeException e) {
        parts.forEach(StreamState::close);
        throw e;
      }
    }
    StreamState state = open(request, 0);
    try {
      ThallusStream stream = new ThallusStream(state, state.awaitSchema(), allocator, openStreams::remove);
      openStreams.add(stream);
      return stream;
    } catch (RuntimeException e) {
      state.close();
      throw e;
    }
  }

  /**
   * The result of {@code request} as {@link QueryRequest#streams()} parallel streams, to be read at once (by as many
   * threads): together they hold every row once, in no order across them. The server splits what it can split
   * exactly, reading one snapshot (see docs/java-api.md); a query it does not split comes whole on the first stream
   * and the others end empty. Cancelling or closing any one of them before its end stops all of them (the others
   * then fail with CANCELLED). Returns once every stream's schema is known.
   */
  public List<ThallusStream> queryStreams(QueryRequest request) {
    List<StreamState> parts = openParts(request);
    List<ThallusStream> streams = new java.util.ArrayList<>();
    try {
      Schema schema = awaitSchemas(parts);
      for (StreamState part : parts) {
        ThallusStream stream = new ThallusStream(part, schema, allocator, openStreams::remove);
        openStreams.add(stream);
        streams.add(stream);
      }
      return List.copyOf(streams);
    } catch (RuntimeException e) {
      streams.forEach(ThallusStream::close);
      parts.forEach(StreamState::close);
      throw e;
    }
  }

  /** Every part's schema (the server sends the same on each), or the first part's error. */
  private static Schema awaitSchemas(List<StreamState> parts) {
    Schema schema = null;
    for (StreamState part : parts) {
      Schema each = part.awaitSchema();
      schema = schema == null ? each : schema;
    }
    return schema;
  }

  private List<StreamState> openParts(QueryRequest request) {
    synchronized (this) {
      if (closed) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "the client is closed");
      }
    }
    if (request.parameterRowCount() > 0) {
      throw new IllegalArgumentException("a request for parallel streams has no rows of parameters");
    }
    int flags = request.autoCommit() ? 0 : Message.Open.IN_TRANSACTION;
    int parts = request.streams();
    return connection.openParts(new Message.Open(0, request.sql(), request.dataset().orElse(""),
        request.batchRows().orElse(options.batchRows()), options.credits(),
        request.timeout().map(java.time.Duration::toMillis).orElse(0L), flags | (parts > 1 ? Message.Open.SPLIT : 0),
        request.wireParameters(), request.options(), new byte[0], parts));
  }

  /**
   * Starts writing batches of {@code schema} into a table; returns once the request is sent (the server checks the
   * table before it takes the first batch, so an error about the table comes with the first write or with
   * {@link ThallusIngest#finish}).
   */
  public ThallusIngest ingest(IngestRequest request, Schema schema) {
    return ingest(request, schema, null);
  }

  /**
   * As {@link #ingest(IngestRequest, Schema)} for batches with dictionary-encoded columns, whose dictionaries
   * {@code dictionaries} holds (an {@link org.apache.arrow.vector.ipc.ArrowReader} is one). Each batch carries the
   * dictionaries its columns use as they are when it is written.
   */
  public ThallusIngest ingest(IngestRequest request, Schema schema,
      org.apache.arrow.vector.dictionary.DictionaryProvider dictionaries) {
    Schema wire = ThallusIngest.wireSchema(schema, dictionaries);
    synchronized (this) {
      if (closed) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "the client is closed");
      }
    }
    io.thallus.internal.client.IngestState state = connection.openIngest(new Message.Ingest(0, request.table(),
        request.mode().wireValue(), request.credits().orElse(options.credits()),
        request.timeout().map(java.time.Duration::toMillis).orElse(0L), wire.serializeAsMessage(),
        request.autoCommit() ? 0 : Message.Ingest.IN_TRANSACTION, request.insertStatement().orElse(""), Map.of()));
    ThallusIngest[] made = new ThallusIngest[1];
    ThallusIngest ingest = new ThallusIngest(state, schema, dictionaries, () -> openIngests.remove(made[0]));
    made[0] = ingest;
    openIngests.add(ingest);
    return ingest;
  }

  /**
   * Writes every batch of {@code batches} into a table and commits: {@link #ingest(IngestRequest, Schema)} in one
   * call.
   */
  public IngestResult ingest(IngestRequest request, org.apache.arrow.vector.ipc.ArrowReader batches) {
    try (ThallusIngest ingest = ingest(request, batches.getVectorSchemaRoot().getSchema(), batches)) {
      ingest.write(batches);
      return ingest.finish();
    } catch (java.io.IOException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "reading the batches to ingest failed: "
          + e.getMessage(), e);
    }
  }

  /**
   * The schema {@code request}'s result would have, without running it to the end: the server compiles the query
   * and sends no row (a query is planned under {@code LIMIT 0}).
   */
  public Schema schema(QueryRequest request) {
    StreamState state = open(request, Message.Open.SCHEMA_ONLY);
    try {
      return state.awaitSchema();
    } finally {
      state.close();
    }
  }

  /**
   * What {@code request}'s statement is, as the server's engine understands it without running it: its kind (rows,
   * an update count, or neither), the Arrow type of each placeholder, and the schema of its rows. The statement is
   * prepared in this client's session (its temporary tables, search path and dataset count), never run; the values
   * and rows of parameters of {@code request} are not sent.
   */
  public StatementDescription describeStatement(QueryRequest request) {
    QueryRequest.Builder bare = QueryRequest.builder(request.sql()).autoCommit(request.autoCommit());
    request.dataset().ifPresent(bare::dataset);
    request.namedDatasets().forEach(bare::dataset);
    StreamState state = open(bare.build(), Message.Open.DESCRIBE_STATEMENT);
    try (ThallusStream stream = new ThallusStream(state, state.awaitSchema(), allocator, ignored -> {})) {
      StatementDescription description = null;
      while (stream.hasNext()) {
        try (org.apache.arrow.vector.VectorSchemaRoot row = stream.next()) {
          if (description == null) {
            description = io.thallus.internal.protocol.StatementDescriptions.read(stream.getSchema(), row);
          }
        }
      }
      if (description == null) {
        return io.thallus.internal.protocol.StatementDescriptions.read(stream.getSchema(), null);
      }
      return description;
    } catch (RuntimeException e) {
      state.close();
      throw e;
    }
  }

  /**
   * What {@code name} is on the server: a table, a view (in the server's database, or any the session can see), with
   * its schema and its parts (a table's row ranges). {@code name} is written as SQL writes it: {@code t},
   * {@code schema.t} or {@code catalog.schema.t}, each part a plain identifier or double-quoted. Errors: NOT_FOUND
   * naming a name the server does not have, INVALID_ARGUMENT for one that is not a name, OUT_OF_RANGE for a
   * table or dataset of more than {@link DatasetDescription#MAX_PARTS} parts.
   */
  public DatasetDescription describe(String name) {
    return describe(name, "");
  }

  /**
   * As {@link #describe(String)}, with {@code dataset} (a path under the server's data root, as in a query) bound
   * first: {@code describe("dataset", "trips/*.parquet")} describes the files, one part per file with its size and
   * rows; with a DuckDB database file as the dataset, {@code name} is one of its tables or views. An empty
   * {@code dataset} binds none.
   */
  public DatasetDescription describe(String name, String dataset) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(dataset, "dataset");
    synchronized (this) {
      if (closed) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "the client is closed");
      }
    }
    return connection.describe(name, dataset);
  }

  /**
   * The names of the sharded datasets this server declares parts of (docs/sharding.md), in declaration order; empty
   * when it declares none. Each can be described ({@link #describe(String)}, kind
   * {@link DatasetDescription.Kind#SHARD}) or read with {@link ShardLayout#discover}.
   */
  public List<String> shardedDatasets() {
    synchronized (this) {
      if (closed) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "the client is closed");
      }
    }
    return connection.shardedDatasets();
  }

  private StreamState open(QueryRequest request, int flags) {
    synchronized (this) {
      if (closed) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "the client is closed");
      }
    }
    byte[] rows = request.parameterRowsIpc();
    if (rows.length > 0) {
      flags |= Message.Open.PARAMETER_ROWS;
    }
    if (!request.autoCommit()) {
      flags |= Message.Open.IN_TRANSACTION;
    }
    return connection.open(new Message.Open(0, request.sql(), request.dataset().orElse(""),
        request.batchRows().orElse(options.batchRows()), options.credits(),
        request.timeout().map(java.time.Duration::toMillis).orElse(0L), flags, request.wireParameters(),
        request.options(), rows));
  }

  /**
   * The most bytes one request may carry (SQL, parameters, rows of parameters): the server's frame limit, as it said
   * at the handshake, or 4 MiB (the default limit) for a server that did not say.
   */
  public int maxRequestBytes() {
    int limit = connection.serverMaxFrameBytes();
    return limit > 0 ? limit : 4 << 20;
  }

  /**
   * Whether this client can still make calls: false once it is closed or its connection was lost (the server went
   * away, or closed the connection), after which every call fails and only a new client reaches the server.
   */
  public synchronized boolean isConnected() {
    return !closed && !connection.isBroken();
  }

  /** The memory this client's batches hold right now. */
  public long allocatedBytes() {
    return allocator.getAllocatedMemory();
  }

  /**
   * Closes the streams still open, the connection, and the client's allocator. Batches the caller still holds
   * (roots returned by {@link ThallusStream#next()}) make this fail with the allocator's leak report: close them
   * first.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    for (ThallusStream stream : List.copyOf(openStreams)) {
      stream.close();
    }
    for (ThallusIngest ingest : List.copyOf(openIngests)) {
      ingest.close();
    }
    connection.close();
    allocator.close();
  }
}
