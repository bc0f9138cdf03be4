package io.thallus.flightsql;

import io.thallus.StatementDescription;
import java.util.List;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightProducer.CallContext;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.SchemaResult;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The tables and views a caller's session sees, as plain Arrow Flight offers datasets: ListFlights lists each as a
 * FlightInfo with a path descriptor ({@code [catalog, schema, table]}) and its schema, and no endpoint (a listing
 * plans nothing); GetFlightInfo of such a path (or of {@code [schema, table]} or {@code [table]}) plans
 * {@code SELECT * FROM} it as a statement and answers its ticket, which DoGet reads. Flight SQL clients use their
 * commands instead; this is for clients that know only Flight's own calls (pyarrow.flight's {@code list_flights},
 * {@code get_flight_info}, {@code do_get}).
 */
final class TableFlights {
  private final CallSessions sessions;
  private final StatementCommands statements;

  TableFlights(SessionRegistry registry, StatementCommands statements) {
    this.sessions = new CallSessions(registry);
    this.statements = statements;
  }

  void list(CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
    try {
      if (criteria != null && criteria.getExpression() != null && criteria.getExpression().length > 0) {
        throw FlightErrors.invalid("ListFlights takes no criteria here: it lists every table and view of the"
            + " session (filter with Flight SQL's GetTables)");
      }
      FlightSession session = sessions.caller(context);
      for (List<Object> row : Metadata.tableRows(session, null, null, null, List.of())) {
        String catalog = (String) row.get(0);
        String schema = (String) row.get(1);
        String table = (String) row.get(2);
        Schema rows = StatementCommands.rowsSchema(describe(session, selectAll(List.of(catalog, schema, table))));
        listener.onNext(new FlightInfo(rows, FlightDescriptor.path(catalog, schema, table), List.of(), -1, -1));
      }
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.of(e));
    }
  }

  /** The flight of the table a path names: its rows planned as a statement, under a ticket. */
  FlightInfo flightInfo(CallContext context, FlightDescriptor descriptor) {
    try {
      FlightSession session = sessions.caller(context);
      String sql = selectAll(descriptor.getPath());
      StatementDescription description = describe(session, sql);
      return statements.keep(new Statements.Pending(session.id(), sql, null, List.of()),
          StatementCommands.rowsSchema(description), descriptor, false);
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  SchemaResult schema(CallContext context, FlightDescriptor descriptor) {
    try {
      return new SchemaResult(StatementCommands.rowsSchema(describe(sessions.caller(context),
          selectAll(descriptor.getPath()))));
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  private static StatementDescription describe(FlightSession session, String sql) {
    return StatementCommands.describe(session, sql);
  }

  /** {@code SELECT * FROM} the table a path names: {@code [table]}, {@code [schema, table]} or all three parts. */
  private static String selectAll(List<String> path) {
    if (path.isEmpty() || path.size() > 3 || path.stream().anyMatch(part -> part == null || part.isEmpty())) {
      throw FlightErrors.invalid("a path descriptor names a table as [table], [schema, table] or [catalog, schema,"
          + " table], each part not empty; got " + path);
    }
    String table = path.getLast();
    String schema = path.size() >= 2 ? path.get(path.size() - 2) : null;
    String catalog = path.size() == 3 ? path.getFirst() : null;
    return "SELECT * FROM " + Metadata.tableName(catalog, schema, table);
  }
}
