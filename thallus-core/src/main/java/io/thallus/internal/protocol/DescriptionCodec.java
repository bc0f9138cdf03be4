package io.thallus.internal.protocol;

import static io.thallus.internal.protocol.WireReader.readBytes;
import static io.thallus.internal.protocol.WireReader.readCount;
import static io.thallus.internal.protocol.WireReader.readInt;
import static io.thallus.internal.protocol.WireReader.readLong;
import static io.thallus.internal.protocol.WireReader.readString;
import static io.thallus.internal.protocol.WireReader.readU8;
import static io.thallus.internal.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;
import io.thallus.DatasetDescription;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The bodies of DESCRIBE and DESCRIBED (see {@link MessageCodec} for the field types, read by {@link WireReader} and
 * written by {@link WireWriter}):
 *
 * <pre>
 * DESCRIBE   streamId i32, name string, dataset string
 * DESCRIBED  streamId i32, kind u8 (0 table, 1 view, 2 files, 3 shard), schema: u32 count + bytes (an Arrow IPC Schema
 *              message), partCount u32, part * partCount
 *              part = tag u8, then by tag: 0 file: path string, bytes i64, rows i64, rowGroupCount u32,
 *                                                  rows i64 * rowGroupCount
 *                                          1 row range: firstRowId i64, endRowId i64, rows i64, bytes i64
 *                                          2 shard part: id string, checksum string, dataset string, bytes i64,
 *                                                        rows i64
 * LIST_SHARDS streamId i32
 * SHARDS      streamId i32, nameCount u32, name string * nameCount
 * </pre>
 *
 * A DESCRIBED is refused as a corrupt frame unless it is one the server could have meant: a known kind, parts of
 * that kind only, row ranges in order and a file's row groups adding up to its rows, at most
 * {@link DatasetDescription#MAX_PARTS} parts. A SHARDS answer is refused unless each name is a plain SQL identifier
 * of at most 128 characters, named once (letter case aside), at most {@link #MAX_SHARD_NAMES} of them.
 */
final class DescriptionCodec {
  private static final int FILE = 0;
  private static final int ROW_RANGE = 1;
  private static final int SHARD_PART = 2;
  /** The fewest bytes a part takes on the wire (a row range; a file with an empty path and no group takes 25). */
  private static final int MIN_PART_BYTES = 25;

  /** The most sharded dataset names one SHARDS answer holds. */
  static final int MAX_SHARD_NAMES = 100_000;
  /** What a sharded dataset's name is (as a server's declaration checks it). */
  private static final java.util.regex.Pattern SHARD_NAME = java.util.regex.Pattern.compile(
      "[A-Za-z_][A-Za-z0-9_]{0,127}");

  private DescriptionCodec() {}

  static Message.Shards readShards(ByteBuf in) {
    int streamId = readInt(in);
    int count = readCount(in, 5);
    if (count > MAX_SHARD_NAMES) {
      throw new CorruptedFrameException(count + " sharded dataset names are over the maximum of " + MAX_SHARD_NAMES);
    }
    List<String> names = new ArrayList<>(count);
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (int i = 0; i < count; i++) {
      String name = readString(in);
      if (!SHARD_NAME.matcher(name).matches()) {
        throw new CorruptedFrameException("'" + name + "' is not a sharded dataset name (a plain SQL identifier)");
      }
      if (!seen.add(name.toLowerCase(java.util.Locale.ROOT))) {
        throw new CorruptedFrameException("sharded dataset " + name + " is named twice");
      }
      names.add(name);
    }
    return new Message.Shards(streamId, names);
  }

  static void writeShards(ByteBuf out, Message.Shards message) {
    out.writeInt(message.streamId());
    out.writeInt(message.names().size());
    for (String name : message.names()) {
      writeString(out, name);
    }
  }

  static Message.Describe readDescribe(ByteBuf in) {
    return new Message.Describe(readInt(in), readString(in), readString(in));
  }

  static void writeDescribe(ByteBuf out, Message.Describe message) {
    out.writeInt(message.streamId());
    writeString(out, message.name());
    writeString(out, message.dataset());
  }

  static Message.Described readDescribed(ByteBuf in) {
    int streamId = readInt(in);
    int kindValue = readU8(in);
    DatasetDescription.Kind kind = DatasetDescription.Kind.fromWireValue(kindValue);
    if (kind == null) {
      throw new CorruptedFrameException("unknown dataset kind " + kindValue);
    }
    byte[] schemaBytes = readBytes(in);
    Schema schema;
    try {
      schema = Schema.deserializeMessage(ByteBuffer.wrap(schemaBytes));
    } catch (RuntimeException e) {
      throw new CorruptedFrameException("DESCRIBED's schema is not an Arrow IPC Schema message: " + e.getMessage());
    }
    int count = readCount(in, MIN_PART_BYTES);
    if (count > DatasetDescription.MAX_PARTS) {
      throw new CorruptedFrameException(count + " parts are over the maximum of " + DatasetDescription.MAX_PARTS);
    }
    List<DatasetDescription.Part> parts = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      parts.add(readPart(in));
    }
    try {
      return new Message.Described(streamId, new DatasetDescription(kind, schema, parts));
    } catch (IllegalArgumentException e) {
      throw new CorruptedFrameException("not a description: " + e.getMessage());
    }
  }

  private static DatasetDescription.Part readPart(ByteBuf in) {
    int tag = readU8(in);
    try {
      return switch (tag) {
        case FILE -> {
          String path = readString(in);
          long bytes = readLong(in);
          long rows = readLong(in);
          int groups = readCount(in, Long.BYTES);
          List<Long> groupRows = new ArrayList<>(groups);
          for (int g = 0; g < groups; g++) {
            groupRows.add(in.readLong());
          }
          yield new DatasetDescription.FilePart(path, bytes, rows, groupRows);
        }
        case ROW_RANGE -> new DatasetDescription.RowRange(readLong(in), readLong(in), readLong(in), readLong(in));
        case SHARD_PART -> new DatasetDescription.ShardPart(readString(in), readString(in), readString(in),
            readLong(in), readLong(in));
        default -> throw new CorruptedFrameException("unknown dataset part tag " + tag);
      };
    } catch (IllegalArgumentException e) {
      throw new CorruptedFrameException("not a dataset part: " + e.getMessage());
    }
  }

  static void writeDescribed(ByteBuf out, Message.Described message) {
    DatasetDescription description = message.description();
    out.writeInt(message.streamId());
    out.writeByte(description.kind().wireValue());
    byte[] schema = description.schema().serializeAsMessage();
    out.writeInt(schema.length);
    out.writeBytes(schema);
    out.writeInt(description.parts().size());
    for (DatasetDescription.Part part : description.parts()) {
      switch (part) {
        case DatasetDescription.FilePart file -> {
          out.writeByte(FILE);
          writeString(out, file.path());
          out.writeLong(file.bytes());
          out.writeLong(file.rows());
          out.writeInt(file.rowGroupRows().size());
          for (long rows : file.rowGroupRows()) {
            out.writeLong(rows);
          }
        }
        case DatasetDescription.RowRange range -> {
          out.writeByte(ROW_RANGE);
          out.writeLong(range.firstRowId());
          out.writeLong(range.endRowId());
          out.writeLong(range.rows());
          out.writeLong(range.bytes());
        }
        case DatasetDescription.ShardPart shard -> {
          out.writeByte(SHARD_PART);
          writeString(out, shard.id());
          writeString(out, shard.checksum());
          writeString(out, shard.dataset());
          out.writeLong(shard.bytes());
          out.writeLong(shard.rows());
        }
      }
    }
  }
}
