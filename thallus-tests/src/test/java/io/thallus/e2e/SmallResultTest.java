package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.internal.batch.IpcFrames;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.Protocol;
import io.thallus.spi.BatchContents;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A small result costs one response: the server writes OPENED, the batch and END together, so they arrive in one
 * socket read (and wake the client once), and the values in it are DuckDB's.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SmallResultTest {
  private static final String SQL = "SELECT 42::BIGINT AS answer, 'forty-two' AS words, DATE '2026-11-24' AS day";

  @Test
  void openedBatchAndEndArriveInOneRead() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start();
         RawControlConnection raw = new RawControlConnection(server.getLocation());
         BufferAllocator clientMemory = new RootAllocator()) {
      raw.send(new Message.Hello(Protocol.VERSION, "small result test", List.of("ipc"), Map.of(), Map.of()));
      assertThat(raw.receive()).isInstanceOf(Message.Welcome.class);
      for (int query = 1; query <= 3; query++) {
        raw.send(new Message.Open(query, SQL, "", 1024, 4, 0, 0, List.of(), Map.of(), new byte[0]));
        List<Message> reply = raw.receiveOneRead();
        assertThat(reply).extracting(Message::type).extracting(Enum::name)
            .containsExactly("OPENED", "BATCH", "END");
        Schema schema = Schema.deserializeMessage(ByteBuffer.wrap(((Message.Opened) reply.get(0)).schema()));
        Message.Batch batch = (Message.Batch) reply.get(1);
        try (BatchContents contents = IpcFrames.read(batch.header(), batch.inline(), clientMemory);
             VectorSchemaRoot root = VectorSchemaRoot.create(schema, clientMemory)) {
          new VectorLoader(root).load(contents.records());
          assertThat(root.getRowCount()).isEqualTo(1);
          try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
               Statement statement = duckdb.createStatement();
               ResultSet expected = statement.executeQuery(SQL)) {
            assertThat(expected.next()).isTrue();
            assertThat(root.getVector("answer").getObject(0)).isEqualTo(expected.getLong("answer"));
            assertThat(root.getVector("words").getObject(0).toString()).isEqualTo(expected.getString("words"));
            assertThat(root.getVector("day").getObject(0))
                .isEqualTo((int) expected.getDate("day").toLocalDate().toEpochDay());
          }
        }
        Message.End end = (Message.End) reply.get(2);
        assertThat(end.rows()).isEqualTo(1);
        assertThat(end.batches()).isEqualTo(1);
      }
    }
  }
}
