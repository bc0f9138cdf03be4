package io.thallus.internal.transport.cma;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.Hosts;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;

/**
 * The cma transport's server side. It copies nothing: a batch's descriptors are the addresses of its own buffers,
 * and the batch is kept alive until the client says it has read it. A small probe buffer with a random token lets
 * each client prove at the handshake that the kernel lets it read this process.
 */
final class CmaServer implements ServerTransport {
  // The probe lives as long as the transport, outside the allocator that accounts batch memory.
  private final Arena probeArena = Arena.ofShared();
  private final MemorySegment probe;
  private final String token;

  CmaServer() {
    byte[] bytes = new byte[16];
    new SecureRandom().nextBytes(bytes);
    this.token = HexFormat.of().formatHex(bytes);
    this.probe = probeArena.allocate(bytes.length);
    MemorySegment.copy(MemorySegment.ofArray(bytes), 0, probe, 0, bytes.length);
  }

  @Override
  public ServerSession accept(InetSocketAddress client, Map<String, String> offer) {
    if (!Hosts.isLocal(client.getAddress())) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "cma needs the client on the server's host");
    }
    return new Session();
  }

  @Override
  public void close() {
    probeArena.close();
  }

  /**
   * One client: a batch is exposed where its buffers already are. The placement holds a reference to each buffer
   * until core frees it, so the memory stays the batch's while the client may still read it.
   */
  private final class Session implements ServerSession {
    @Override
    public Map<String, String> welcomeParameters() {
      return Map.of(CmaTransport.PID, Long.toString(ProcessHandle.current().pid()),
          CmaTransport.PROBE_ADDRESS, Long.toString(probe.address()), CmaTransport.PROBE_TOKEN, token);
    }

    @Override
    public PlacedBody place(PackedBody body, Deadline deadline) {
      List<BatchPart> parts = new ArrayList<>(body.parts().size());
      List<ArrowBuf> kept = new ArrayList<>(body.buffers().size());
      int index = 0;
      for (BatchPart part : body.parts()) {
        List<BufferDescriptor> buffers = new ArrayList<>(part.buffers().size());
        for (BufferDescriptor buffer : part.buffers()) {
          ArrowBuf source = body.buffers().get(index++);
          buffers.add(new BufferDescriptor(buffer.length() == 0 ? 0 : source.memoryAddress(), buffer.length(), 0));
          source.getReferenceManager().retain();
          kept.add(source);
        }
        parts.add(new BatchPart(part.dictionaryId(), part.delta(), part.length(), part.nodes(), buffers));
      }
      return new PlacedBody() {
        @Override
        public List<BatchPart> parts() {
          return parts;
        }

        @Override
        public void close() {
          kept.forEach(buffer -> buffer.getReferenceManager().release());
        }
      };
    }

    @Override
    public void close() {}
  }
}
