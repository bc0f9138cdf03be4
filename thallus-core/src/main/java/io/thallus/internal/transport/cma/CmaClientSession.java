package io.thallus.internal.transport.cma;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.Errno;
import io.thallus.internal.transport.ReceivePool;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import io.thallus.spi.PackedBody;
import io.thallus.spi.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The cma transport's client side: for each BATCH, one {@code process_vm_readv} (chunked at IOV_MAX buffers) pulls
 * every buffer from the server's memory into a pooled, page-aligned receive buffer, each at its aligned place, on
 * which core rebuilds the batch. The server's memory is needed only until the read returns. Reads happen on the
 * control thread in arrival order; a full receive pool fails the connection at once rather than block that thread.
 */
final class CmaClientSession implements ClientSession {
  private static final Duration NO_WAIT = Duration.ZERO;

  private final BufferAllocator allocator;
  private final long pid;
  private final ProcessVm reader = new ProcessVm();
  private final ReceivePool pool;
  private boolean closed;

  private CmaClientSession(ClientOffer.Context context, long pid) {
    this.allocator = context.allocator();
    this.pid = pid;
    this.pool = new ReceivePool(context.receivePoolBytes());
  }

  static CmaClientSession open(ClientOffer.Context context, Map<String, String> welcome) {
    long pid = Long.parseLong(Transport.requireParameter(welcome, CmaTransport.PID));
    long probe = Long.parseLong(Transport.requireParameter(welcome, CmaTransport.PROBE_ADDRESS));
    byte[] token = HexFormat.of().parseHex(Transport.requireParameter(welcome, CmaTransport.PROBE_TOKEN));
    CmaClientSession session = new CmaClientSession(context, pid);
    try {
      session.prove(probe, token);
      return session;
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
  }

  /** Reads the server's probe token: the kernel must allow this process to read the server's memory. */
  private void prove(long probeAddress, byte[] token) {
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
            "process " + pid + " is not the server this client talks to (probe token differs)");
      }
    }
  }

  /** Reads the batch into a receive buffer now, on the control thread; the server's copy is free from then on. */
  @Override
  public void fetch(BatchHeader header, Fetched done) {
    FetchedBody body;
    try {
      body = pull(header);
    } catch (ThallusException e) {
      done.failed(e);
      return;
    }
    done.body(body);
  }

  private synchronized FetchedBody pull(BatchHeader header) {
    if (closed) {
      throw ThallusException.of(StatusCode.CANCELLED, "the cma session is closed");
    }
    long[] offsets = BatchLayouts.packedOffsets(header);
    List<BufferDescriptor> all = new ArrayList<>(offsets.length);
    for (BatchPart part : header.parts()) {
      all.addAll(part.buffers());
    }
    long total = 0;
    for (int i = 0; i < all.size(); i++) {
      total = Math.max(total, PackedBody.align(offsets[i] + all.get(i).length()));
    }
    ReceivePool.Lease body = pool.lend(total, Deadline.after(NO_WAIT));
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
            + " of " + expected + " bytes from the server's memory");
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
      case 3 -> StatusCode.UNAVAILABLE; // ESRCH: the server process is gone
      case 1 -> StatusCode.PERMISSION_DENIED; // EPERM
      default -> StatusCode.PROTOCOL_ERROR; // EFAULT and friends: addresses the server does not have
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
