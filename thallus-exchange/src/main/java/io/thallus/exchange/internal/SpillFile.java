package io.thallus.exchange.internal;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * One map output's batches spilled to local disk: Arrow IPC record batch messages appended one after another, each
 * found again by its {@link ArrowBlock} (offset and lengths), as an Arrow IPC file finds its blocks. Written by the
 * map's one writer, read by any number of pulls (one positional read at a time).
 */
final class SpillFile implements AutoCloseable {
  private final Path path;
  private final FileChannel channel;
  private final WriteChannel writer;

  SpillFile(Path path) {
    this.path = path;
    try {
      Files.createDirectories(path.getParent());
      this.channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot create the spill file " + path + ": " + e, e);
    }
    this.writer = new WriteChannel(channel);
  }

  synchronized ArrowBlock append(ArrowRecordBatch batch) {
    try {
      channel.position(writer.getCurrentPosition());
      return MessageSerializer.serialize(writer, batch);
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "cannot spill to " + path + ": " + e, e);
    }
  }

  synchronized ArrowRecordBatch read(ArrowBlock block, BufferAllocator allocator) {
    try {
      channel.position(block.getOffset());
      return MessageSerializer.deserializeRecordBatch(new ReadChannel(channel), block, allocator);
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot read back the spill file " + path + ": " + e, e);
    }
  }

  Path path() {
    return path;
  }

  @Override
  public synchronized void close() {
    try {
      channel.close();
      Files.deleteIfExists(path);
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot delete the spill file " + path + ": " + e, e);
    }
  }
}
