package io.thallus.internal.protocol;

import io.thallus.ListParameter;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.thallus.StatusCode;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.junit.jupiter.api.Test;

/** The codec on Netty's EmbeddedChannel: every message round-trips, and bad bytes are refused by name. */
class MessageCodecTest {
  private static final int MAX_FRAME = 1 << 20;

  private static EmbeddedChannel channel() {
    return new EmbeddedChannel(new FrameDecoder(MAX_FRAME), new MessageCodec.Decoder(),
        MessageCodec.Encoder.INSTANCE);
  }

  /** Encodes on one channel and decodes the bytes on another, in chunks, as a socket would deliver them. */
  private static Message roundTrip(Message message) {
    EmbeddedChannel writer = channel();
    assertThat(writer.writeOutbound(message)).isTrue();
    ByteBuf bytes = Unpooled.buffer();
    ByteBuf part;
    while ((part = writer.readOutbound()) != null) {
      bytes.writeBytes(part);
      part.release();
    }
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
  void everyMessageRoundTrips() {
    List<Message> messages = List.of(
        new Message.Hello(Protocol.VERSION, "client ✓", List.of("tcp", "ipc"), Map.of("tcp.x", "1"),
            Map.of("token", "secret")),
        new Message.Welcome(Protocol.VERSION, "tcp", Map.of("tcp.port", "1234"), "server"),
        new Message.Open(7, "SELECT 'ü' AS x", "data/a.parquet", 65536, 4, 1500, Map.of("k", "v")),
        new Message.Open(8, "INSERT INTO t VALUES (?)", "", 1024, 1, 0, Message.Open.PARAMETER_ROWS, List.of(),
            Map.of(), new byte[] {1, 2, 3, 4, 5}),
        new Message.Open(9, "SELECT ?", "", 1024, 1, 0, Message.Open.IN_TRANSACTION | Message.Open.DESCRIBE_STATEMENT,
            List.of(), Map.of()),
        new Message.Open(12, "SELECT * FROM t", "", 1024, 4, 0, Message.Open.SPLIT, List.of(), Map.of(),
            new byte[0], 8),
        new Message.Ingest(10, "t", 1, 4, 0, new byte[] {9, 8}, Message.Ingest.IN_TRANSACTION,
            "INSERT INTO t VALUES (?)", Map.of("shm.x", "1")),
        new Message.Ingest(11, "\"s\".t", 0, 1, 5, new byte[] {7}, Map.of()),
        new Message.End(7, 100, 2, 800, 12345, 678),
        new Message.Error(7, StatusCode.NOT_FOUND, "dataset missing.parquet does not exist"),
        new Message.Cancel(7),
        new Message.Close(9));
    for (Message message : messages) {
      assertThat(roundTrip(message)).isEqualTo(message);
    }
  }

  @Test
  void everyParameterTypeRoundTrips() {
    List<Object> values = QueryParameters.normalizeAll(java.util.Arrays.asList(null, true, (byte) -7, (short) 300,
        -5, Long.MIN_VALUE, 1.5f, -2.25e300, new java.math.BigDecimal("-12345678901234567890.123"),
        new java.math.BigInteger("170141183460469231731687303715884105727"), "ü ✓", new byte[] {0, -1, 2},
        java.time.LocalDate.of(1969, 12, 31), java.time.LocalTime.of(23, 59, 59, 999_999_000),
        java.time.LocalDateTime.of(2024, 2, 29, 12, 0, 0, 123_456_000),
        java.time.OffsetDateTime.of(2024, 2, 29, 12, 0, 0, 5, java.time.ZoneOffset.ofHours(-5)),
        java.util.UUID.fromString("123e4567-e89b-12d3-a456-426614174000")));
    Message.Open open = new Message.Open(1, "SELECT ?", "", 10, 1, 0, Message.Open.SCHEMA_ONLY, values, Map.of());
    Message.Open decoded = (Message.Open) roundTrip(open);
    assertThat(decoded.schemaOnly()).isTrue();
    assertThat(decoded.parameters()).usingRecursiveFieldByFieldElementComparator().isEqualTo(values);
    assertThat(QueryParameters.forEngine(decoded.parameters()).get(0)).isNull();
  }

  @Test
  void listParametersRoundTripWithTheirElementTypeAndNulls() {
    ListParameter inner = new ListParameter("INTEGER", java.util.Arrays.asList(1, null, 3));
    ListParameter outer = new ListParameter("INTEGER[]", java.util.Arrays.asList(inner, null,
        new ListParameter("INTEGER", List.of())));
    List<Object> values = QueryParameters.normalizeAll(List.of(outer,
        new ListParameter("DATE", List.of(java.sql.Date.valueOf("2024-01-02")))));
    Message.Open decoded = (Message.Open) roundTrip(new Message.Open(1, "SELECT ?, ?", "", 10, 1, 0, 0, values,
        Map.of()));
    assertThat(decoded.parameters()).isEqualTo(values);
    ListParameter dates = (ListParameter) decoded.parameters().get(1);
    assertThat(dates.elements()).containsExactly(java.time.LocalDate.of(2024, 1, 2));
    assertThat((Object[]) outer.getArray()).containsExactly(inner, null, new ListParameter("INTEGER", List.of()));
    assertThat(outer.getBaseTypeName()).isEqualTo("INTEGER[]");
  }

  @Test
  void aJdbcArrayIsAListParameter() throws Exception {
    java.sql.Array array = new ListParameter("VARCHAR", List.of("a", "b"));
    List<Object> values = QueryParameters.normalizeAll(List.of(array));
    assertThat(values).containsExactly(new ListParameter("VARCHAR", List.of("a", "b")));
  }

  @Test
  void listParametersAreBounded() {
    assertThatThrownBy(() -> new ListParameter("INTEGER; DROP TABLE t", List.of()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be a SQL type name");
    assertThatThrownBy(() -> new ListParameter("X".repeat(ListParameter.MAX_TYPE_CHARS + 1), List.of()))
        .isInstanceOf(IllegalArgumentException.class);
    ListParameter deep = new ListParameter("INTEGER", List.of(1));
    for (int i = 1; i < ListParameter.MAX_DEPTH; i++) {
      deep = new ListParameter("INTEGER" + "[]".repeat(i), List.of(deep));
    }
    ListParameter deepest = deep;
    assertThatThrownBy(() -> new ListParameter("X", List.of(deepest)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most " + ListParameter.MAX_DEPTH);

    // On the wire: a list deeper than the bound, and a count larger than the bytes left, are corrupt frames.
    ByteBuf tooDeep = Unpooled.buffer().writeByte(MessageType.OPEN.wireValue()).writeInt(1);
    tooDeep.writeInt(1).writeByte('x').writeInt(0).writeInt(10).writeInt(1).writeLong(0).writeByte(0);
    tooDeep.writeShort(1);
    for (int i = 0; i <= ListParameter.MAX_DEPTH; i++) {
      tooDeep.writeByte(17).writeInt(1).writeByte('X').writeInt(1);
    }
    tooDeep.writeByte(0).writeShort(0);
    assertThatThrownBy(() -> MessageCodec.Decoder.decode(tooDeep)).isInstanceOf(CorruptedFrameException.class)
        .hasMessageContaining("nest more than " + ListParameter.MAX_DEPTH);
    tooDeep.release();
    ByteBuf tooMany = Unpooled.buffer().writeByte(MessageType.OPEN.wireValue()).writeInt(1);
    tooMany.writeInt(1).writeByte('x').writeInt(0).writeInt(10).writeInt(1).writeLong(0).writeByte(0);
    tooMany.writeShort(1).writeByte(17).writeInt(1).writeByte('X').writeInt(Integer.MAX_VALUE).writeShort(0);
    assertThatThrownBy(() -> MessageCodec.Decoder.decode(tooMany)).isInstanceOf(CorruptedFrameException.class)
        .hasMessageContaining("elements in");
    tooMany.release();
  }

  @Test
  void flagsOfNoMeaningYetAreACorruptFrame() {
    ByteBuf body = Unpooled.buffer().writeByte(MessageType.OPEN.wireValue()).writeInt(1);
    body.writeInt(1).writeByte('x').writeInt(0).writeInt(10).writeInt(1).writeLong(0).writeByte(32);
    body.writeShort(0).writeShort(0);
    assertThatThrownBy(() -> MessageCodec.Decoder.decode(body))
        .isInstanceOf(io.netty.handler.codec.CorruptedFrameException.class)
        .hasMessageContaining("OPEN flags 32");
    body.release();
  }

  @Test
  void aSplitOfOneOrPastTheLimitIsACorruptFrame() {
    for (int parts : new int[] {0, 1, Message.Open.MAX_PARTS + 1}) {
      ByteBuf body = Unpooled.buffer().writeByte(MessageType.OPEN.wireValue()).writeInt(1);
      body.writeInt(1).writeByte('x').writeInt(0).writeInt(10).writeInt(1).writeLong(0)
          .writeByte(Message.Open.SPLIT);
      body.writeShort(0).writeShort(0).writeShort(parts);
      assertThatThrownBy(() -> MessageCodec.Decoder.decode(body)).isInstanceOf(CorruptedFrameException.class)
          .hasMessageContaining("asks for " + parts + " streams");
      body.release();
    }
    assertThatThrownBy(() -> new Message.Open(Integer.MAX_VALUE - 2, "x", "", 10, 1, 0, Message.Open.SPLIT,
        List.of(), Map.of(), new byte[0], 4)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void anUnknownParameterTagIsACorruptFrame() {
    ByteBuf body = Unpooled.buffer().writeByte(MessageType.OPEN.wireValue()).writeInt(1);
    body.writeInt(1).writeByte('x').writeInt(0).writeInt(10).writeInt(1).writeLong(0).writeByte(0);
    body.writeShort(1).writeByte(99).writeShort(0);
    assertThatThrownBy(() -> MessageCodec.Decoder.decode(body))
        .isInstanceOf(io.netty.handler.codec.CorruptedFrameException.class)
        .hasMessageContaining("unknown parameter tag 99");
    body.release();
  }

  @Test
  void aParameterOfAnUnsupportedTypeIsRefusedWhereItIsGiven() {
    assertThatThrownBy(() -> io.thallus.QueryRequest.builder("SELECT ?").parameters(new Object()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot be a java.lang.Object");
  }

  @Test
  void arraysAndBatchesRoundTrip() {
    Message.Opened opened = (Message.Opened) roundTrip(new Message.Opened(3, new byte[] {1, 2, 3, 4}));
    assertThat(opened.streamId()).isEqualTo(3);
    assertThat(opened.schema()).containsExactly(1, 2, 3, 4);

    Message.Next next = (Message.Next) roundTrip(new Message.Next(3, 2, new long[] {5, 6, Long.MAX_VALUE}));
    assertThat(next.releases()).containsExactly(5, 6, Long.MAX_VALUE);

    BatchHeader header = new BatchHeader(3, 42, List.of(
        new BatchPart(0, false, 3, List.of(new ArrowFieldNode(3, 0)),
            List.of(new BufferDescriptor(0, 0, 0), new BufferDescriptor(8, 3, 0))),
        new BatchPart(BatchPart.RECORDS, false, 10, List.of(new ArrowFieldNode(10, 2)),
            List.of(new BufferDescriptor(16, 2, 9), new BufferDescriptor(24, 80, 9)), List.of(1L, 0L))));
    ByteBuf inline = Unpooled.copiedBuffer("inline body", StandardCharsets.UTF_8);
    Message.Batch batch = (Message.Batch) roundTrip(new Message.Batch(header, inline));
    try {
      assertThat(batch.header()).usingRecursiveComparison().isEqualTo(header);
      assertThat(batch.inline().toString(StandardCharsets.UTF_8)).isEqualTo("inline body");
    } finally {
      batch.release();
    }
  }

  @Test
  void aCompressedPartKeepsItsCodecAndAnUnknownCodecIsRefusedByNumber() {
    for (io.thallus.BatchCompression codec : List.of(io.thallus.BatchCompression.LZ4_FRAME,
        io.thallus.BatchCompression.ZSTD)) {
      BatchHeader header = new BatchHeader(1, 2, List.of(new BatchPart(BatchPart.RECORDS, false, 5,
          List.of(new ArrowFieldNode(5, 0)), List.of(new BufferDescriptor(0, 30, 0)), List.of(), codec)));
      Message.Batch batch = (Message.Batch) roundTrip(new Message.Batch(header, Unpooled.EMPTY_BUFFER));
      try {
        assertThat(batch.header()).usingRecursiveComparison().isEqualTo(header);
        assertThat(batch.header().parts().getFirst().compression()).isEqualTo(codec);
      } finally {
        batch.release();
      }
    }
    // A BATCH of one part with flag 4 (compressed) and codec 9.
    assertRefused(frame(MessageType.BATCH.wireValue(), 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 4, 9), "compressed with codec 9, which this version does not "
        + "know");
  }

  @Test
  void aFrameOverTheMaximumIsRefusedBeforeItIsBuffered() {
    EmbeddedChannel reader = channel();
    ByteBuf header = Unpooled.buffer().writeInt(MAX_FRAME + 1).writeByte(MessageType.OPEN.wireValue());
    assertThatThrownBy(() -> reader.writeInbound(header))
        .isInstanceOf(TooLongFrameException.class)
        .hasMessageContaining("over the maximum of " + MAX_FRAME);
  }

  @Test
  void aZeroLengthFrameIsCorrupt() {
    EmbeddedChannel reader = channel();
    assertThatThrownBy(() -> reader.writeInbound(Unpooled.buffer().writeInt(0)))
        .isInstanceOf(CorruptedFrameException.class).hasMessageContaining("frame length 0");
  }

  @Test
  void unknownTypesTruncatedFieldsAndLeftoversAreRefused() {
    assertRefused(frame(99), "unknown message type 99");
    assertRefused(frame(MessageType.CANCEL.wireValue(), 0, 0), "frame ends early");
    assertRefused(frame(MessageType.CLOSE.wireValue(), 0, 0, 0, 1, 7), "1 bytes left over");
    // OPEN whose SQL length claims far more bytes than the frame holds.
    assertRefused(frame(MessageType.OPEN.wireValue(), 0, 0, 0, 1, 0x7f, 0, 0, 0), "only 0 left");
    // HELLO without the magic.
    assertRefused(frame(MessageType.HELLO.wireValue(), 'H', 'T', 'T', 'P'), "not a Thallus client");
  }

  @Test
  void aBatchWithMoreNodesThanBytesIsRefused() {
    ByteBuf body = Unpooled.buffer()
        .writeByte(MessageType.BATCH.wireValue()).writeInt(1).writeLong(0).writeShort(1)
        .writeLong(-1).writeByte(0).writeLong(10).writeInt(1_000_000);
    assertRefused(body, "count 1000000 needs 16000000 bytes");
  }

  private static ByteBuf frame(int... bytes) {
    ByteBuf body = Unpooled.buffer();
    for (int b : bytes) {
      body.writeByte(b);
    }
    return body;
  }

  private static void assertRefused(ByteBuf body, String message) {
    EmbeddedChannel reader = channel();
    ByteBuf frame = Unpooled.buffer().writeInt(body.readableBytes()).writeBytes(body);
    body.release();
    assertThatThrownBy(() -> reader.writeInbound(frame))
        .isInstanceOf(DecoderException.class)
        .hasMessageContaining(message);
  }
}
