package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.MessageCodec;
import io.thallus.internal.protocol.Protocol;
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
