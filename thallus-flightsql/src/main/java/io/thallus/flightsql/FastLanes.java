package io.thallus.flightsql;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.flight.sql.impl.FlightSql;

/**
 * The Thallus lanes of a Flight SQL result. A Thallus Flight SQL server announces, in the app metadata of each
 * endpoint (never as its locations, which generic Flight clients would try), the Thallus locations of the same server
 * ({@code thallus+shm://}, {@code thallus+cma://}, ...); a Thallus client handed the FlightInfo connects to one of
 * them with its own credentials and reads the same rows without gRPC or Arrow IPC serialization:
 *
 * <pre>{@code
 * FlightInfo info = flightSqlClient.execute("SELECT ...");
 * FastLanes.Lane lane = FastLanes.of(info.getEndpoints().get(0)).orElseThrow();
 * try (ThallusClient client = lane.connect(allocator, options);
 *      ThallusStream rows = client.query(lane.request())) { ... }
 * }</pre>
 *
 * <p>A lane runs the statement in a session of its own: it sees committed data and the server's files, not the
 * Flight SQL session's temporary tables or open transaction (the server offers no lane for a statement in a
 * transaction, nor for one with bound parameters).
 */
public final class FastLanes {
  private FastLanes() {}

  /** The Thallus locations of an endpoint, in the server's order, and the request that reads its rows there. */
  public record Lane(List<Location> locations, QueryRequest request) {
    public Lane {
      locations = List.copyOf(locations);
    }

    /**
     * A client on the first location this machine can use, in the server's order (fastest first): one whose
     * transport is not available here (no RDMA device, another host for shm) is skipped; any other failure, a
     * refused login say, is thrown as it is.
     */
    public ThallusClient connect(BufferAllocator allocator, ClientOptions options) {
      ThallusException last = null;
      for (Location location : locations) {
        try {
          return ThallusClient.connect(allocator, location, options);
        } catch (ThallusException e) {
          if (e.code() != StatusCode.UNAVAILABLE && e.code() != StatusCode.UNIMPLEMENTED) {
            throw e;
          }
          last = e;
        }
      }
      throw last;
    }
  }

  /**
   * The lane of {@code endpoint}, or empty when it announces none (another server's endpoint, or a statement that
   * has no lane: in a transaction, with parameters, without rows). An announcement that is malformed is an
   * {@link IllegalArgumentException} naming why.
   */
  public static Optional<Lane> of(FlightEndpoint endpoint) {
    Optional<List<Location>> announced = LaneAnnouncement.decode(endpoint.getAppMetadata());
    if (announced.isEmpty()) {
      return Optional.empty();
    }
    List<Location> locations = announced.get();
    FlightSql.TicketStatementQuery ticket;
    try {
      Any any = Any.parseFrom(endpoint.getTicket().getBytes());
      if (!any.is(FlightSql.TicketStatementQuery.class)) {
        return Optional.empty();
      }
      ticket = any.unpack(FlightSql.TicketStatementQuery.class);
    } catch (InvalidProtocolBufferException e) {
      return Optional.empty();
    }
    return StatementHandles.sql(ticket.getStatementHandle().toByteArray())
        .map(sql -> new Lane(locations, QueryRequest.of(sql)));
  }
}
