package io.thallus.internal.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.QuerySpec;
import io.thallus.internal.batch.BatchReceiver;
import io.thallus.internal.protocol.Message;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BodyFetcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One authenticated client connection on the server, after its WELCOME (the {@link HandshakeHandler} puts it in the
 * pipeline): OPEN/NEXT/CANCEL/CLOSE for its result streams, INGEST/BATCH/END for its ingests, DESCRIBE for what a
 * dataset or table is. Runs on the connection's event loop and never blocks it: queries, ingests and describes run on
 * the engine threads, through the connection's lane. Requests are checked by one {@link RequestValidator}; ingested
 * batches arrive through one {@link BatchReceiver}, as results do on the client. When the client has gone and its
 * last stream and ingest are done, the {@link ServerConnection} closes. A connection with no open stream that stays
 * silent for {@code connectionIdleTimeout} is closed.
 */
public final class ServerConnectionHandler extends SimpleChannelInboundHandler<Message> {
  private final ServerConnection connection;
  private final ServerContext context;
  private final StreamRegistry registry;
  private final ServerDescribes describes;
  private final StreamTable table;
  private final RequestValidator validator;
  /** The split each stream of a split OPEN belongs to, by stream id. */
  private final Map<Integer, SplitStreams> splits = new ConcurrentHashMap<>();
  /** Receives the batches of this connection's ingests. */
  private final BatchReceiver receiver;
  private Channel channel;
  // Guarded by this.
  private boolean inactive;
  private boolean closed;

  ServerConnectionHandler(ServerConnection connection, StreamRegistry registry) {
    this.connection = connection;
    this.context = connection.context();
    this.registry = registry;
    this.describes = new ServerDescribes(connection);
    this.table = new StreamTable(describes);
    this.validator = new RequestValidator(context, table, registry::isShuttingDown);
    this.receiver = new BatchReceiver(new BatchReceiver.Fetchers() {
      @Override
      public BodyFetcher fetcher() {
        return connection.ingestFetcher();
      }

      @Override
      public boolean peerHoldsBodies() {
        return connection.ingestFetcher().clientHoldsBodies();
      }
    }, connection.serializes(), connection.allocator(), connection::budgetName,
        // A compressed batch decompresses within what the client's memory budget has left (its credential's too).
        () -> context.budgets().headroom(connection.allocator()), new IngestBatches());
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    channel = ctx.channel();
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, Message message) {
    switch (message) {
      case Message.Hello hello -> fail(Status.of(StatusCode.PROTOCOL_ERROR, "HELLO sent twice"));
      case Message.Open open -> onOpen(open);
      case Message.Next next -> onNext(next);
      case Message.Cancel cancel -> abortStream(cancel.streamId(),
          Status.of(StatusCode.CANCELLED, "stream " + cancel.streamId() + " cancelled by the client"), true);
      case Message.Close close -> {
        table.closing(close.streamId());
        abortStream(close.streamId(), Status.of(StatusCode.CANCELLED, "stream " + close.streamId()
            + " closed by the client"), false);
      }
      case Message.Ingest ingest -> onIngest(ingest);
      case Message.Describe describe -> onDescribe(describe);
      case Message.ListShards list -> onListShards(list);
      case Message.Batch batch -> onIngestBatch(batch);
      case Message.End end -> {
        ServerIngest ingest = table.ingest(end.streamId());
        // An END for an ingest that has just failed crossed its ERROR on the wire: nothing is left to end.
        if (ingest != null && ingest.endArrived()) {
          receiver.afterBatches(end.streamId(), () -> ingest.onEnd(end));
        }
      }
      default -> fail(Status.of(StatusCode.PROTOCOL_ERROR, "a client does not send " + message.type()));
    }
  }

  private void fail(Status status) {
    ConnectionFailures.fail(channel, status);
  }

