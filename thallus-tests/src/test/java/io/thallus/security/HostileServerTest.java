package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.thallus.Location;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import io.thallus.internal.batch.IpcFrames;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.MessageCodec;
import io.thallus.internal.protocol.Protocol;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What a client does with what a server tells it: a server cannot make it delete files it points at. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class HostileServerTest {
  @TempDir
  Path temp;

  @Test
  void aServerNamingAnyFolderForShmCannotMakeTheClientEmptyIt() throws Exception {
    Path precious = Files.writeString(temp.resolve("precious.txt"), "keep me");
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Thread server = Thread.ofPlatform().daemon().start(() -> welcomeWithShmFolder(listener, temp));
      try (BufferAllocator memory = new RootAllocator()) {
        ThallusClient client = ThallusClient.connect(memory,
            Location.of("127.0.0.1", listener.getLocalPort()).withTransport("shm"));
        client.close();
      }
      server.join(5_000);
    }
    assertThat(precious).as("a file in the folder the server named").exists().hasContent("keep me");
  }

  @Test
  void aBatchWhoseOffsetsLieFailsTheStreamNamingTheColumnBeforeAnythingReadsIt() throws Exception {
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
         BufferAllocator memory = new RootAllocator()) {
      Thread server = Thread.ofPlatform().daemon().start(() -> answerWithALyingBatch(listener, memory));
      try (ThallusClient client = ThallusClient.connect(memory,
          Location.of("127.0.0.1", listener.getLocalPort()).withTransport("ipc"));
           ThallusStream stream = client.query("SELECT s FROM anything")) {
        assertThatThrownBy(() -> {
          while (stream.hasNext()) {
            stream.next().close();
          }
        }).isInstanceOfSatisfying(ThallusException.class,
                e -> assertThat(e.status().code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
            .hasMessageContaining("the server sent a batch of stream")
            .hasMessageContaining("column \"s\": offset 2 (-8) is below offset 1 (1)");
      }
      server.join(5_000);
    }
  }

  /** A fake ipc server: answers the first OPEN with a schema, one batch whose third offset is -8, and END. */
  private static void answerWithALyingBatch(ServerSocket listener, BufferAllocator memory) {
    try (Socket socket = listener.accept();
         VarCharVector strings = new VarCharVector("s", memory)) {
      DataInputStream in = new DataInputStream(socket.getInputStream());
      OutputStream out = socket.getOutputStream();
      in.readFully(new byte[in.readInt()]);
      send(out, new Message.Welcome(Protocol.VERSION, "ipc", Map.of(), "hostile"));
      Message.Open open = null;
      while (open == null) {
        byte[] body = new byte[in.readInt()];
        in.readFully(body);
        ByteBuf frame = Unpooled.wrappedBuffer(body);
        if (MessageCodec.Decoder.decode(frame) instanceof Message.Open o) {
          open = o;
        }
      }
      strings.allocateNew();
      strings.setSafe(0, "a".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      strings.setSafe(1, "b".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      strings.setSafe(2, "c".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      strings.setValueCount(3);
      strings.getOffsetBuffer().setInt(8, -8);
      VectorSchemaRoot root = new VectorSchemaRoot(java.util.List.of(strings));
      send(out, new Message.Opened(open.streamId(), root.getSchema().serializeAsMessage()));
      try (BatchContents contents = new BatchContents(java.util.List.of(),
          new VectorUnloader(root).getRecordBatch())) {
        ByteBuf inline = Unpooled.buffer(IpcFrames.frameBytes(contents));
        IpcFrames.write(0, contents, inline);
        send(out, new Message.Batch(new BatchHeader(open.streamId(), 0, java.util.List.of()), inline));
      }
      send(out, new Message.End(open.streamId(), 3, 1, 0, 0, 0));
      while (in.read() >= 0) {
        // Until the client closes.
      }
    } catch (Exception e) {
      // The client went away: the test checks what it saw.
    }
  }

  private static void send(OutputStream out, Message message) throws java.io.IOException {
    ByteBuf frame = Unpooled.buffer();
    MessageCodec.Encoder.encode(message, frame);
    if (message instanceof Message.Batch batch) {
      frame.writeBytes(batch.inline());
      batch.inline().release();
    }
    frame.setInt(0, frame.readableBytes() - 4);
    byte[] bytes = new byte[frame.readableBytes()];
    frame.readBytes(bytes);
    frame.release();
    out.write(bytes);
    out.flush();
  }

  /** A fake server: reads HELLO, answers WELCOME choosing shm in {@code folder}, then waits for the client to go. */
  private static void welcomeWithShmFolder(ServerSocket listener, Path folder) {
    try (Socket socket = listener.accept()) {
      DataInputStream in = new DataInputStream(socket.getInputStream());
      in.readFully(new byte[in.readInt()]);
      ByteBuf frame = Unpooled.buffer();
      MessageCodec.Encoder.encode(new Message.Welcome(Protocol.VERSION, "shm",
          Map.of("shm.dir", folder.toString()), "hostile"), frame);
      frame.setInt(0, frame.readableBytes() - 4);
      byte[] bytes = new byte[frame.readableBytes()];
      frame.readBytes(bytes);
      frame.release();
      OutputStream out = socket.getOutputStream();
      out.write(bytes);
      out.flush();
      while (in.read() >= 0) {
        // Until the client closes.
      }
    } catch (Exception e) {
      // The client went away: the test checks what it left.
    }
  }
}
