package io.thallus.spi;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * One batch laid out as a single body: every Arrow buffer of every part (dictionaries first, the records last), one
 * after the other, each starting on an {@link #ALIGNMENT} boundary. Core packs it once; a transport places it
 * somewhere the client can fetch it from. The buffers belong to the batch: a transport that exposes them in place
 * (instead of copying them) retains them itself and releases them when its placement closes.
 */
public final class PackedBody {
  /** Buffers start on this boundary inside a body, as Arrow IPC requires. */
  public static final int ALIGNMENT = 8;
  private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(ALIGNMENT);

  private final List<BatchPart> parts;
  private final List<ArrowBuf> buffers;
  private final long[] offsets;
  private final long length;

  /**
   * {@code parts}' descriptors give each buffer's offset in the body (key 0); {@code buffers} are in the same order,
   * {@code offsets[i]} being where buffer i starts.
   */
  public PackedBody(List<BatchPart> parts, List<ArrowBuf> buffers, long[] offsets, long length) {
    this.parts = List.copyOf(parts);
    this.buffers = List.copyOf(buffers);
    this.offsets = offsets.clone();
    this.length = length;
  }

  public static long align(long offset) {
    return (offset + ALIGNMENT - 1) & -ALIGNMENT;
  }

  /** The layout, with each descriptor's address the buffer's offset in this body. */
  public List<BatchPart> parts() {
    return parts;
  }

  /** The batch's Arrow buffers, in body order. */
  public List<ArrowBuf> buffers() {
    return buffers;
  }

  /** Where buffer {@code i} starts in the body. */
  public long offset(int i) {
    return offsets[i];
  }

  /** Bytes from the body's start to the end of its last buffer, aligned. */
  public long length() {
    return length;
  }

  /** Copies the body to {@code address} (at least {@link #length()} bytes of this process' memory). */
  public void copyTo(long address) {
    for (int i = 0; i < buffers.size(); i++) {
      ArrowBuf buffer = buffers.get(i);
      long bytes = buffer.readableBytes();
      if (bytes > 0) {
        MemoryUtil.copyMemory(buffer.memoryAddress(), address + offsets[i], bytes);
      }
    }
  }

  /**
   * The body as one gathering write: each buffer, with the padding between them as zeros. Null in a JVM where Arrow
   * makes no ByteBuffer views of its memory (started without {@code --add-opens=java.base/java.nio=ALL-UNNAMED}):
   * the caller copies the buffers out instead.
   */
  public ByteBuffer[] gatherList() {
    List<ByteBuffer> list = new ArrayList<>(buffers.size() * 2);
    for (int i = 0; i < buffers.size(); i++) {
      ArrowBuf buffer = buffers.get(i);
      long bytes = buffer.readableBytes();
      if (bytes > 0) {
        ByteBuffer view = io.thallus.internal.batch.ArrowViews.viewOrNull(buffer, 0, Math.toIntExact(bytes));
        if (view == null) {
          return null;
        }
        list.add(view);
      }
      long end = offsets[i] + bytes;
      long next = i + 1 < buffers.size() ? offsets[i + 1] : length;
      if (next > end) {
        list.add(ZEROS.slice(0, (int) (next - end)));
      }
    }
    return list.toArray(ByteBuffer[]::new);
  }

  /** The same layout with every descriptor moved to where the body was placed: address plus {@code base}, {@code key}. */
  public List<BatchPart> relocated(long base, int key) {
    List<BatchPart> moved = new ArrayList<>(parts.size());
    for (BatchPart part : parts) {
      List<BufferDescriptor> placed = new ArrayList<>(part.buffers().size());
      for (BufferDescriptor d : part.buffers()) {
        placed.add(new BufferDescriptor(base + d.address(), d.length(), key));
      }
      moved.add(part.withBuffers(placed));
    }
    return moved;
  }
}
