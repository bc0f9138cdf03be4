package io.thallus.internal.transport.cma;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.Errno;
import io.thallus.internal.transport.ReceivePool;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Reads batches out of another process, either way: the client reads results from the server, the server reads
 * ingested batches from the client. For each batch one {@code process_vm_readv} (chunked at IOV_MAX buffers) pulls
 * every buffer into a pooled, page-aligned receive buffer, each at its aligned place. The other process's memory is
 * needed only until the read returns. One read at a time.
 */
final class CmaReader implements AutoCloseable {
  private final BufferAllocator allocator;
  private final long pid;
  private final String peer;
  private final ProcessVm reader = new ProcessVm();
  private final ReceivePool pool;
  private boolean closed;

  CmaReader(BufferAllocator allocator, long pid, String peer, long poolBytes) {
    this.allocator = allocator;
    this.pid = pid;
    this.peer = peer;
    this.pool = new ReceivePool(poolBytes);
  }

  /** A probe address and token, as the other side sends them: the proof that this process may read it. */
  static String token(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  /** Reads the peer's probe token: the kernel must allow this process to read the peer's memory. */
  synchronized void prove(long probeAddress, String tokenHex) {
    byte[] token = HexFormat.of().parseHex(tokenHex);
    try (ArrowBuf local = allocator.buffer(token.length)) {
      reader.clear();
      reader.add(local.memoryAddress(), probeAddress, token.length);
      long read = reader.read(pid);
      if (read != token.length) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "cross-memory attach to process " + pid
            + " is not permitted here (" + describe(read) + "): same user and ptrace_scope 0 are required");
      }
      byte[] seen = new byte[token.length];
      local.getBytes(0, seen);
      if (!java.util.Arrays.equals(seen, token)) {
        throw ThallusException.of(StatusCode.UNAVAILABLE,
            "process " + pid + " is not the " + peer + " this side talks to (probe token differs)");
      }
    }
  }

  /** Reads the batch into a receive buffer now; the peer's copy is free from then on. */
  synchronized FetchedBody pull(BatchHeader header, Duration wait) {
    if (closed) {
      throw ThallusException.of(StatusCode.CANCELLED, "the cma session is closed");
    }
    long[] offsets = header.packedOffsets();
    List<BufferDescriptor> all = new ArrayList<>(offsets.length);
    for (BatchPart part : header.parts()) {
      all.addAll(part.buffers());
    }
    long total = header.packedLength();
    ReceivePool.Lease body = pool.lend(total, Deadline.after(wait));
    try {
      long expected = 0;
      long read = 0;
      reader.clear();
      for (int i = 0; i < all.size(); i++) {
        BufferDescriptor d = all.get(i);
        if (d.length() == 0) {
          continue;
        }
        if (reader.isFull()) {
          read += check(reader.read(pid), header);
        }
        reader.add(body.address() + offsets[i], d.address(), d.length());
        expected += d.length();
      }
      read += check(reader.read(pid), header);
      if (read != expected) {
        throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + ": read " + read
            + " of " + expected + " bytes from the " + peer + "'s memory");
      }
      return FetchedBody.packed(body.address(), total, body::release);
    } catch (RuntimeException e) {
      body.release();
      throw e;
    }
  }

  private long check(long result, BatchHeader header) {
    if (result >= 0) {
      return result;
    }
    int errno = (int) -result;
    StatusCode code = switch (errno) {
      case 3 -> StatusCode.UNAVAILABLE; // ESRCH: the process is gone
      case 1 -> StatusCode.PERMISSION_DENIED; // EPERM
      default -> StatusCode.PROTOCOL_ERROR; // EFAULT and friends: addresses the peer does not have
    };
    throw ThallusException.of(code, "reading batch " + header.batchId() + " of stream " + header.streamId()
        + " from process " + pid + " failed: " + describe(result));
  }

  private static String describe(long result) {
    if (result >= 0) {
      return "read " + result + " bytes";
    }
    return Errno.name((int) -result);
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    reader.close();
    pool.close();
  }
}
