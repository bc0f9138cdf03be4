package io.thallus.flightsql;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import java.util.List;
import java.util.function.Function;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightProducer.CallContext;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.FlightSqlProducer.Schemas;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Flight SQL's metadata commands: GetFlightInfo answers each with its standard schema and a ticket that is the
 * command itself; the DoGet of that ticket asks the caller's session (see {@link Metadata}) and sends the rows as one
 * batch. The SQL info is {@link SqlInfoValues}.
 */
final class MetadataCommands {
  private final CallSessions sessions;
  private final SqlInfoValues sqlInfo;

  MetadataCommands(SessionRegistry registry, SqlInfoValues sqlInfo) {
    this.sessions = new CallSessions(registry);
    this.sqlInfo = sqlInfo;
  }

  /** The FlightInfo of a metadata command: its schema, and the command as its ticket. */
  static FlightInfo info(Message command, FlightDescriptor descriptor, Schema schema) {
    return new FlightInfo(schema, descriptor, List.of(new FlightEndpoint(new Ticket(Any.pack(command).toByteArray()))),
        -1, -1);
  }

  static Schema tablesSchema(FlightSql.CommandGetTables command) {
    return command.getIncludeSchema() ? Schemas.GET_TABLES_SCHEMA : Schemas.GET_TABLES_SCHEMA_NO_SCHEMA;
  }

  void sqlInfo(FlightSql.CommandGetSqlInfo command, CallContext context, ServerStreamListener listener) {
    try {
      sqlInfo.send(command, sessions.caller(context), listener);
    } catch (RuntimeException e) {
      listener.error(FlightErrors.of(e));
    }
  }

  void catalogs(CallContext context, ServerStreamListener listener) {
    send(context, listener, Metadata::catalogs);
  }

  void schemas(FlightSql.CommandGetDbSchemas command, CallContext context, ServerStreamListener listener) {
    send(context, listener, session -> Metadata.schemas(session,
        command.hasCatalog() ? command.getCatalog() : null,
        command.hasDbSchemaFilterPattern() ? command.getDbSchemaFilterPattern() : null));
  }

  void tables(FlightSql.CommandGetTables command, CallContext context, ServerStreamListener listener) {
    send(context, listener, session -> Metadata.tables(session,
        command.hasCatalog() ? command.getCatalog() : null,
        command.hasDbSchemaFilterPattern() ? command.getDbSchemaFilterPattern() : null,
        command.hasTableNameFilterPattern() ? command.getTableNameFilterPattern() : null,
        command.getTableTypesList(), command.getIncludeSchema()));
  }

  void tableTypes(CallContext context, ServerStreamListener listener) {
    send(context, listener, Metadata::tableTypes);
  }

  void typeInfo(FlightSql.CommandGetXdbcTypeInfo command, CallContext context, ServerStreamListener listener) {
    send(context, listener, session -> XdbcTypeInfo.of(session, command.hasDataType() ? command.getDataType() : null));
  }

  void primaryKeys(FlightSql.CommandGetPrimaryKeys command, CallContext context, ServerStreamListener listener) {
    send(context, listener, session -> Metadata.primaryKeys(session,
        command.hasCatalog() ? command.getCatalog() : null, command.hasDbSchema() ? command.getDbSchema() : null,
        command.getTable()));
  }

  void importedKeys(FlightSql.CommandGetImportedKeys command, CallContext context, ServerStreamListener listener) {
    send(context, listener, session -> Metadata.foreignKeys(session, null, new Metadata.TableRef(
        command.hasCatalog() ? command.getCatalog() : null, command.hasDbSchema() ? command.getDbSchema() : null,
        command.getTable())));
  }

  void exportedKeys(FlightSql.CommandGetExportedKeys command, CallContext context, ServerStreamListener listener) {
    send(context, listener, session -> Metadata.foreignKeys(session, new Metadata.TableRef(
        command.hasCatalog() ? command.getCatalog() : null, command.hasDbSchema() ? command.getDbSchema() : null,
        command.getTable()), null));
  }

  void crossReference(FlightSql.CommandGetCrossReference command, CallContext context,
      ServerStreamListener listener) {
    send(context, listener, session -> Metadata.foreignKeys(session,
        new Metadata.TableRef(command.hasPkCatalog() ? command.getPkCatalog() : null,
            command.hasPkDbSchema() ? command.getPkDbSchema() : null, command.getPkTable()),
        new Metadata.TableRef(command.hasFkCatalog() ? command.getFkCatalog() : null,
            command.hasFkDbSchema() ? command.getFkDbSchema() : null, command.getFkTable())));
  }

  /** Sends the rows the caller's session answers as the one batch of the DoGet. */
  private void send(CallContext context, ServerStreamListener listener,
      Function<FlightSession, VectorSchemaRoot> rows) {
    try {
      FlightSession session = sessions.caller(context);
      try (VectorSchemaRoot root = rows.apply(session)) {
        listener.start(root);
        listener.putNext();
        listener.completed();
      }
    } catch (RuntimeException e) {
      listener.error(FlightErrors.of(e));
    }
  }
}
