package io.thallus.flightsql;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.IngestResult;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.ThallusIngest;
import org.apache.arrow.flight.FlightProducer.CallContext;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Flight SQL's bulk ingest (a DoPut of {@code CommandStatementIngest}): the client's batches go into a table on the
 * native write path, each moved into the session's memory as it arrives; the table options choose the ingest mode.
 */
final class BulkIngestCommand {
  private final CallSessions sessions;
  private final BufferAllocator allocator;

  BulkIngestCommand(SessionRegistry registry, BufferAllocator allocator) {
    this.sessions = new CallSessions(registry);
    this.allocator = allocator;
  }

  Runnable ingest(FlightSql.CommandStatementIngest command, CallContext context, FlightStream flightStream,
      StreamListener<PutResult> ack) {
    return DoPuts.answering(ack, () -> {
      FlightSession session = sessions.of(context, command.getTransactionId());
      String table = Metadata.tableName(command.getTemporary() ? "temp" : command.hasCatalog()
          ? command.getCatalog() : null, command.hasSchema() ? command.getSchema() : null, command.getTable());
      IngestMode mode = mode(session, command, table);
      if (command.getTemporary() && mode != IngestMode.APPEND) {
        throw ThallusException.of(StatusCode.UNIMPLEMENTED, "an ingest cannot create or replace a temporary table"
            + " (DuckDB creates those only with CREATE TEMP TABLE): create " + table + " so first, then ingest with"
            + " append");
      }
      IngestResult result;
      // In a named transaction the rows join it; otherwise the ingest commits on its own.
      IngestRequest request = IngestRequest.builder(table).mode(mode)
          .autoCommit(CallSessions.transactionId(command.getTransactionId()) == null).build();
      // A dictionary-encoded column (pandas' Categorical) reaches the ingest with the dictionaries the stream has
      // received; each batch takes them as they are when it goes.
      try (ThallusIngest ingest = session.call(client -> client.ingest(request, flightStream.getSchema(),
          flightStream.getDictionaryProvider()))) {
        while (flightStream.next()) {
          try (VectorSchemaRoot batch = DoPuts.intoSessionMemory(flightStream.getRoot(), session.allocator())) {
            ingest.write(batch);
          }
        }
        result = ingest.finish();
      }
      DoPuts.acknowledge(ack, result.rows(), allocator);
    });
  }

  /** The ingest mode the command's table options ask for, given whether the table exists. */
  private static IngestMode mode(FlightSession session, FlightSql.CommandStatementIngest command, String table) {
    FlightSql.CommandStatementIngest.TableDefinitionOptions options = command.getTableDefinitionOptions();
    boolean create = options.getIfNotExist()
        != FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL;
    var ifExists = options.getIfExists();
    switch (ifExists) {
      case TABLE_EXISTS_OPTION_REPLACE:
        if (!create && !Metadata.tableExists(session, table)) {
          throw ThallusException.of(StatusCode.NOT_FOUND, "table " + table + " does not exist (the ingest may not "
              + "create it)");
        }
        return IngestMode.REPLACE;
      case TABLE_EXISTS_OPTION_APPEND:
        return create && !Metadata.tableExists(session, table) ? IngestMode.CREATE : IngestMode.APPEND;
      default:
        if (!create) {
          throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "an ingest that may neither create the table nor "
              + "add to it has nothing to do");
        }
        return IngestMode.CREATE;
    }
  }
}
