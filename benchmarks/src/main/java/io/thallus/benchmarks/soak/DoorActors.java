package io.thallus.benchmarks.soak;

import io.thallus.ClientOptions;
import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusIngest;
import io.thallus.ThallusStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.auth2.BasicAuthCredentialWriter;
import org.apache.arrow.flight.auth2.BearerCredentialWriter;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The soak's actors at the doors that came after the first soak: the Flight SQL port (honest clients, silent
 * sockets, session hoarders, unread {@code DoGet}s, huge messages, corrupt {@code DoPut}s), corrupt batches on every
 * native transport, a metrics-port slowloris with a health probe beside it, and a writer committing to the server's
 * database. Honest actors count every failure against the soak; attackers count what the server did to them.
 *
 * <p>Attackers hold the server's token; honest actors log in as users of their own when the server has a users file
 * (so per-credential quotas can tell them apart), else with the same token.
 */
final class DoorActors {
  /** Honest queries check this sum: {@code SELECT i * 3 - 1 FROM range(ROWS)}. */
  private static final long ROWS = 2_000_000;
  private static final String HONEST_SQL = "SELECT i * 3 - 1 AS v FROM range(" + ROWS + ") t(i)";
  private static final long HONEST_SUM = ROWS * (ROWS - 1) / 2 * 3 - ROWS;
  private static final CallOption HONEST_DEADLINE = org.apache.arrow.flight.CallOptions.timeout(60,
      java.util.concurrent.TimeUnit.SECONDS);

  private final String host;
  private final int port;
  private final String token;
  private final ClientOptions honest;
  private final CallOption honestFlight;
  private final BooleanSupplier running;
  private final Tally tally;

  DoorActors(String host, int port, String token, ClientOptions honest, CallOption honestFlight,
      BooleanSupplier running, Tally tally) {
    this.host = host;
    this.port = port;
    this.token = token;
    this.honest = honest;
    this.honestFlight = honestFlight;
    this.running = running;
    this.tally = tally;
  }

  static CallOption bearer(String token) {
    return new CredentialCallOption(new BearerCredentialWriter(token));
  }

  static CallOption basic(String user, String password) {
    return new CredentialCallOption(new BasicAuthCredentialWriter(user, password));
  }

  private FlightClient flight(BufferAllocator memory, int flightPort) {
    return FlightClient.builder(memory, org.apache.arrow.flight.Location.forGrpcInsecure(host, flightPort)).build();
  }

  /** A Flight client whose connection comes from {@code local}, an attacker's own loopback address. */
  private FlightClient flightFrom(BufferAllocator memory, int flightPort, String local) {
    java.net.InetSocketAddress from = new java.net.InetSocketAddress(local, 0);
    io.grpc.ManagedChannel channel = io.grpc.netty.NettyChannelBuilder.forAddress(host, flightPort).usePlaintext()
        .maxInboundMessageSize(Integer.MAX_VALUE)
        .localSocketPicker(new io.grpc.netty.NettyChannelBuilder.LocalSocketPicker() {
          @Override
          public java.net.SocketAddress createSocketAddress(java.net.SocketAddress remote, io.grpc.Attributes attrs) {
            return from;
          }
        }).build();
    return org.apache.arrow.flight.FlightGrpcUtils.createFlightClient(memory, channel);
  }

