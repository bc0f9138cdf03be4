package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.server.Admission;
import io.thallus.testing.Eventually;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Flight SQL port admits as the native port does (issue 33, breaks 3 and 4): strangers have a deadline and a
 * cap with the oldest let go first, and one credential or one address cannot take every session. Real servers,
 * real sockets, Arrow Java's own Flight client.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlightAdmissionTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  /**
   * A connection whose registration with an event loop fails (the loops shutting down with the server) never becomes
   * active; it is still un-counted as a stranger and from its address, and its socket is closed.
   */
  @Test
  void aConnectionWhoseRegistrationFailsIsUncountedAndClosed() throws Exception {
    Admission policy = Admission.builder().maxStrangers(8).build();
    io.netty.channel.EventLoopGroup gone = new io.netty.channel.MultiThreadIoEventLoopGroup(1,
        io.netty.channel.nio.NioIoHandler.newFactory());
    gone.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    try (FlightAdmission admission = new FlightAdmission(policy);
         java.nio.channels.ServerSocketChannel listener = java.nio.channels.ServerSocketChannel.open()
             .bind(new java.net.InetSocketAddress("127.0.0.1", 0));
         java.nio.channels.SocketChannel client = java.nio.channels.SocketChannel.open(listener.getLocalAddress())) {
      io.netty.channel.Channel child = admission.admit(null, listener.accept());
      assertThat(child).isNotNull();
      assertThat(admission.strangerCount()).isEqualTo(1);
      assertThat(admission.connectionsFrom("127.0.0.1")).isEqualTo(1);

      io.netty.channel.ChannelFuture registration = gone.next().register(child);
      assertThat(registration.await(WAIT.toMillis())).isTrue();
      assertThat(registration.isSuccess()).isFalse();
      assertThat(admission.strangerCount()).isZero();
      assertThat(admission.connectionsFrom("127.0.0.1")).isZero();
      client.socket().setSoTimeout((int) WAIT.toMillis());
      assertThat(client.socket().getInputStream().read()).as("the server side of the socket is closed").isEqualTo(-1);
    }
  }

  /** Break 3: silent sockets no longer stay; past the cap the oldest go first, and an honest client is served. */
  @Test
  void silentSocketsPastTheCapAreClosedOldestFirstWhileAnHonestClientIsServed() throws Exception {
    Admission admission = Admission.builder().maxStrangers(8).handshakeTimeout(Duration.ofMinutes(2)).build();
    try (FlightSqlFixture fixture = new FlightSqlFixture(admission, 256)) {
      List<Socket> silent = new ArrayList<>();
      try {
        for (int i = 0; i < 24; i++) {
          silent.add(new Socket("127.0.0.1", fixture.flightSql.port()));
        }
        for (int i = 0; i < 16; i++) {
          assertClosedWithin(silent.get(i), WAIT, "silent socket " + i + " of 24 (the cap is 8)");
        }
        // The eight youngest are the strangers still waiting: none of them was let go before an older one.
        Eventually.await("8 strangers waiting", WAIT, () -> fixture.flightSql.strangerCount() == 8);
        assertHonestClientServed(fixture);
        // The honest client's connection came in as a ninth stranger and let the oldest silent one go.
        assertClosedWithin(silent.get(16), WAIT, "silent socket 16, the oldest left when the honest client came");
        Eventually.await("7 strangers waiting", WAIT, () -> fixture.flightSql.strangerCount() == 7);
      } finally {
        for (Socket socket : silent) {
          socket.close();
        }
      }
    }
  }

  /** Break 3: a silent socket, and an HTTP/2 connection whose calls carry no valid credentials, go at the deadline. */
  @Test
  void connectionsWithoutAnAuthenticatedCallAreClosedAtTheDeadline() throws Exception {
    Admission admission = Admission.builder().maxStrangers(64).handshakeTimeout(Duration.ofSeconds(3)).build();
    try (FlightSqlFixture fixture = new FlightSqlFixture(admission, 256);
         BufferAllocator memory = new RootAllocator();
         FlightClient wrong = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
             fixture.flightSql.port())).build()) {
      List<Socket> silent = new ArrayList<>();
      try {
        for (int i = 0; i < 4; i++) {
          silent.add(new Socket("127.0.0.1", fixture.flightSql.port()));
        }
        assertThatThrownBy(() -> wrong.authenticateBasicToken(FlightSqlFixture.USER, "Wonderland"))
            .isInstanceOfSatisfying(FlightRuntimeException.class,
                e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED));
        for (Socket socket : silent) {
          assertClosedWithin(socket, WAIT, "a silent socket past the 3 s deadline");
        }
        // The client with the wrong password is still open; its HTTP/2 connection is not.
        Eventually.await("no strangers left", WAIT, () -> fixture.flightSql.strangerCount() == 0);
        assertHonestClientServed(fixture);
      } finally {
        for (Socket socket : silent) {
          socket.close();
        }
      }
    }
  }

  /**
   * Break 4: one token holder opening a session per call with a new Basic user name each time gets as many as its
   * credential's quota (the token is one credential whatever the user name), and another credential still gets in.
   */
  @Test
  void oneCredentialHoardingSessionsStopsAtItsQuotaWhileAnotherStillGetsIn() throws Exception {
    Admission admission = Admission.builder().maxConnectionsPerCredential(4).build();
    try (FlightSqlFixture fixture = new FlightSqlFixture(admission, 256);
         BufferAllocator memory = new RootAllocator();
         FlightClient hoarder = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
             fixture.flightSql.port())).build();
         FlightSqlClient hoarderSql = new FlightSqlClient(hoarder)) {
      List<FlightStatusCode> outcomes = new ArrayList<>();
      FlightRuntimeException refusal = null;
      for (int i = 0; i < 10; i++) {
        CallOption asSomeoneNew = new CredentialCallOption(
            new BasicAuthCredentialWriter("user-" + i, FlightSqlFixture.TOKEN));
        try {
          hoarderSql.getSqlInfo(new int[0], asSomeoneNew);
          outcomes.add(FlightStatusCode.OK);
        } catch (FlightRuntimeException e) {
          outcomes.add(e.status().code());
          refusal = e;
        }
      }
      assertThat(outcomes).containsExactly(FlightStatusCode.OK, FlightStatusCode.OK, FlightStatusCode.OK,
          FlightStatusCode.OK, FlightStatusCode.RESOURCE_EXHAUSTED, FlightStatusCode.RESOURCE_EXHAUSTED,
          FlightStatusCode.RESOURCE_EXHAUSTED, FlightStatusCode.RESOURCE_EXHAUSTED,
          FlightStatusCode.RESOURCE_EXHAUSTED, FlightStatusCode.RESOURCE_EXHAUSTED);
      assertThat(refusal.getMessage()).contains("this credential (token) already has 4 connections open, its quota "
          + "(maxConnectionsPerCredential)");
      assertThat(fixture.flightSql.sessionCount()).isEqualTo(4);
      assertHonestClientServed(fixture);
    }
  }

  /** Break 4: the clients at one address hold at most their quota of sessions, with any credentials. */
  @Test
  void theClientsAtOneAddressHoldAtMostTheirQuotaOfSessions() throws Exception {
    Admission admission = Admission.builder().maxSessionsPerAddress(3).build();
    try (FlightSqlFixture fixture = new FlightSqlFixture(admission, 256);
         BufferAllocator memory = new RootAllocator();
         FlightClient hoarder = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
             fixture.flightSql.port())).build();
         FlightSqlClient hoarderSql = new FlightSqlClient(hoarder)) {
      for (int i = 0; i < 3; i++) {
        hoarderSql.getSqlInfo(new int[0], new CredentialCallOption(
            new BasicAuthCredentialWriter("user-" + i, FlightSqlFixture.TOKEN)));
      }
      assertThatThrownBy(() -> hoarderSql.getSqlInfo(new int[0], new CredentialCallOption(
          new BasicAuthCredentialWriter(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD))))
          .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
            assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
            assertThat(e.getMessage()).contains("the clients at 127.0.0.1 have 3 Flight SQL sessions open, their "
                + "quota (maxSessionsPerAddress)");
          });
      assertThat(fixture.flightSql.sessionCount()).isEqualTo(3);
    }
  }

  /** Break 4's race: clients opening sessions at once never pass the cap (261 opened against 256 before). */
  @Test
  void clientsRacingForTheLastSessionsNeverPassTheCap() throws Exception {
    int racers = 16;
    int maxSessions = 5;
    try (FlightSqlFixture fixture = new FlightSqlFixture(Admission.defaults(), maxSessions);
         BufferAllocator memory = new RootAllocator()) {
      List<FlightClient> clients = new ArrayList<>();
      ConcurrentLinkedQueue<Object> outcomes = new ConcurrentLinkedQueue<>();
      CountDownLatch start = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      try {
        for (int i = 0; i < racers; i++) {
          FlightClient client = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
              fixture.flightSql.port())).build();
          clients.add(client);
          threads.add(Thread.ofPlatform().start(() -> {
            try {
              start.await();
              client.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD);
              outcomes.add(FlightStatusCode.OK);
            } catch (FlightRuntimeException e) {
              outcomes.add(e.status().code() + ": " + e.getMessage());
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }));
        }
        start.countDown();
        for (Thread thread : threads) {
          thread.join(WAIT.toMillis());
        }
        assertThat(outcomes).hasSize(racers);
        assertThat(outcomes.stream().filter(FlightStatusCode.OK::equals).count()).isEqualTo(maxSessions);
        assertThat(outcomes).filteredOn(o -> o != FlightStatusCode.OK).allSatisfy(o -> assertThat(o.toString())
            .startsWith("RESOURCE_EXHAUSTED").contains("has 5 sessions open, its limit (maxSessions)"));
        assertThat(fixture.flightSql.sessionCount()).isEqualTo(maxSessions);
      } finally {
        for (FlightClient client : clients) {
          client.close();
        }
      }
    }
  }

  /**
   * A gRPC connection with no call for the connection idle timeout is closed by the server, as the native port closes
   * a connection with no stream, and the session it opened without naming it ends with it (the soak found an
   * attacker's connection and its session still held after it went quiet); the client's next call reconnects.
   */
  @Test
  void aConnectionQuietForTheIdleTimeoutIsClosedWithItsSession() throws Exception {
    try (FlightSqlFixture fixture = new FlightSqlFixture(UnaryOperator.identity(),
             door -> door.connectionIdleTimeout(Duration.ofSeconds(1)));
         FlightSqlLogin client = FlightSqlLogin.basicOnEveryCall(fixture)) {
      client.sql().getCatalogs(client.auth()).getEndpoints();
      assertThat(fixture.flightSql.sessionCount()).isEqualTo(1);
      Eventually.await("the quiet connection closed with its session", WAIT,
          () -> fixture.flightSql.sessionCount() == 0);
      client.sql().getCatalogs(client.auth()).getEndpoints();
      assertThat(fixture.flightSql.sessionCount()).as("a new session on a new connection").isEqualTo(1);
    }
  }

  /**
   * A command message over the command limit is refused, and its call ends on the server too: the connection it came
   * on then counts as quiet and is closed by the idle rule with its session (the soak found such a connection still
   * open after the refusal, its call never ended).
   */
  @Test
  void aRefusedOversizedCommandLeavesNoCallOpen() throws Exception {
    try (FlightSqlFixture fixture = new FlightSqlFixture(UnaryOperator.identity(),
             door -> door.connectionIdleTimeout(Duration.ofSeconds(1)));
         FlightSqlLogin client = FlightSqlLogin.basicOnEveryCall(fixture)) {
      client.sql().getCatalogs(client.auth()).getEndpoints();
      String huge = "SELECT 1 -- " + "x".repeat(16 << 20);
      assertThatThrownBy(() -> client.sql().execute(huge, client.auth()))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED));
      Eventually.await("the refused call's connection closed as quiet, with its session", WAIT,
          () -> fixture.flightSql.sessionCount() == 0);
    }
  }

  /** A client that connects now, with a user and password, gets its session and its answer. */
  private static void assertHonestClientServed(FlightSqlFixture fixture) throws Exception {
    try (BufferAllocator memory = new RootAllocator();
         FlightClient flight = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
             fixture.flightSql.port())).build();
         FlightSqlClient sql = new FlightSqlClient(flight)) {
      CallOption auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD)
          .orElseThrow();
      FlightInfo info = sql.execute("SELECT 42 AS answer", auth);
      try (FlightStream stream = sql.getStream(info.getEndpoints().getFirst().getTicket(), auth)) {
        assertThat(stream.next()).isTrue();
        assertThat(stream.getRoot().getVector(0).getObject(0)).isEqualTo(42);
      }
    }
  }

  /** Reads from {@code socket} until the server closes it (end of stream or a reset), for at most {@code atMost}. */
  private static void assertClosedWithin(Socket socket, Duration atMost, String what) throws IOException {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (System.nanoTime() < deadline) {
      socket.setSoTimeout((int) Math.max(1, Math.min(1000, (deadline - System.nanoTime()) / 1_000_000)));
      try {
        // The server may have written an HTTP/2 SETTINGS frame first; that is read and passed over.
        if (socket.getInputStream().read(new byte[4096]) < 0) {
          return;
        }
      } catch (SocketTimeoutException stillOpen) {
        // Not yet: read again until the deadline.
      } catch (IOException reset) {
        return;
      }
    }
    throw new AssertionError(what + " was not closed within " + atMost);
  }
}
