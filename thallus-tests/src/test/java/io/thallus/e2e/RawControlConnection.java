package io.thallus.e2e;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.thallus.Location;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.MessageCodec;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;

/** A plain socket speaking (or mis-speaking) the control protocol byte by byte, to test what the server does. */
public final class RawControlConnection implements AutoCloseable {
  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;

  public RawControlConnection(Location location) throws IOException {
    socket = new Socket(location.host(), location.port());
    socket.setSoTimeout(10_000);
    in = new DataInputStream(socket.getInputStream());
    out = socket.getOutputStream();
  }

  public void sendBytes(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  public void send(Message message) throws IOException {
    ByteBuf buf = Unpooled.buffer();
    MessageCodec.Encoder.encode(message, buf);
    buf.setInt(0, buf.readableBytes() - 4);
    byte[] bytes = new byte[buf.readableBytes()];
    buf.readBytes(bytes);
    buf.release();
    sendBytes(bytes);
  }

  /** The next message the server sends. */
  public Message receive() throws IOException {
    int length = in.readInt();
    byte[] body = new byte[length];
    in.readFully(body);
    return MessageCodec.Decoder.decode(Unpooled.wrappedBuffer(body));
  }

  /**
   * The messages one socket read returns, waiting for the first byte: what the server wrote at once arrives at once
   * on loopback. Fails if the read ends inside a frame.
   */
  public java.util.List<Message> receiveOneRead() throws IOException {
    byte[] bytes = new byte[1 << 20];
    int read = socket.getInputStream().read(bytes);
    if (read < 0) {
      throw new EOFException("the server closed the connection");
    }
    ByteBuf arrived = Unpooled.wrappedBuffer(bytes, 0, read);
    java.util.List<Message> messages = new java.util.ArrayList<>();
    while (arrived.isReadable()) {
      int length = arrived.readInt();
      if (arrived.readableBytes() < length) {
        throw new IOException("one read ended inside a frame: " + arrived.readableBytes() + " of " + length
            + " bytes arrived");
      }
      messages.add(MessageCodec.Decoder.decode(arrived.readSlice(length)));
    }
    return messages;
  }

  /** True once the server has closed the connection. */
  public boolean closedByServer() throws IOException {
    try {
      return in.read() < 0;
    } catch (EOFException e) {
      return true;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
