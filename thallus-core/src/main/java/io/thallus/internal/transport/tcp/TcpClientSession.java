package io.thallus.internal.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchLayouts;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.internal.transport.ReceivePool;
import io.thallus.spi.Deadline;
import io.thallus.spi.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SocketChannel;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The tcp transport's client side. BATCH messages arrive on the control thread; bodies are read from the data
 * socket, in the same order, by one reader thread, straight into pooled receive buffers that become the batch.
 */
final class TcpClientSession implements ClientSession {
  private final ClientOffer.Context context;
  private final BufferAllocator allocator;
  private final SocketIo io;
  private final ReceivePool pool;
  private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
  /** Items queued or being read: while non-zero, inline batches queue up behind them to keep stream order. */
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Thread reader;
  private volatile BatchSink sink;
  private volatile boolean closed;

  /**
   * A batch waiting for its body, one whose contents are ready but must keep its place in line, or (with no
   * header) an action that must wait for the batches before it.
   */
  private record Item(BatchHeader header, long bodyLength, BatchContents ready, Runnable action) {}

  private TcpClientSession(ClientOffer.Context context, SocketIo io) {
    this.context = context;
    this.allocator = context.allocator();
    this.io = io;
    this.pool = new ReceivePool(context.receivePoolBytes());
    this.reader = Thread.ofPlatform().name("thallus-client-tcp-reader").daemon().unstarted(this::readLoop);
  }

  static TcpClientSession connect(ClientOffer.Context context, Map<String, String> welcome) {
    int port = Integer.parseInt(Transport.requireParameter(welcome, TcpTransport.PORT));
    byte[] token = HexFormat.of().parseHex(Transport.requireParameter(welcome, TcpTransport.TOKEN));
    SocketChannel channel = null;
    try {
      channel = SocketChannel.open();
      channel.socket().setTcpNoDelay(true);
      channel.socket().connect(new InetSocketAddress(context.host(), port),
          (int) Math.min(Integer.MAX_VALUE, context.ioTimeout().toMillis()));
      SocketIo io = new SocketIo(channel);
      io.writeFully(new ByteBuffer[] {ByteBuffer.wrap(token)}, Deadline.after(context.ioTimeout()),
          "sending the data connection's token");
      TcpClientSession session = new TcpClientSession(context, io);
      session.reader.start();
      return session;
    } catch (IOException | RuntimeException e) {
      if (channel != null) {
        try {
          channel.close();
        } catch (IOException ignored) {
          // Reporting the connect failure matters more.
        }
      }
      throw ThallusException.of(StatusCode.UNAVAILABLE,
          "cannot open the tcp data connection to " + context.host() + ":" + port + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void onBatch(BatchHeader header, ByteBuf inline, BatchSink batchSink) {
    this.sink = batchSink;
    long bodyLength;
    try {
      bodyLength = BatchLayouts.bodyLength(header);
    } catch (ThallusException e) {
      batchSink.fail(e);
      return;
    }
    if (!inline.isReadable() && bodyLength > 0) {
      inFlight.incrementAndGet();
      queue.add(new Item(header, bodyLength, null, null));
      return;
    }
    BatchContents contents;
    try {
      contents = BatchLayouts.fromInline(header, inline, allocator);
    } catch (RuntimeException e) {
      batchSink.fail(e instanceof ThallusException t ? t
          : ThallusException.of(StatusCode.PROTOCOL_ERROR, "bad inline batch: " + e.getMessage(), e));
      return;
    }
    if (inFlight.get() == 0) {
      batchSink.deliver(header, contents);
    } else {
      inFlight.incrementAndGet();
      queue.add(new Item(header, 0, contents, null));
    }
  }

  private void readLoop() {
    try {
      while (!closed) {
        Item item = queue.poll(250, TimeUnit.MILLISECONDS);
        if (item == null) {
          continue;
        }
        // The item counts as in flight until it is delivered: an END that finds nothing in flight runs at once on
        // the control thread, and must not overtake a batch this thread holds but has not handed over yet.
        try {
          if (item.action() != null) {
            item.action().run();
          } else {
            sink.deliver(item.header(), item.ready() != null ? item.ready() : readBody(item));
          }
        } finally {
          inFlight.decrementAndGet();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException | ClosedSelectorException | ThallusException e) {
      if (!closed) {
        BatchSink target = sink;
        ThallusException error = e instanceof ThallusException t ? t : ThallusException.of(StatusCode.UNAVAILABLE,
            "the tcp data connection failed: " + e.getMessage(), e);
        if (target != null) {
          target.fail(error);
        }
      }
    } finally {
      drainQueue();
    }
  }

  @Override
  public void afterPendingBatches(Runnable action) {
    if (inFlight.get() == 0) {
      action.run();
    } else {
      inFlight.incrementAndGet();
      queue.add(new Item(null, 0, null, action));
    }
  }

  private BatchContents readBody(Item item) throws IOException {
    Deadline deadline = Deadline.after(context.ioTimeout());
    ArrowBuf body = pool.borrow(item.bodyLength(), allocator, deadline);
    try {
      io.readFully(ReceivePool.byteBuffer(body, item.bodyLength()), deadline,
          "the body of batch " + item.header().batchId() + " of stream " + item.header().streamId());
      return BatchLayouts.assemble(item.header(), d -> body.slice(d.address(), d.length()));
    } finally {
      body.close();
    }
  }

  private void drainQueue() {
    Item item;
    while ((item = queue.poll()) != null) {
      if (item.ready() != null) {
        item.ready().close();
      }
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    io.close();
    // The reader may be waiting for the next header (up to 250 ms); without the interrupt every close waited it out.
    reader.interrupt();
    try {
      reader.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    drainQueue();
    pool.close();
  }
}
