package io.thallus.internal.batch;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.ipc.WriteChannel;

/**
 * Byte copies between Arrow memory and anything else that work in every JVM. Arrow makes {@link ByteBuffer} views
 * of its memory only where java.nio is opened to it ({@code --add-opens=java.base/java.nio=ALL-UNNAMED}); a JVM
 * started with no flags at all (a tool that loads the JDBC driver) has none, and {@link ArrowBuf#nioBuffer} throws
 * there, nor tells Arrow a direct ByteBuffer's address. Such a JVM copies through small heap arrays instead. Whether
 * views work is learned from the first try and kept.
 */
public final class ArrowViews {
  private static final int CHUNK = 64 * 1024;

  /** Whether this JVM lets Arrow make ByteBuffer views of its memory; false from the first refusal on. */
  private static volatile boolean granted = true;

  private ArrowViews() {}

  /** Whether views have not been refused so far (true until the first try in a JVM that has none). */
  public static boolean granted() {
    return granted;
  }

  /** A view of {@code length} bytes of {@code buffer} from {@code index} (no copy), or null where the JVM has none. */
  public static ByteBuffer viewOrNull(ArrowBuf buffer, long index, int length) {
    if (granted) {
      try {
        return buffer.nioBuffer(index, length);
      } catch (UnsupportedOperationException notOpened) {
        granted = false;
      }
    }
    return null;
  }

  /** Appends {@code length} bytes of {@code from}, starting at {@code index}, to {@code to}. */
  public static void append(ArrowBuf from, long index, int length, ByteBuf to) {
    ByteBuffer view = viewOrNull(from, index, length);
    if (view != null) {
      to.writeBytes(view);
      return;
    }
    // Arrow copies into a direct ByteBuffer by its address, which such a JVM does not give Arrow either: a heap array.
    byte[] chunk = new byte[Math.min(length, CHUNK)];
    for (int done = 0; done < length; ) {
      int n = Math.min(chunk.length, length - done);
      from.getBytes(index + done, chunk, 0, n);
      to.writeBytes(chunk, 0, n);
      done += n;
    }
  }

  /** Copies {@code length} bytes of {@code from} at {@code fromIndex} into {@code to} at {@code toIndex}. */
  public static void copy(ByteBuf from, int fromIndex, ArrowBuf to, long toIndex, int length) {
    ByteBuffer view = viewOrNull(to, toIndex, length);
    if (view != null) {
      from.getBytes(fromIndex, view);
      return;
    }
    byte[] chunk = new byte[Math.min(length, CHUNK)];
    for (int done = 0; done < length; ) {
      int n = Math.min(chunk.length, length - done);
      from.getBytes(fromIndex + done, chunk, 0, n);
      to.setBytes(toIndex + done, chunk, 0, n);
      done += n;
    }
  }

  /**
   * Arrow's IPC writer for any JVM: where views are refused, each Arrow buffer goes to {@code out} through a heap
   * array (Arrow's own {@link WriteChannel#write(ArrowBuf)} makes a view of it).
   */
  public static WriteChannel writeChannel(WritableByteChannel out) {
    return new WriteChannel(out) {
      @Override
      public void write(ArrowBuf buffer) throws IOException {
        long length = buffer.readableBytes();
        long start = buffer.readerIndex();
        if (length <= Integer.MAX_VALUE) {
          ByteBuffer view = viewOrNull(buffer, start, (int) length);
          if (view != null) {
            write(view);
            return;
          }
        }
        byte[] chunk = new byte[(int) Math.min(length, CHUNK)];
        for (long done = 0; done < length; ) {
          int n = (int) Math.min(chunk.length, length - done);
          buffer.getBytes(start + done, chunk, 0, n);
          write(ByteBuffer.wrap(chunk, 0, n));
          done += n;
        }
      }
    };
  }
}
