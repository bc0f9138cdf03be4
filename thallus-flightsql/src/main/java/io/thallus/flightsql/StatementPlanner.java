package io.thallus.flightsql;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.thallus.QueryRequest;
import io.thallus.ThallusStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What GetFlightInfo answers for a statement, plain or prepared: the schema DuckDB plans for its rows and the ticket
 * that runs it; a statement without rows runs at once instead.
 */
final class StatementPlanner {
  private final List<Location> lanes;

  StatementPlanner(List<Location> lanes) {
    this.lanes = List.copyOf(lanes);
  }

  /** The schema of a statement's rows, planned by DuckDB; no fields for a statement that answers an update count. */
  static Schema schema(FlightSession session, String sql, List<Object> parameters) {
    if (!StatementText.returnsRows(sql)) {
      return new Schema(List.of());
    }
    return DecodedBatch.schema(session.client().schema(QueryRequest.builder(sql).parameters(parameters).build()));
  }

  /**
   * One endpoint for the statement. With lanes it lists this server first (the connection the client has) and then
   * the Thallus locations; a client that knows no {@code thallus+} scheme uses the first.
   */
  FlightInfo ticket(Schema schema, FlightDescriptor descriptor, String id, String sql, boolean lanesAllowed) {
    FlightSql.TicketStatementQuery ticket = FlightSql.TicketStatementQuery.newBuilder()
        .setStatementHandle(ByteString.copyFrom(StatementHandles.encode(id, sql))).build();
    Ticket flightTicket = new Ticket(Any.pack(ticket).toByteArray());
    FlightEndpoint endpoint;
    if (lanesAllowed && !lanes.isEmpty()) {
      List<Location> locations = new ArrayList<>();
      locations.add(Location.reuseConnection());
      locations.addAll(lanes);
      endpoint = new FlightEndpoint(flightTicket, locations.toArray(Location[]::new));
    } else {
      endpoint = new FlightEndpoint(flightTicket);
    }
    return new FlightInfo(schema, descriptor, List.of(endpoint), -1, -1);
  }

  /**
   * A statement without rows (DDL, DML, SET) sent as a query runs now, as GetFlightInfo answers: Flight clients
   * (ADBC's {@code execute}) read no stream for it. Its ticket then yields no rows.
   */
  FlightInfo runNow(FlightSession session, FlightDescriptor descriptor, String sql, List<Object> parameters) {
    try (ThallusStream stream = session.client().query(QueryRequest.builder(sql).parameters(parameters).build())) {
      UpdateCounts.read(stream);
    }
    return ticket(new Schema(List.of()), descriptor, StatementHandles.RAN, sql, false);
  }
}