  private void onOpen(Message.Open open) {
    Optional<Status> fault = RequestValidator.connectionFault(open.streamId());
    if (fault.isPresent()) {
      fail(fault.get());
      return;
    }
    try {
      QuerySpec spec = validator.open(open);
      if (open.parts() > 1) {
        openSplit(open, spec);
        return;
      }
      ServerStream stream = new ServerStream(connection, open.streamId(), spec, open.describeStatement(), open.credits(),
          this::streamDone);
      if (!registry.add(stream, context.limits().maxStreams())) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the server has its maximum of "
            + context.limits().maxStreams() + " streams open; try again later");
      }
      table.add(stream);
      stream.scheduleTimeout(open.timeoutMillis());
      stream.start();
    } catch (ThallusException e) {
      connection.outbox().send(new Message.Error(open.streamId(), e.code(), e.status().description()));
    }
  }

  /** Opens the streams of a split OPEN (ids streamId to streamId + parts - 1); an error goes to every one of them. */
  private void openSplit(Message.Open open, QuerySpec spec) {
    List<ServerStream> added = new ArrayList<>();
    try {
      validator.split(open);
      SplitStreams split = new SplitStreams(connection, spec, open.parts());
      for (int i = 0; i < open.parts(); i++) {
        int index = i;
        ServerStream stream = new ServerStream(connection, open.streamId() + i, spec, false, open.credits(),
            done -> {
              split.finished(index);
              splits.remove(done.id());
              if (!done.endedWhole()) {
                // The result is incomplete without this part: the others stop too.
                split.abortAll(Status.of(StatusCode.CANCELLED, "stream " + done.id() + " of the same split query "
                    + "failed or was stopped"));
              }
              streamDone(done);
            }, split.source(i));
        if (!registry.add(stream, context.limits().maxStreams())) {
          throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the server has its maximum of "
              + context.limits().maxStreams() + " streams open; try again later");
        }
        added.add(stream);
        split.add(stream);
      }
      for (ServerStream stream : added) {
        splits.put(stream.id(), split);
        table.add(stream);
        stream.scheduleTimeout(open.timeoutMillis());
      }
      added.forEach(ServerStream::start);
    } catch (ThallusException e) {
      added.forEach(registry::remove);
      for (int i = 0; i < open.parts(); i++) {
        // Not on an id the client already uses for a live stream: that stream is not this request's to fail.
        if (!table.inUse(open.streamId() + i)) {
          connection.outbox().send(new Message.Error(open.streamId() + i, e.code(), e.status().description()));
        }
      }
    }
  }

  private void onIngest(Message.Ingest request) {
    Optional<Status> fault = RequestValidator.connectionFault(request.streamId());
    if (fault.isPresent()) {
      fail(fault.get());
      return;
    }
    try {
      RequestValidator.Ingest checked = validator.ingest(request, connection.transportName());
      if (!checked.transportParameters().isEmpty()) {
        connection.ingestParameters(checked.transportParameters());
      }
      ServerIngest ingest = new ServerIngest(connection, request.streamId(), checked.spec(), checked.credits(),
          this::ingestDone);
      // Its batches are checked against the schema it announced before the engine reads them.
      receiver.expect(ingest.id(), checked.spec().schema());
      table.add(ingest);
      ingest.start(request.timeoutMillis());
    } catch (ThallusException e) {
      connection.outbox().send(new Message.Error(request.streamId(), e.code(), e.status().description()));
    }
  }

  private void onDescribe(Message.Describe request) {
    Optional<Status> fault = RequestValidator.connectionFault(request.streamId());
    if (fault.isPresent()) {
      fail(fault.get());
      return;
    }
    try {
      describes.start(request.streamId(), request.name(), validator.describe(request));
    } catch (ThallusException e) {
      connection.outbox().send(new Message.Error(request.streamId(), e.code(), e.status().description()));
    }
  }

  /** The declarations are the server's settings, fixed at start: answered at once, without the engine. */
  private void onListShards(Message.ListShards request) {
    Optional<Status> fault = RequestValidator.connectionFault(request.streamId());
    if (fault.isPresent()) {
      fail(fault.get());
      return;
    }
    try {
      validator.listShards(request);
      connection.outbox().send(new Message.Shards(request.streamId(), context.shards().names()));
    } catch (ThallusException e) {
      connection.outbox().send(new Message.Error(request.streamId(), e.code(), e.status().description()));
    }
  }

  private void onIngestBatch(Message.Batch batch) {
    ServerIngest ingest = table.ingest(batch.header().streamId());
    boolean takes;
    try {
      takes = ingest != null && ingest.admit(batch.header());
    } catch (ThallusException e) {
      ingest.abort(e.status(), true);
      // A client that breaks the credit rules may also have sent bodies nobody reads: its connection ends.
      fail(e.status());
      return;
    }
    if (takes) {
      receiver.onBatch(batch.header(), batch.inline());
      return;
    }
    // An ingest that has failed or been cancelled drops what the client had sent meanwhile; a body outside its frame
    // is still fetched (and freed), so the transport stays in step with the frames.
    try {
      receiver.discard(batch.header(), batch.inline());
    } catch (ThallusException e) {
      fail(e.status());
    }
  }

  /** Where the receiver hands the ingests' batches, in order. */
  private final class IngestBatches implements BatchReceiver.Consumer {
    @Override
    public void batch(int streamId, BatchContents contents) {
      ServerIngest ingest = table.ingest(streamId);
      if (ingest == null) {
        contents.close();
      } else {
        ingest.onReceived(contents);
      }
    }

    @Override
    public void refused(int streamId, ThallusException error) {
      abortIngest(streamId, error.status());
    }

    @Override
    public void failed(int streamId, ThallusException error) {
      abortIngest(streamId, error.status());
    }

    private void abortIngest(int streamId, Status status) {
      ServerIngest ingest = table.ingest(streamId);
      if (ingest != null) {
        ingest.abort(status, true);
      }
    }

    @Override
    public void released(int streamId, long batchId) {
      connection.outbox().send(new Message.Next(streamId, 0, new long[] {batchId}));
    }

    @Override
    public boolean isOpen(int streamId) {
      return table.ingest(streamId) != null;
    }
  }

  private void onNext(Message.Next next) {
    ServerStream stream = table.stream(next.streamId());
    for (long batchId : next.releases()) {
      connection.sender().released(next.streamId(), batchId);
    }
    if (stream != null) {
      try {
        validator.credits(stream.credits(), next.credits());
        stream.grant(next.credits());
      } catch (ThallusException e) {
        stream.abort(e.status(), true);
      }
    }
    if (next.releases().length > 0) {
      // Released memory may let a stream look ahead again.
      wakeStreams();
    }
    // A NEXT for a stream that has just ended crossed its END on the wire: nothing left to grant.
  }

  private void wakeStreams() {
    for (ServerStream stream : table.streams()) {
      stream.wake();
    }
  }

  private void abortStream(int streamId, Status status, boolean answer) {
    describes.cancel(streamId);
    ServerStream stream = table.stream(streamId);
    // Looked up first: an aborted stream may finish (and leave the map) before abort returns.
    SplitStreams split = splits.get(streamId);
    if (stream != null) {
      stream.abort(status, answer);
      if (split != null) {
        // One stream of a split stops them all; the others are answered, as their client still waits on them.
        split.abortAll(Status.of(StatusCode.CANCELLED, "stream " + streamId + " of the same split query was "
            + (answer ? "cancelled" : "closed") + " by the client"));
      }
    }
    ServerIngest ingest = table.ingest(streamId);
    if (ingest != null) {
      ingest.abort(answer ? Status.of(StatusCode.CANCELLED, "ingest " + streamId + " cancelled by the client; "
          + "nothing was written") : status, answer);
    }
  }

  /** Called by a stream when it has finished and released what it held. */
  private void streamDone(ServerStream stream) {
    table.remove(stream);
    registry.remove(stream);
    closeIfIdle();
  }

  /** Called by an ingest when it has answered and released what it held. */
  private void ingestDone(ServerIngest ingest) {
    table.remove(ingest);
    receiver.forget(ingest.id());
    closeIfIdle();
  }

  /** Once the client has gone and nothing runs for it any more, the connection closes (once). */
  private void closeIfIdle() {
    synchronized (this) {
      if (!inactive || !table.isEmpty() || closed) {
        return;
      }
      closed = true;
    }
    try {
      receiver.close();
    } finally {
      connection.close();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable()) {
      wakeStreams();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
    if (event instanceof IdleStateEvent && table.isEmpty() && describes.running() == 0) {
      fail(Status.of(StatusCode.DEADLINE_EXCEEDED, "closing a connection that sent nothing for "
          + context.limits().connectionIdleTimeout().toSeconds() + " s and has no stream open"));
      return;
    }
    ctx.fireUserEventTriggered(event);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    synchronized (this) {
      inactive = true;
    }
    for (ServerStream stream : table.streams()) {
      stream.abort(Status.of(StatusCode.UNAVAILABLE, "the client disconnected"), false);
    }
    for (ServerIngest ingest : table.ingests()) {
      ingest.abort(Status.of(StatusCode.UNAVAILABLE, "the client disconnected; nothing was written"), false);
    }
    describes.cancelAll();
    registry.remove(ctx.channel());
    closeIfIdle();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ConnectionFailures.caught(ctx, cause, connection.id());
  }
}
