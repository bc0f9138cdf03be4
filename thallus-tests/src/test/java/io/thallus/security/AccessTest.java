package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.server.Authentication;
import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.e2e.RawControlConnection;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.Protocol;
import io.thallus.testing.Memory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Authentication at HELLO, the limits a server puts on a client, and DuckDB kept inside the data root. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class AccessTest {
  @TempDir
  Path temp;

  private static ThallusStream query(ThallusClient client, String sql) {
    return client.query(QueryRequest.of(sql));
  }

  private static long single(ThallusClient client, String sql) {
    try (ThallusStream stream = query(client, sql); VectorSchemaRoot root = stream.next()) {
      return ((Number) root.getVector(0).getObject(0)).longValue();
    }
  }

  @Test
  void onlyClientsWithTheTokenOrAPasswordMayConnect() throws Exception {
    Authentication authentication = Authentication.token("s3cret-token")
        .or(Authentication.users(Map.of("alice", "wonderland")));
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .authentication(authentication).build().start()) {
      Location location = server.getLocation();
      for (ClientOptions refused : List.of(ClientOptions.defaults(),
          ClientOptions.builder().token("s3cret-tokeN").build(),
          ClientOptions.builder().token("s3cret-token-and-more").build(),
          ClientOptions.builder().user("alice", "Wonderland").build(),
          ClientOptions.builder().user("mallory", "wonderland").build())) {
        assertThatThrownBy(() -> ThallusClient.connect(allocator, location, refused).close())
            .isInstanceOfSatisfying(ThallusException.class,
                e -> assertThat(e.code()).isEqualTo(StatusCode.UNAUTHENTICATED))
            .hasMessageContaining("authentication failed");
      }
      for (ClientOptions accepted : List.of(ClientOptions.builder().token("s3cret-token").build(),
          ClientOptions.builder().user("alice", "wonderland").build())) {
        try (ThallusClient client = ThallusClient.connect(allocator, location, accepted)) {
          assertThat(single(client, "SELECT 7")).isEqualTo(7);
        }
      }
      String url = "jdbc:thallus://127.0.0.1:" + location.port();
      java.util.Properties alice = new java.util.Properties();
      alice.setProperty("user", "alice");
      alice.setProperty("password", "wonderland");
      try (java.sql.Connection connection = java.sql.DriverManager.getConnection(url, alice)) {
        assertThat(connection.isValid(5)).isTrue();
      }
      alice.setProperty("password", "guess");
      assertThatThrownBy(() -> java.sql.DriverManager.getConnection(url, alice))
          .isInstanceOfSatisfying(java.sql.SQLException.class,
              e -> assertThat(e.getSQLState()).isEqualTo("28000"));
      Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory");
    }
  }

  @Test
  void anUnauthenticatedConnectionCannotOpenAStream() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .authentication(Authentication.token("t")).build().start();
         RawControlConnection raw = new RawControlConnection(server.getLocation())) {
      // OPEN before HELLO, and OPEN after a refused HELLO: the connection is closed before any stream exists.
      raw.send(new Message.Open(1, "SELECT 1", "", 10, 1, 0, Map.of()));
      Message reply = raw.receive();
      assertThat(reply).isInstanceOfSatisfying(Message.Error.class,
          e -> assertThat(e.code()).isEqualTo(StatusCode.FAILED_PRECONDITION));
      assertThat(raw.closedByServer()).isTrue();
    }
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .authentication(Authentication.token("t")).build().start();
         RawControlConnection raw = new RawControlConnection(server.getLocation())) {
      raw.send(new Message.Hello(Protocol.VERSION, "raw", List.of("ipc"), Map.of(), Map.of("token", "wrong")));
      raw.send(new Message.Open(1, "SELECT 1", "", 10, 1, 0, Map.of()));
      assertThat(raw.receive()).isInstanceOfSatisfying(Message.Error.class,
          e -> assertThat(e.code()).isEqualTo(StatusCode.UNAUTHENTICATED));
      assertThat(raw.closedByServer()).isTrue();
    }
  }

  @Test
  void limitsOnConnectionsStreamsAndSqlText() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .maxConnections(2).maxStreamsPerConnection(3).maxSqlBytes(100).build().start()) {
      Location location = server.getLocation().withTransport("tcp");
      try (ThallusClient first = ThallusClient.connect(allocator, location);
           ThallusClient second = ThallusClient.connect(allocator, location)) {
        assertThatThrownBy(() -> ThallusClient.connect(allocator, location).close())
            .isInstanceOfSatisfying(ThallusException.class,
                e -> assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED))
            .hasMessageContaining("maximum of 2 clients");

        List<ThallusStream> open = new ArrayList<>();
        try {
          for (int i = 0; i < 3; i++) {
            open.add(query(first, "SELECT * FROM range(100000000)"));
          }
          assertThatThrownBy(() -> query(first, "SELECT 1"))
              .isInstanceOfSatisfying(ThallusException.class,
                  e -> assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED))
              .hasMessageContaining("3 streams open");
          assertThat(single(second, "SELECT 2")).as("another client is not affected").isEqualTo(2);
        } finally {
          open.forEach(ThallusStream::close);
        }
        assertThat(single(first, "SELECT 3")).as("a closed stream frees its slot").isEqualTo(3);
        String longSql = "SELECT 1 AS " + "x".repeat(100);
        assertThatThrownBy(() -> query(second, longSql))
            .isInstanceOfSatisfying(ThallusException.class,
                e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
            .hasMessageContaining("over the server's limit of 100 bytes");
      }
      try (ThallusClient again = ThallusClient.connect(allocator, location)) {
        assertThat(single(again, "SELECT 4")).as("a departed client frees its place").isEqualTo(4);
      }
      Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "ipc", "shm", "cma"})
  void aQueryBeyondTheServersMemoryBudgetGetsResourceExhaustedNotAnOutOfMemoryError(String transport)
      throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .memoryLimit(2 << 20).build().start()) {
      try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport(transport))) {
        assertThatThrownBy(() -> {
          try (ThallusStream stream = client.query(QueryRequest.builder(
              "SELECT i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7 FROM range(1000000) t(i)")
              .batchRows(65536).build())) {
            while (stream.hasNext()) {
              stream.next().close();
            }
          }
        }).isInstanceOfSatisfying(ThallusException.class,
            e -> assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED))
            .hasMessageContaining("memory budget");
        assertThat(single(client, "SELECT 11")).as("the server goes on").isEqualTo(11);
      }
      // Pooled transport memory (shm segments) goes with the client; nothing else may stay.
      Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "ipc", "shm", "cma"})
  void aClientBeyondItsOwnBudgetIsRefusedWhileOthersAreServed(String transport) throws Exception {
    // The server has memory to spare (no memoryLimit); the client's own budget is what is too small.
    String sql = "SELECT i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7 FROM range(300000) t(i)";
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .memoryPerClient(4 << 20).build().start();
         ThallusClient greedy = ThallusClient.connect(allocator, server.getLocation().withTransport(transport));
         ThallusClient modest = ThallusClient.connect(allocator, server.getLocation().withTransport(transport))) {
      assertThatThrownBy(() -> {
        try (ThallusStream stream = greedy.query(QueryRequest.builder(sql).batchRows(262144).build())) {
          while (stream.hasNext()) {
            stream.next().close();
          }
        }
      }).isInstanceOfSatisfying(ThallusException.class,
          e -> assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED))
          .hasMessageContaining("this client's memory budget (memoryPerClient) is too small")
          .hasMessageContaining("262144 rows");
      long sum = 0;
      try (ThallusStream stream = modest.query(QueryRequest.builder(sql).batchRows(8192).build())) {
        while (stream.hasNext()) {
          try (VectorSchemaRoot batch = stream.next()) {
            for (int column = 0; column < 8; column++) {
              BigIntVector values = (BigIntVector) batch.getVector(column);
              for (int row = 0; row < batch.getRowCount(); row++) {
                sum += values.get(row);
              }
            }
          }
        }
      }
      // sum over i of (8i + 28), i < 300000
      assertThat(sum).as("the other client's result").isEqualTo(8L * 299999 * 300000 / 2 + 28L * 300000);
      assertThat(single(greedy, "SELECT 12")).as("the refused client goes on too").isEqualTo(12);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT count(*) FROM read_csv('{outside}/secret.csv')",
      "SELECT count(*) FROM read_csv('{root}/../secret.csv')",
      "SELECT count(*) FROM read_text('/etc/passwd')",
      "SELECT count(*) FROM glob('{outside}/*')",
      "COPY (SELECT 1 AS x) TO '{outside}/written.csv'",
      // DuckDB's default spill directory for an in-memory database, which SQL may write: not the server's here.
      "COPY (SELECT 1 AS x) TO '{cwd}/.tmp/written.csv'",
      "SET temp_directory = '{outside}'",
      "ATTACH '{outside}/other.duckdb' AS other",
      "SET enable_external_access = true",
      "SET lock_configuration = false",
      "INSTALL httpfs",
      "SELECT count(*) FROM read_csv('{root}/link/secret.csv')"})
  void sqlCannotReachFilesOutsideTheDataRootNorUnlockDuckDB(String template) throws Exception {
    Path root = Files.createDirectories(temp.resolve("data"));
    Files.writeString(root.resolve("inside.csv"), "id\n1\n2\n");
    Files.writeString(temp.resolve("secret.csv"), "id\n42\n");
    Files.createSymbolicLink(root.resolve("link"), temp);
    Path cwd = Path.of("").toAbsolutePath();
    String sql = template.replace("{outside}", temp.toString()).replace("{root}", root.toString())
        .replace("{cwd}", cwd.toString());
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
                 DuckDBEngine.builder().filesUnder(root).build()).dataRoot(root)
             .build().start();
         ThallusClient client = ThallusClient.connect(allocator, server.getLocation())) {
      assertThatThrownBy(() -> single(client, sql))
          .isInstanceOf(ThallusException.class)
          .satisfies(e -> assertThat(e.getMessage()).containsAnyOf("Permission Error", "locked",
              "disabled by configuration"));
      assertThat(temp.resolve("written.csv")).doesNotExist();
      assertThat(cwd.resolve(".tmp/written.csv")).doesNotExist();
      // Files inside the root stay readable, by path and as the dataset.
      assertThat(single(client, "SELECT count(*) FROM read_csv('" + root.resolve("inside.csv") + "')"))
          .isEqualTo(2);
      try (ThallusStream stream = client.query("SELECT count(*) FROM dataset", "inside.csv");
           VectorSchemaRoot batch = stream.next()) {
        assertThat(batch.getVector(0).getObject(0)).isEqualTo(2L);
      }
    }
  }
}