  /** Runs the honest query over Flight SQL ({@code GetFlightInfo}, then {@code DoGet}) in a loop, checking each sum. */
  void honestFlight(int flightPort) {
    try (BufferAllocator memory = new RootAllocator()) {
      while (running.getAsBoolean()) {
        try (FlightClient client = flight(memory, flightPort); FlightSqlClient sql = new FlightSqlClient(client)) {
          while (running.getAsBoolean()) {
            long sum = 0;
            // A call that hangs must fail the soak, not vanish from its counts.
            FlightInfo info = sql.execute(HONEST_SQL, honestFlight, HONEST_DEADLINE);
            for (FlightEndpoint endpoint : info.getEndpoints()) {
              try (FlightStream stream = sql.getStream(endpoint.getTicket(), honestFlight, HONEST_DEADLINE)) {
                while (stream.next()) {
                  BigIntVector values = (BigIntVector) stream.getRoot().getVector(0);
                  for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
                    sum += values.get(i);
                  }
                }
              }
            }
            if (sum != HONEST_SUM) {
              throw new IllegalStateException("flight: sum " + sum + ", expected " + HONEST_SUM);
            }
            tally.honestOk("flight query");
          }
        } catch (Exception e) {
          tally.honestFailed("flight query", e);
          pause(200);
        }
      }
    }
  }

  /**
   * A token holder opening Flight sessions as fast as it can: each call a new Basic user name with the token as its
   * password (what opened 253 sessions in 1.5 s), held until the server drops them; again every 20 s.
   */
  void flightSessionHoarder(int flightPort) {
    try (BufferAllocator memory = new RootAllocator()) {
      int user = 0;
      while (running.getAsBoolean()) {
        try (FlightClient client = flightFrom(memory, flightPort, Attackers.FLIGHT_HOARDER);
             FlightSqlClient sql = new FlightSqlClient(client)) {
          for (int i = 0; i < 400 && running.getAsBoolean(); i++) {
            try {
              sql.getCatalogs(basic("hoarder" + user++, token)).getEndpoints();
              tally.count("attacker flight sessions opened");
            } catch (RuntimeException refused) {
              tally.count("attacker flight sessions refused");
            }
          }
          hold(Duration.ofSeconds(20));
        } catch (Exception e) {
          tally.count("attacker flight hoarder errors");
          pause(200);
        }
      }
    }
  }

  /**
   * A client opening native connections with {@code credentials} until refused, holding them 20 s; again. (With a
   * login of its own, so that filling its quota does not also stop the token's other attackers.)
   */
  void nativeSessionHoarder(Map<String, String> credentials) {
    while (running.getAsBoolean()) {
      List<Soak.RawConnection> held = new ArrayList<>();
      try {
        for (int i = 0; i < 300 && running.getAsBoolean(); i++) {
          Soak.RawConnection raw = new Soak.RawConnection(host, port, Attackers.NATIVE_HOARDER);
          held.add(raw);
          if (raw.hello("hoarder", credentials)) {
            tally.count("attacker native sessions opened");
          } else {
            tally.count("attacker native sessions refused");
            break;
          }
        }
        hold(Duration.ofSeconds(20));
      } catch (IOException | RuntimeException e) {
        tally.count("attacker native hoarder errors");
        pause(200);
      } finally {
        held.forEach(DoorActors::closeQuietly);
      }
    }
  }

  /**
   * Starts {@code count} large Flight {@code DoGet}s and reads none of them for 20 s; again. Each statement is
   * planned with a 10 s deadline (a call without one waits for its credential's turn up to the native client's
   * timeout, five minutes, longer than the soak waits for descriptors at its end).
   */
  void unreadDoGets(int flightPort, int count) {
    try (BufferAllocator memory = new RootAllocator()) {
      while (running.getAsBoolean()) {
        List<FlightStream> unread = new ArrayList<>();
        try (FlightClient client = flightFrom(memory, flightPort, Attackers.UNREAD_DOGETS);
             FlightSqlClient sql = new FlightSqlClient(client)) {
          CallOption auth = bearer(token);
          for (int i = 0; i < count && running.getAsBoolean(); i++) {
            try {
              // With a deadline, as gRPC clients are told to use: a statement that waits for the token's turn
              // (the greedy clients hold it) gives up, and the server's wait with it, within 10 s.
              FlightInfo info = sql.execute("SELECT i, i * 2 AS j FROM range(1000000000) t(i)", auth,
                  org.apache.arrow.flight.CallOptions.timeout(10, java.util.concurrent.TimeUnit.SECONDS));
              unread.add(sql.getStream(info.getEndpoints().getFirst().getTicket(), auth));
              tally.count("attacker unread DoGets started");
            } catch (RuntimeException refused) {
              tally.count("attacker unread DoGets refused");
            }
          }
          hold(Duration.ofSeconds(20));
          for (FlightStream stream : unread) {
            try {
              stream.cancel("the soak's unread DoGet is done", null);
              stream.close();
            } catch (Exception ignored) {
              // A stream the server gave up on closes with an error.
            }
          }
        } catch (Exception e) {
          tally.count("attacker unread DoGet errors");
          pause(200);
        }
      }
    }
  }

  /** A 16 MiB {@code GetFlightInfo} command (four times the command limit) every 5 s. */
  void hugeFlightMessages(int flightPort) {
    String sql64 = "SELECT 1 -- " + "x".repeat(16 << 20);
    try (BufferAllocator memory = new RootAllocator()) {
      while (running.getAsBoolean()) {
        try (FlightClient client = flightFrom(memory, flightPort, Attackers.HUGE_MESSAGES);
             FlightSqlClient sql = new FlightSqlClient(client)) {
          while (running.getAsBoolean()) {
            try {
              sql.execute(sql64, bearer(token));
              tally.count("attacker huge flight messages accepted");
            } catch (RuntimeException refused) {
              tally.count("attacker huge flight messages refused");
            }
            hold(Duration.ofSeconds(5));
          }
        } catch (Exception e) {
          tally.count("attacker huge flight message errors");
          pause(200);
        }
      }
    }
  }

  /** Corrupt batches sent over Flight {@code DoPut} (bulk ingest), each lie in turn, every 2 s. */
  void corruptDoPuts(int flightPort) {
    var create = FlightSql.CommandStatementIngest.TableDefinitionOptions.newBuilder()
        .setIfNotExist(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption
            .TABLE_NOT_EXIST_OPTION_CREATE)
        .setIfExists(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption
            .TABLE_EXISTS_OPTION_APPEND).build();
    try (BufferAllocator memory = new RootAllocator()) {
      int round = 0;
      while (running.getAsBoolean()) {
        try (FlightClient client = flightFrom(memory, flightPort, Attackers.CORRUPT_DOPUTS);
             FlightSqlClient sql = new FlightSqlClient(client)) {
          while (running.getAsBoolean()) {
            CorruptBatches.Lie lie = CorruptBatches.Lie.values()[round % CorruptBatches.Lie.values().length];
            int rows = round++ % 2 == 0 ? 2 : 8192;
            try (VectorSchemaRoot batch = CorruptBatches.of(memory, lie, rows)) {
              sql.executeIngest(batch, new FlightSqlClient.ExecuteIngestOptions("soak_corrupt_flight", create, null,
                  null, Map.of()), bearer(token));
              tally.count("attacker corrupt DoPuts accepted");
            } catch (RuntimeException refused) {
              tally.count("attacker corrupt DoPuts refused");
            }
            hold(Duration.ofSeconds(2));
          }
        } catch (Exception e) {
          tally.count("attacker corrupt DoPut errors");
          pause(200);
        }
      }
    }
  }

  /** Corrupt batches ingested over one native transport, inline and out of line, each lie in turn, every 2 s. */
  void corruptIngests(String transport) {
    try (BufferAllocator memory = new RootAllocator()) {
      int round = 0;
      while (running.getAsBoolean()) {
        try (ThallusClient client = ThallusClient.connect(memory, Location.of(host, port).withTransport(transport),
            ClientOptions.builder().token(token).build())) {
          while (running.getAsBoolean()) {
            CorruptBatches.Lie lie = CorruptBatches.Lie.values()[round % CorruptBatches.Lie.values().length];
            int rows = round++ % 2 == 0 ? 2 : 8192;
            try (VectorSchemaRoot batch = CorruptBatches.of(memory, lie, rows);
                 ThallusIngest ingest = client.ingest(IngestRequest.of("soak_corrupt_" + transport,
                     IngestMode.REPLACE), CorruptBatches.SCHEMA)) {
              ingest.write(batch);
              ingest.finish();
              tally.count("attacker corrupt ingests accepted");
            } catch (RuntimeException refused) {
              tally.count("attacker corrupt ingests refused");
            }
            hold(Duration.ofSeconds(2));
          }
        } catch (RuntimeException e) {
          tally.count("attacker corrupt ingest connection errors");
          pause(200);
        }
      }
    }
  }

  /**
   * Keeps {@code count} connections to the metrics port each holding half an HTTP request, opening a new one for each
   * the server closes.
   */
  void metricsSlowloris(int metricsPort, int count) {
    List<Socket> held = new ArrayList<>();
    byte[] half = ("GET /metrics HTTP/1.1\r\nHost: " + host + "\r\nX-Soak: ").getBytes(StandardCharsets.US_ASCII);
    try {
      while (running.getAsBoolean()) {
        held.removeIf(socket -> {
          try {
            socket.setSoTimeout(1);
            InputStream in = socket.getInputStream();
            if (in.read() < 0) {
              tally.count("attacker slowloris sockets closed by the server");
              closeQuietly(socket);
              return true;
            }
            return false;
          } catch (java.net.SocketTimeoutException stillOpen) {
            return false;
          } catch (IOException closed) {
            tally.count("attacker slowloris sockets closed by the server");
            closeQuietly(socket);
            return true;
          }
        });
        while (held.size() < count && running.getAsBoolean()) {
          try {
            Socket socket = new Socket(java.net.InetAddress.getByName(host), metricsPort,
                java.net.InetAddress.getByName(Attackers.SLOWLORIS), 0);
            OutputStream out = socket.getOutputStream();
            out.write(half);
            out.flush();
            held.add(socket);
          } catch (IOException refused) {
            tally.count("attacker slowloris connects refused");
            break;
          }
        }
        hold(Duration.ofMillis(500));
      }
    } finally {
      held.forEach(DoorActors::closeQuietly);
    }
  }

  /** Asks {@code /health} once a second, as a readiness probe would (5 s to answer, else a failure). */
  void healthProbe(int metricsPort) {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + host + ":" + metricsPort + "/health"))
        .timeout(Duration.ofSeconds(5)).build();
    while (running.getAsBoolean()) {
      try {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
          throw new IllegalStateException("/health answered " + response.statusCode());
        }
        tally.honestOk("health probe");
      } catch (Exception e) {
        tally.honestFailed("health probe", e);
      }
      hold(Duration.ofSeconds(1));
    }
  }

  /**
   * Commits one row at a time to {@code ledger} (autocommit INSERTs) and publishes the last id the server
   * acknowledged: after a kill -9 and a restart every id up to it must be there.
   */
  void ledgerWriter(java.util.concurrent.atomic.AtomicLong published) {
    long acknowledged = 0;
    try (BufferAllocator memory = new RootAllocator()) {
      while (running.getAsBoolean()) {
        try (ThallusClient client = ThallusClient.connect(memory, Location.of(host, port), honest)) {
          drain(client.query("CREATE TABLE IF NOT EXISTS ledger (id BIGINT PRIMARY KEY)"));
          // An INSERT whose answer was lost may have committed: go on after the last id the table has.
          acknowledged = Math.max(acknowledged, maxId(client));
          published.set(acknowledged);
          while (running.getAsBoolean()) {
            drain(client.query("INSERT INTO ledger VALUES (" + (acknowledged + 1) + ")"));
            acknowledged++;
            // Published as it goes: a writer that hangs still leaves the true figure.
            published.set(acknowledged);
            tally.honestOk("ledger commit");
          }
        } catch (RuntimeException e) {
          tally.honestFailed("ledger commit", e);
          pause(200);
        }
      }
    }
  }

  private static long maxId(ThallusClient client) {
    try (ThallusStream stream = client.query("SELECT coalesce(max(id), 0) FROM ledger")) {
      long max = 0;
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          if (batch.getRowCount() > 0) {
            max = ((BigIntVector) batch.getVector(0)).get(0);
          }
        }
      }
      return max;
    }
  }

  private static void drain(ThallusStream stream) {
    try (stream) {
      while (stream.hasNext()) {
        stream.next().close();
      }
    }
  }

  private void hold(Duration length) {
    long until = System.nanoTime() + length.toNanos();
    while (running.getAsBoolean() && System.nanoTime() < until) {
      pause(100);
    }
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception ignored) {
      // Already gone.
    }
  }
}
