package io.thallus.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.thallus.DatasetDescription;
import io.thallus.DatasetDescription.FilePart;
import io.thallus.DatasetDescription.Kind;
import io.thallus.DatasetDescription.RowRange;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/**
 * DESCRIBE, DESCRIBED, LIST_SHARDS and SHARDS on Netty's EmbeddedChannel: their bytes as documented, and bad frames
 * refused by name.
 */
class DescriptionCodecTest {
  private static final Schema SCHEMA = new Schema(List.of(
      Field.nullable("id", new ArrowType.Int(64, true)),
      Field.nullable("price", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
      Field.nullable("name", ArrowType.Utf8.INSTANCE)));

  private static EmbeddedChannel channel() {
    return new EmbeddedChannel(new FrameDecoder(1 << 20), new MessageCodec.Decoder(), MessageCodec.Encoder.INSTANCE);
  }

  private static ByteBuf encode(Message message) {
    EmbeddedChannel writer = channel();
    assertThat(writer.writeOutbound(message)).isTrue();
    ByteBuf bytes = Unpooled.buffer();
    ByteBuf part;
    while ((part = writer.readOutbound()) != null) {
      bytes.writeBytes(part);
      part.release();
    }
    return bytes;
  }

  /** Encodes, then decodes the bytes three at a time, as a socket might deliver them. */
  private static Message roundTrip(Message message) {
    ByteBuf bytes = encode(message);
    EmbeddedChannel reader = channel();
    while (bytes.isReadable()) {
      reader.writeInbound(bytes.readRetainedSlice(Math.min(3, bytes.readableBytes())));
    }
    bytes.release();
    Message decoded = reader.readInbound();
    assertThat((Object) reader.readInbound()).isNull();
    return decoded;
  }

  @Test
  void everyKindRoundTrips() {
    List<Message> messages = List.of(
        new Message.Describe(3, "\"My Schema\".t", ""),
        new Message.Describe(4, "dataset", "trips/*.parquet"),
        new Message.Described(3, new DatasetDescription(Kind.VIEW, SCHEMA, List.of())),
        new Message.Described(5, new DatasetDescription(Kind.TABLE, SCHEMA, List.of(
            new RowRange(0, 122_880, 122_880, 2_949_120), new RowRange(122_880, 200_000, 70_000, 1_680_000)))),
        new Message.Described(6, new DatasetDescription(Kind.FILES, SCHEMA, List.of(
            new FilePart("/data/trips/a ü.parquet", 12_345, 5_000, List.of(2_048L, 2_048L, 904L)),
            new FilePart("/data/trips/b.csv", 99, 3, List.of())))),
        new Message.Described(7, new DatasetDescription(Kind.FILES, new Schema(List.of()), List.of())),
        new Message.Described(8, new DatasetDescription(Kind.SHARD, SCHEMA, List.of(
            new DatasetDescription.ShardPart("p0", "0".repeat(63) + "a", "lineitem/part0", 1_000, 10),
            new DatasetDescription.ShardPart("p-1.x", "f".repeat(64), "lineitem/part 1", 0, 0)))));
    for (Message message : messages) {
      assertThat(roundTrip(message)).isEqualTo(message);
    }
  }

  @Test
  void describeIsStreamIdNameAndDataset() {
    ByteBuf bytes = encode(new Message.Describe(9, "s.t", "db.duckdb"));
    ByteBuf expected = Unpooled.buffer().writeInt(1 + 4 + 4 + 3 + 4 + 9).writeByte(12).writeInt(9)
        .writeInt(3).writeBytes("s.t".getBytes(StandardCharsets.UTF_8))
        .writeInt(9).writeBytes("db.duckdb".getBytes(StandardCharsets.UTF_8));
    assertThat(ByteBufUtil.hexDump(bytes)).isEqualTo(ByteBufUtil.hexDump(expected));
    bytes.release();
    expected.release();
  }

  @Test
  void describedIsLaidOutAsDocumented() {
    ByteBuf bytes = encode(new Message.Described(2, new DatasetDescription(Kind.FILES, SCHEMA, List.of(
        new FilePart("f", 10, 3, List.of(1L, 2L)))))).skipBytes(4);
    assertThat((int) bytes.readUnsignedByte()).as("type").isEqualTo(13);
    assertThat(bytes.readInt()).as("stream id").isEqualTo(2);
    assertThat((int) bytes.readUnsignedByte()).as("kind files").isEqualTo(2);
    byte[] schema = new byte[bytes.readInt()];
    bytes.readBytes(schema);
    assertThat(Schema.deserializeMessage(java.nio.ByteBuffer.wrap(schema))).isEqualTo(SCHEMA);
    assertThat(bytes.readInt()).as("parts").isEqualTo(1);
    assertThat((int) bytes.readUnsignedByte()).as("file tag").isZero();
    assertThat(bytes.readInt()).isEqualTo(1);
    assertThat((char) bytes.readByte()).isEqualTo('f');
    assertThat(bytes.readLong()).as("bytes").isEqualTo(10);
    assertThat(bytes.readLong()).as("rows").isEqualTo(3);
    assertThat(bytes.readInt()).as("row groups").isEqualTo(2);
    assertThat(bytes.readLong()).isEqualTo(1);
    assertThat(bytes.readLong()).isEqualTo(2);
    assertThat(bytes.isReadable()).isFalse();
    bytes.release();
  }

  /** A DESCRIBED body up to its parts: stream 1, {@code kind}, an empty schema, then {@code parts} parts. */
  private static ByteBuf described(int kind, int parts) {
    byte[] schema = new Schema(List.of()).serializeAsMessage();
    return Unpooled.buffer().writeByte(MessageType.DESCRIBED.wireValue()).writeInt(1).writeByte(kind)
        .writeInt(schema.length).writeBytes(schema).writeInt(parts);
  }

  @Test
  void badDescriptionsAreRefused() {
    assertRefused(described(7, 0), "unknown dataset kind 7");
    assertRefused(described(Kind.TABLE.wireValue(), 1).writeByte(9).writeZero(40), "unknown dataset part tag 9");
    // A file in a table's answer.
    assertRefused(described(Kind.TABLE.wireValue(), 1).writeByte(0).writeInt(0).writeLong(1).writeLong(1)
        .writeInt(0), "a TABLE has no part of type FilePart");
    // A view has no parts at all.
    assertRefused(described(Kind.VIEW.wireValue(), 1).writeByte(1).writeLong(0).writeLong(1).writeLong(1)
        .writeLong(8), "a VIEW has no part");
    // Row groups that do not add up to the file's rows.
    assertRefused(described(Kind.FILES.wireValue(), 1).writeByte(0).writeInt(0).writeLong(1).writeLong(5)
        .writeInt(1).writeLong(4), "has 5 rows, its row groups 4");
    // A range with more rows than row ids, and ranges out of order.
    assertRefused(described(Kind.TABLE.wireValue(), 1).writeByte(1).writeLong(0).writeLong(2).writeLong(3)
        .writeLong(0), "not a row range");
    assertRefused(described(Kind.TABLE.wireValue(), 2).writeByte(1).writeLong(10).writeLong(20).writeLong(1)
        .writeLong(0).writeByte(1).writeLong(5).writeLong(6).writeLong(1).writeLong(0), "out of order");
    // Counts larger than the frame, a schema that is not one, bytes left over.
    assertRefused(described(Kind.TABLE.wireValue(), 1_000_000), "count 1000000 needs");
    assertRefused(Unpooled.buffer().writeByte(MessageType.DESCRIBED.wireValue()).writeInt(1).writeByte(0).writeInt(4)
        .writeInt(0xdeadbeef).writeInt(0), "not an Arrow IPC Schema message");
    assertRefused(described(Kind.VIEW.wireValue(), 0).writeByte(0), "1 bytes left over");
    assertRefused(shardPart(described(Kind.SHARD.wireValue(), 1), "p 0", "a".repeat(64)), "not a part id");
    assertRefused(shardPart(described(Kind.SHARD.wireValue(), 1), "p0", "A".repeat(64)), "not 64 lowercase hex");
    assertRefused(shardPart(shardPart(described(Kind.SHARD.wireValue(), 2), "p0", "a".repeat(64)), "p0",
        "b".repeat(64)), "ids repeat");
    // DESCRIBE whose name is not UTF-8, or ends early.
    assertRefused(Unpooled.buffer().writeByte(MessageType.DESCRIBE.wireValue()).writeInt(1).writeInt(1)
        .writeByte(0xff).writeInt(0), "not valid UTF-8");
    assertRefused(Unpooled.buffer().writeByte(MessageType.DESCRIBE.wireValue()).writeInt(1).writeInt(3)
        .writeByte('t'), "only 1 left");
  }

  @Test
  void listShardsAndItsAnswerRoundTripAsDocumented() {
    for (Message message : List.of(new Message.ListShards(5), new Message.Shards(5, List.of()),
        new Message.Shards(6, List.of("lineitem", "_Orders2")))) {
      assertThat(roundTrip(message)).isEqualTo(message);
    }
    ByteBuf bytes = encode(new Message.Shards(7, List.of("ab")));
    ByteBuf expected = Unpooled.buffer().writeInt(1 + 4 + 4 + 4 + 2).writeByte(15).writeInt(7).writeInt(1)
        .writeInt(2).writeBytes("ab".getBytes(StandardCharsets.UTF_8));
    assertThat(ByteBufUtil.hexDump(bytes)).isEqualTo(ByteBufUtil.hexDump(expected));
    bytes.release();
    expected.release();
    ByteBuf list = encode(new Message.ListShards(9));
    assertThat(ByteBufUtil.hexDump(list)).isEqualTo("000000050e00000009");
    list.release();
  }

  @Test
  void badShardListsAreRefused() {
    assertRefused(shards("line item"), "'line item' is not a sharded dataset name");
    assertRefused(shards("1x"), "'1x' is not a sharded dataset name");
    assertRefused(shards("x".repeat(129)), "is not a sharded dataset name");
    assertRefused(shards("Lineitem", "lineitem"), "sharded dataset lineitem is named twice");
    assertRefused(Unpooled.buffer().writeByte(MessageType.SHARDS.wireValue()).writeInt(1).writeInt(1_000),
        "count 1000 needs");
  }

  private static ByteBuf shards(String... names) {
    ByteBuf body = Unpooled.buffer().writeByte(MessageType.SHARDS.wireValue()).writeInt(1).writeInt(names.length);
    for (String name : names) {
      byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
      body.writeInt(bytes.length).writeBytes(bytes);
    }
    return body;
  }

  @Test
  void moreThanTheMostPartsAreRefused() {
    ByteBuf body = described(Kind.TABLE.wireValue(), DatasetDescription.MAX_PARTS + 1)
        .writeZero((DatasetDescription.MAX_PARTS + 1) * 25);
    EmbeddedChannel reader = new EmbeddedChannel(new FrameDecoder(8 << 20), new MessageCodec.Decoder());
    ByteBuf frame = Unpooled.buffer().writeInt(body.readableBytes()).writeBytes(body);
    body.release();
    assertThatThrownBy(() -> reader.writeInbound(frame)).isInstanceOf(DecoderException.class)
        .hasMessageContaining("100001 parts are over the maximum of 100000");
  }

  private static ByteBuf shardPart(ByteBuf body, String id, String checksum) {
    body.writeByte(2);
    for (String text : List.of(id, checksum, "d")) {
      byte[] bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      body.writeInt(bytes.length).writeBytes(bytes);
    }
    return body.writeLong(1).writeLong(1);
  }

  private static void assertRefused(ByteBuf body, String message) {
    EmbeddedChannel reader = channel();
    ByteBuf frame = Unpooled.buffer().writeInt(body.readableBytes()).writeBytes(body);
    body.release();
    assertThatThrownBy(() -> reader.writeInbound(frame)).isInstanceOf(DecoderException.class)
        .hasMessageContaining(message);
  }
}
