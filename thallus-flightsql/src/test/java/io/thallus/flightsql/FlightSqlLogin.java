package io.thallus.flightsql;

import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Arrow Java's Flight SQL client logged in to a fixture's door as its user, on memory of its own (closed last, so a
 * leak in the client fails the test).
 *
 * @param memory the client's allocator
 * @param sql the Flight SQL client
 * @param auth the bearer token's call option, for every call
 */
record FlightSqlLogin(BufferAllocator memory, FlightSqlClient sql, CallOption auth) implements AutoCloseable {
  static FlightSqlLogin of(FlightSqlFixture fixture) {
    BufferAllocator memory = new RootAllocator();
    FlightClient flight = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
        fixture.flightSql.port())).build();
    CallOption auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD).orElseThrow();
    return new FlightSqlLogin(memory, new FlightSqlClient(flight), auth);
  }

  /**
   * The same client sending the user and password with every call and never the token it is given, as some clients
   * do: its session is never named, so it ends with its connection.
   */
  static FlightSqlLogin basicOnEveryCall(FlightSqlFixture fixture) {
    BufferAllocator memory = new RootAllocator();
    FlightClient flight = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
        fixture.flightSql.port())).build();
    CallOption basic = new org.apache.arrow.flight.grpc.CredentialCallOption(
        new org.apache.arrow.flight.auth2.BasicAuthCredentialWriter(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD));
    return new FlightSqlLogin(memory, new FlightSqlClient(flight), basic);
  }

  @Override
  public void close() throws Exception {
    try {
      sql.close();
    } finally {
      memory.close();
    }
  }
}
