package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.BatchCompression;
import io.thallus.ClientOptions;
import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.Location;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusIngest;
import io.thallus.ThallusStream;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.internal.batch.BatchCompressor;
import io.thallus.server.ThallusServer;
import io.thallus.spi.BatchContents;
import io.thallus.testing.SampleBatches;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Batch bodies compressed with Arrow's body compression (LZ4_FRAME, ZSTD), on tcp and shm, both ways: a server
 * whose engine answers compressed batches of every kind the project claims ({@link SampleBatches}) sends them as they
 * are and the client reads the same values (on cma and ipc too); a client that asks for compressed results reads
 * what DuckDB answers; a compressed ingest lands as its rows. And hostile compressed parts sent to the server (a bad length prefix, a length
 * that lies, a bomb over the connection's memory budget, a truncated frame, an unknown codec) each fail the ingest
 * with a clear INVALID_ARGUMENT or RESOURCE_EXHAUSTED, the server goes on, and every allocator closes clean.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CompressedBatchTest {
  /** Twice the server's budget per client. */
  private static final int BOMB_BYTES = 64 << 20;
  private static final Schema IDS = new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true))));

  /** Answers "KIND CODEC ROWS" with that sample batch, compressed with that codec. */
  private static final class SampleEngine implements QueryEngine {
    @Override
    public QueryResult execute(QuerySpec spec, BufferAllocator allocator) {
      String[] words = spec.sql().split(" ");
      SampleBatches.Sample sample = SampleBatches.of(SampleBatches.Kind.valueOf(words[0]),
          Integer.parseInt(words[2]), allocator);
      BatchContents compressed;
      try (BatchCompressor compressor = new BatchCompressor(BatchCompression.valueOf(words[1]), allocator)) {
        compressed = compressor.compress(sample.contents(), allocator);
      }
      return new QueryResult() {
        BatchContents left = compressed;

        @Override
        public Schema schema() {
          return sample.schema();
        }

        @Override
        public BatchContents next() {
          BatchContents answer = left;
          left = null;
          return answer;
        }

        @Override
        public void cancel() {}

        @Override
        public void close() {
          if (left != null) {
            left.close();
          }
        }
      };
    }

    @Override
    public void close() {}
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm", "cma", "ipc"})
  void everySampleKindSentCompressedReadsBackTheSameValues(String transport) throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), new SampleEngine())
               .build().start();
           ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport(transport))) {
        assertThat(client.transport()).isEqualTo(transport);
        for (BatchCompression codec : List.of(BatchCompression.LZ4_FRAME, BatchCompression.ZSTD)) {
          for (SampleBatches.Kind kind : SampleBatches.Kind.values()) {
            // 40 rows travel inside the frame, 5,000 outside it (over 32 KiB for most kinds).
            for (int rows : new int[] {40, 5_000}) {
              String what = kind + " " + codec + " " + rows;
              try (ThallusStream stream = client.query(what);
                   SampleBatches.Sample expected = SampleBatches.of(kind, rows, allocator)) {
                assertThat(stream.loadNextBatch()).as(what).isTrue();
                assertSameValues(what, kind, stream, expected, allocator);
                assertThat(stream.loadNextBatch()).as(what).isFalse();
              }
            }
          }
        }
      }
    }
  }

  private static void assertSameValues(String what, SampleBatches.Kind kind, ThallusStream stream,
      SampleBatches.Sample expected, BufferAllocator allocator) throws Exception {
    VectorSchemaRoot received = stream.getVectorSchemaRoot();
    Schema memorySchema = expected.schema();
    if (kind == SampleBatches.Kind.DICTIONARY) {
      Field c = expected.schema().getFields().getFirst();
      memorySchema = new Schema(List.of(new Field("c", new FieldType(true, c.getDictionary().getIndexType(),
          c.getDictionary()), null)));
      Dictionary dictionary = stream.getDictionaryVectors().get(SampleBatches.DICTIONARY_ID);
      try (VectorSchemaRoot words = VectorSchemaRoot.create(new Schema(List.of(Field.nullable("c",
          ArrowType.Utf8.INSTANCE))), allocator)) {
        new VectorLoader(words).load(expected.contents().dictionaries().getFirst().getDictionary());
        assertThat(dictionary.getVector().getValueCount()).as(what).isEqualTo(words.getRowCount());
        for (int i = 0; i < words.getRowCount(); i++) {
          assertThat(dictionary.getVector().getObject(i)).as(what).isEqualTo(words.getVector(0).getObject(i));
        }
      }
    }
    try (VectorSchemaRoot want = VectorSchemaRoot.create(memorySchema, allocator)) {
      new VectorLoader(want).load(expected.contents().records());
      assertThat(received.getRowCount()).as(what).isEqualTo(want.getRowCount());
      assertThat(received.contentToTSVString()).as(what).isEqualTo(want.contentToTSVString());
      assertThat(received.equals(want)).as(what + ": values equal").isTrue();
    }
  }

  private static ThallusServer duckdb(BufferAllocator allocator) {
    // A small budget per client, so a bomb meets it long before the test's heap does.
    return ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .memoryPerClient(32L << 20).build().start();
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void aClientAskingForCompressedResultsReadsWhatDuckDBAnswers(String transport) {
    String sql = "SELECT i AS id, 'row ' || i AS s, i * 0.5 AS d FROM range(100000) t(i) ORDER BY i";
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = duckdb(allocator)) {
      String plain;
      try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport(transport))) {
        plain = text(client, sql);
      }
      for (BatchCompression codec : List.of(BatchCompression.LZ4_FRAME, BatchCompression.ZSTD)) {
        ClientOptions options = ClientOptions.builder().resultCompression(codec).build();
        try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport(transport),
            options)) {
          assertThat(text(client, sql)).as("%s over %s", codec, transport).isEqualTo(plain);
        }
      }
    }
  }

  private static String text(ThallusClient client, String sql) {
    StringBuilder out = new StringBuilder();
    try (ThallusStream stream = client.query(sql)) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot root = stream.next()) {
          out.append(root.contentToTSVString());
        }
      }
    }
    return out.toString();
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void aCompressedIngestLandsAsItsRows(String transport) {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = duckdb(allocator);
         ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport(transport))) {
      for (BatchCompression codec : List.of(BatchCompression.LZ4_FRAME, BatchCompression.ZSTD)) {
        String table = "t_" + codec.name().toLowerCase();
        Schema schema = new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true)),
            Field.nullable("s", ArrowType.Utf8.INSTANCE)));
        try (ThallusIngest ingest = client.ingest(IngestRequest.of(table, IngestMode.CREATE), schema);
             BatchCompressor compressor = new BatchCompressor(codec, allocator)) {
          // 2 rows inside the frame, 20,000 outside it.
          for (int rows : new int[] {2, 20_000}) {
            try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
              BigIntVector ids = (BigIntVector) root.getVector("id");
              VarCharVector strings = (VarCharVector) root.getVector("s");
              for (int i = 0; i < rows; i++) {
                ids.setSafe(i, i);
                strings.setSafe(i, ("value " + (i % 100)).getBytes(java.nio.charset.StandardCharsets.UTF_8));
              }
              root.setRowCount(rows);
              try (ArrowRecordBatch plain = new VectorUnloader(root).getRecordBatch();
                   ArrowRecordBatch compressed = compressor.compress(plain, allocator)) {
                if (rows > 2) {
                  assertThat(compressed.computeBodyLength()).isLessThan(plain.computeBodyLength() / 2);
                }
                ingest.write(compressed);
              }
            }
          }
          assertThat(ingest.finish().rows()).isEqualTo(20_002);
        }
        assertThat(text(client, "SELECT count(*), sum(id), count(DISTINCT s) FROM " + table))
            .contains("20002\t199990001\t100");
      }
    }
  }

  /** How a hostile compressed part lies, and the refusal it must meet. */
  private enum Lie {
    NEGATIVE_LENGTH_PREFIX(StatusCode.INVALID_ARGUMENT, "declares length -5"),
    PREFIX_LONGER_THAN_THE_BUFFER(StatusCode.INVALID_ARGUMENT, "shorter than its 8-byte length prefix"),
    LENGTH_OVER_WHAT_THE_FRAME_MAKES(StatusCode.INVALID_ARGUMENT, "its buffer"),
    LENGTH_BEYOND_THE_CODEC_RATIO(StatusCode.INVALID_ARGUMENT, "more than the codec can make of them"),
    TRUNCATED_FRAME(StatusCode.INVALID_ARGUMENT, "truncated"),
    NOT_AN_LZ4_FRAME(StatusCode.INVALID_ARGUMENT, "not an LZ4 frame"),
    ZSTD_BOMB_OVER_THE_BUDGET(StatusCode.RESOURCE_EXHAUSTED, "would decompress to"),
    DAMAGED_ZSTD_FRAME(StatusCode.INVALID_ARGUMENT, "malformed zstd frame");

    final StatusCode code;
    final String refusal;

    Lie(StatusCode code, String refusal) {
      this.code = code;
      this.refusal = refusal;
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void everyHostileCompressedPartIsRefusedClearlyAndTheServerGoesOn(String transport) {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (ThallusServer server = duckdb(allocator)) {
        try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport(transport))) {
          text(client, "CREATE TABLE t AS SELECT 1::BIGINT AS id");
          for (Lie lie : Lie.values()) {
            // 40 rows travel inside the frame, 20,000 outside it.
            for (int rows : new int[] {40, 20_000}) {
              assertThatThrownBy(() -> ingestLying(client, lie, rows, allocator))
                  .as("%s, %d rows, over %s", lie, rows, transport)
                  .isInstanceOfSatisfying(ThallusException.class,
                      e -> assertThat(e.status().code()).as("%s: %s", lie, e.getMessage()).isEqualTo(lie.code))
                  .hasMessageContaining(lie.refusal);
            }
          }
          assertThat(text(client, "SELECT count(*) FROM t")).as("the table keeps its rows").contains("1");
        }
        try (ThallusClient again = ThallusClient.connect(allocator, server.getLocation())) {
          assertThat(text(again, "SELECT 41 + 1")).contains("42");
        }
      }
      // The allocator closes without a leak report: the server freed every part it refused.
    }
  }

  private static void ingestLying(ThallusClient client, Lie lie, int rows, BufferAllocator allocator) {
    try (ThallusIngest ingest = client.ingest(IngestRequest.of("t", IngestMode.APPEND), IDS);
         ArrowRecordBatch batch = lying(lie, rows, allocator)) {
      ingest.write(batch);
      ingest.finish();
    }
  }

  /** A one-column BIGINT batch of {@code rows} rows whose values buffer lies as {@code lie} says. */
  private static ArrowRecordBatch lying(Lie lie, int rows, BufferAllocator allocator) {
    BatchCompression codec = lie == Lie.ZSTD_BOMB_OVER_THE_BUDGET || lie == Lie.DAMAGED_ZSTD_FRAME
        ? BatchCompression.ZSTD : BatchCompression.LZ4_FRAME;
    byte[] values = honest(codec, rows, allocator);
    ByteBuffer wire = ByteBuffer.wrap(values).order(ByteOrder.LITTLE_ENDIAN);
    switch (lie) {
      case NEGATIVE_LENGTH_PREFIX -> wire.putLong(0, -5);
      case PREFIX_LONGER_THAN_THE_BUFFER -> values = new byte[] {1, 2, 3};
      case LENGTH_OVER_WHAT_THE_FRAME_MAKES -> wire.putLong(0, rows * 8L + 8);
      case LENGTH_BEYOND_THE_CODEC_RATIO -> wire.putLong(0, 1L << 30);
      case TRUNCATED_FRAME -> values = java.util.Arrays.copyOf(values, values.length - 9);
      case NOT_AN_LZ4_FRAME -> wire.putInt(8, 0x12345678);
      case ZSTD_BOMB_OVER_THE_BUDGET -> values = zstdZeros(BOMB_BYTES);
      case DAMAGED_ZSTD_FRAME -> {
        for (int i = 12; i < values.length; i++) {
          values[i] ^= (byte) 0x5A;
        }
      }
    }
    List<ArrowBuf> buffers = new ArrayList<>();
    try {
      // An empty validity buffer (no nulls) stored as it is, then the lying values.
      buffers.add(buffer(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1}, allocator));
      buffers.add(buffer(values, allocator));
      long length = lie == Lie.ZSTD_BOMB_OVER_THE_BUDGET ? BOMB_BYTES / 8 : rows;
      return new ArrowRecordBatch((int) length, List.of(new ArrowFieldNode(length, 0)), buffers,
          new ArrowBodyCompression(codec.arrowCodec(), (byte) 0), null, true);
    } finally {
      buffers.forEach(ArrowBuf::close);
    }
  }

  /** The values buffer of {@code rows} longs, compressed as a sender would (Arrow's prefix, then the frame). */
  private static byte[] honest(BatchCompression codec, int rows, BufferAllocator allocator) {
    try (BigIntVector ids = new BigIntVector("id", allocator);
         BatchCompressor compressor = new BatchCompressor(codec, allocator)) {
      for (int i = 0; i < rows; i++) {
        ids.setSafe(i, i % 7);
      }
      ids.setValueCount(rows);
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(ids));
           ArrowRecordBatch plain = new VectorUnloader(root).getRecordBatch();
           ArrowRecordBatch compressed = compressor.compress(plain, allocator)) {
        ArrowBuf values = compressed.getBuffers().get(1);
        byte[] bytes = new byte[(int) values.readableBytes()];
        values.getBytes(0, bytes);
        return bytes;
      }
    }
  }

  /** {@code bytes} zero bytes as one compressed zstd buffer: a few kilobytes that claim {@code bytes}. */
  private static byte[] zstdZeros(int bytes) {
    byte[] frame = com.github.luben.zstd.Zstd.compress(new byte[bytes], 1);
    ByteBuffer out = ByteBuffer.allocate(8 + frame.length).order(ByteOrder.LITTLE_ENDIAN);
    out.putLong(bytes).put(frame);
    return out.array();
  }

  private static ArrowBuf buffer(byte[] bytes, BufferAllocator allocator) {
    ArrowBuf buffer = allocator.buffer(Math.max(bytes.length, 1));
    buffer.setBytes(0, bytes);
    buffer.writerIndex(bytes.length);
    return buffer;
  }

  @Test
  void aPartWithAnUnknownCodecIsRefusedByName() {
    try (BufferAllocator allocator = new RootAllocator();
         ArrowBuf values = buffer(new byte[16], allocator)) {
      ArrowRecordBatch batch = new ArrowRecordBatch(1, List.of(new ArrowFieldNode(1, 0)), List.of(values, values),
          new ArrowBodyCompression((byte) 7, (byte) 0), null, true);
      BatchContents contents = new BatchContents(List.of(), batch);
      assertThatThrownBy(() -> io.thallus.internal.batch.BatchDecompressor.decompress(contents, allocator,
          Long.MAX_VALUE, "the test's memory", "batch 1"))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.status().code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("compressed with codec 7, which Thallus does not know");
    }
  }
}
