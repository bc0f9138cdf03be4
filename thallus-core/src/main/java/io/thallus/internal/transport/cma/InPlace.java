package io.thallus.internal.transport.cma;

import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;

/**
 * The sending side of cma, either way: a batch is exposed where its buffers already are (no copy), its descriptors
 * their addresses, and it is kept alive until the reader says it has read it. A small probe buffer with a random
 * token lets the reader prove at the handshake that the kernel lets it read this process.
 */
final class InPlace implements AutoCloseable {
  // The probe lives as long as the exposing side, outside the allocator that accounts batch memory.
  private final Arena probeArena = Arena.ofShared();
  private final MemorySegment probe;
  private final String token;

  InPlace() {
    byte[] bytes = new byte[16];
    new SecureRandom().nextBytes(bytes);
    this.token = CmaReader.token(bytes);
    this.probe = probeArena.allocate(bytes.length);
    MemorySegment.copy(MemorySegment.ofArray(bytes), 0, probe, 0, bytes.length);
  }

  /** What a reader needs: this process, the probe's address and its token, under the given keys. */
  Map<String, String> parameters(String pidKey, String probeKey, String tokenKey) {
    return Map.of(pidKey, Long.toString(ProcessHandle.current().pid()), probeKey, Long.toString(probe.address()),
        tokenKey, token);
  }

  /**
   * The batch exposed where it lies: the placement holds a reference to each buffer until core frees it, so the
   * memory stays the batch's while the reader may still read it.
   */
  static PlacedBody place(PackedBody body) {
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
      parts.add(part.withBuffers(buffers));
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
  public void close() {
    probeArena.close();
  }
}
