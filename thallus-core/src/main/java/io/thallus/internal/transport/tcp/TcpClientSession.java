package io.thallus.internal.transport.tcp;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.ReceivePool;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.Deadline;
import io.thallus.spi.IngestPlacer;
import io.thallus.spi.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.HexFormat;
import java.util.Map;

/**
 * The tcp transport's client side: bodies come on the data socket in the order of their BATCH frames, and one reader
 * thread reads each, straight into a pooled receive buffer that core turns into the batch.
 */
final class TcpClientSession implements ClientSession {
  private final ClientOffer.Context context;
  private final SocketIo io;
  private final ReceivePool pool;
  private final BodyReader reader;
  private final IngestPlacer placer;
  private volatile boolean closed;

  private TcpClientSession(ClientOffer.Context context, SocketIo io) {
    this.context = context;
    this.io = io;
    this.pool = new ReceivePool(context.receivePoolBytes());
    this.reader = new BodyReader(io, pool, context.ioTimeout(), "thallus-client-tcp-reader", false);
    Object ingestWrites = new Object();
    this.placer = IngestPlacer.of(Map.of(), (body, deadline) -> {
      if (closed) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the tcp data connection is closed");
      }
      return StreamedBodies.place(io, ingestWrites, body, "server", () -> closed = true);
    });
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
  public void fetch(BatchHeader header, Fetched done) {
    reader.fetch(header, done);
  }

  @Override
  public boolean serverHoldsBodies() {
    return false;
  }

  /** Ingested bodies follow their frames on the data connection, the way results come: nothing to hold. */
  @Override
  public IngestPlacer ingestPlacer() {
    return placer;
  }


  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    io.close();
    // The reader may be waiting for the next header (up to 250 ms): close interrupts it rather than wait it out.
    reader.close();
    pool.close();
  }
}
