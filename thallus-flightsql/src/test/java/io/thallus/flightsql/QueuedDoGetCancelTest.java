package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.thallus.ClientOptions;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.server.Admission;
import io.thallus.testing.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.arrow.flight.CallOption;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.auth2.BasicAuthCredentialWriter;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A DoGet whose native statement waits for its credential's turn (issue 33's soak: unread DoGets queued behind the
 * credential's endless statements kept their calls, sessions and native connections) leaves the queue as soon as its
 * client cancels it, not at its turn or at the native client's timeout (five minutes). Real servers, real sockets,
 * Arrow Java's own Flight SQL client.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class QueuedDoGetCancelTest {
  /** Well under the native client's five-minute timeout: the wait can only end this soon by the cancel. */
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String ENDLESS_SQL = "SELECT sum(i) FROM range(1000000000000) t(i)";

  @Test
  void aDoGetCancelledWhileItsStatementWaitsForItsCredentialsTurnLeavesTheQueueAtOnce() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (FlightSqlFixture fixture = oneStatementPerCredential(meters);
         BufferAllocator memory = new RootAllocator();
         FlightClient flight = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
             fixture.flightSql.port())).build()) {
      FlightSqlClient sql = new FlightSqlClient(flight);
      CallOption auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD).orElseThrow();
      leaveWhileQueued(fixture, meters, sql, auth, doGet -> doGet.cancel("the client leaves", null));

      // The session the DoGet ran in still serves its client.
      FlightInfo again = sql.execute("SELECT 42 AS answer", auth);
      try (FlightStream stream = sql.getStream(again.getEndpoints().getFirst().getTicket(), auth)) {
        assertThat(stream.next()).isTrue();
        Object answer = stream.getRoot().getVector("answer") instanceof IntVector ints ? ints.get(0)
            : ((BigIntVector) stream.getRoot().getVector("answer")).get(0);
        assertThat(((Number) answer).longValue()).isEqualTo(42L);
      }
      assertThat(fixture.flightSql.sessionCount()).isEqualTo(1);
    }
  }

  /** The client's channel shut down at once (its calls cancelled, its connection closed) while the DoGet waits. */
  @Test
  void aDoGetWhoseChannelShutsDownWhileItsStatementWaitsLeavesTheQueueAtOnce() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (FlightSqlFixture fixture = oneStatementPerCredential(meters);
         BufferAllocator memory = new RootAllocator()) {
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", fixture.flightSql.port()).usePlaintext()
          .build();
      try (FlightClient flight = FlightGrpcUtils.createFlightClient(memory, channel)) {
        FlightSqlClient sql = new FlightSqlClient(flight);
        CallOption auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD)
            .orElseThrow();
        leaveWhileQueued(fixture, meters, sql, auth, doGet -> channel.shutdownNow());
        assertThat(channel.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      } finally {
        channel.shutdownNow();
      }
    }
  }

  private static FlightSqlFixture oneStatementPerCredential(SimpleMeterRegistry meters) throws java.io.IOException {
    Admission oneAtATime = Admission.builder().maxStatementsPerCredential(1).build();
    return new FlightSqlFixture(door -> door.admission(oneAtATime).meterRegistry(meters), UnaryOperator.identity());
  }

  /**
   * Fills the credential's one turn (and its queue) with endless statements of the same user, sends a DoGet that
   * queues behind them, has the client leave by {@code leave}, and checks that its statement leaves the queue within
   * the wait while the endless statements keep their places; then ends those.
   */
  private static void leaveWhileQueued(FlightSqlFixture fixture, SimpleMeterRegistry meters, FlightSqlClient sql,
      CallOption auth, java.util.function.Consumer<FlightStream> leave) throws Exception {
    // Planned while the credential's turn is free; its DoGet comes once the turn is taken.
    FlightInfo info = sql.execute("SELECT 42 AS answer", auth);
    try (EndlessStatements hogs = new EndlessStatements(fixture, meters)) {
      FlightStream doGet = sql.getStream(info.getEndpoints().getFirst().getTicket(), auth);
      Eventually.await("the DoGet's statement waiting for the credential's turn too", WAIT,
          () -> waiting(meters) == 2);

      leave.accept(doGet);
      // The endless statements never end by themselves: only the client's leaving can take the DoGet's statement out.
      Eventually.await("the DoGet's statement out of the queue, well before the native client's timeout", WAIT,
          () -> waiting(meters) == 1);
      closeQuietly(doGet);
      assertThat(waiting(meters)).as("the endless statements keep their places").isEqualTo(1);
    }
    Eventually.await("nothing waiting once the endless statements have gone", WAIT, () -> waiting(meters) == 0);
  }

  /**
   * A GetFlightInfo whose describe waits for its credential's turn, from a client with a deadline: past the deadline
   * the server's wait ends too (the soak's attacker was still inside a GetFlightInfo, its connection open, 30 s after
   * it stopped), the call is no longer open, and the quiet connection closes with its session.
   */
  @Test
  void aGetFlightInfoPastItsDeadlineWhileItsStatementWaitsLeavesTheQueueAtOnce() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Admission oneAtATime = Admission.builder().maxStatementsPerCredential(1).build();
    try (FlightSqlFixture fixture = new FlightSqlFixture(door -> door.admission(oneAtATime).meterRegistry(meters),
             door -> door.connectionIdleTimeout(Duration.ofSeconds(1)));
         BufferAllocator memory = new RootAllocator();
         FlightClient flight = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
             fixture.flightSql.port())).build();
         EndlessStatements hogs = new EndlessStatements(fixture, meters)) {
      FlightSqlClient sql = new FlightSqlClient(flight);
      CallOption auth = new CredentialCallOption(new BasicAuthCredentialWriter(FlightSqlFixture.USER,
          FlightSqlFixture.PASSWORD));
      assertThatThrownBy(() -> sql.execute("SELECT 42 AS answer", auth, CallOptions.timeout(2, TimeUnit.SECONDS)))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.TIMED_OUT));
      Eventually.await("the describe out of the queue, well before the native client's timeout", WAIT,
          () -> waiting(meters) == 1);
      Eventually.await("the connection, with no call open, closed with its session", WAIT,
          () -> fixture.flightSql.sessionCount() == 0);
    }
  }

  /**
   * Two endless statements of the Flight client's user on the native port: one takes the credential's only turn,
   * the other waits for it. Closing their clients stops them.
   */
  private static final class EndlessStatements implements AutoCloseable {
    private final List<ThallusClient> hogs = new ArrayList<>();
    private final List<Thread> running = new ArrayList<>();

    EndlessStatements(FlightSqlFixture fixture, SimpleMeterRegistry meters) throws InterruptedException {
      for (int i = 0; i < 2; i++) {
        ThallusClient hog = ThallusClient.connect(fixture.allocator, fixture.server.getLocation(),
            ClientOptions.builder().user(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD).build());
        hogs.add(hog);
        running.add(Thread.ofPlatform().start(() -> {
          try (ThallusStream stream = hog.query(ENDLESS_SQL); VectorSchemaRoot ignored = stream.next()) {
            // Stopped by the client's close below, long before it could finish.
          } catch (RuntimeException stopped) {
            // Expected: the connection closed under it.
          }
        }));
      }
      Eventually.await("one endless statement waiting for the credential's turn", WAIT, () -> waiting(meters) == 1);
    }

    @Override
    public void close() throws InterruptedException {
      hogs.forEach(ThallusClient::close);
      for (Thread thread : running) {
        thread.join(WAIT.toMillis());
      }
    }
  }

  private static void closeQuietly(FlightStream stream) {
    try {
      stream.close();
    } catch (Exception cancelled) {
      // The stream ended CANCELLED, as asked.
    }
  }

  private static double waiting(SimpleMeterRegistry meters) {
    Gauge gauge = meters.find("thallus.statements.waiting").gauge();
    assertThat(gauge).as("the thallus.statements.waiting gauge").isNotNull();
    return gauge.value();
  }
}
