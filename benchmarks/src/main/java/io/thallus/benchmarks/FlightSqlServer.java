package io.thallus.benchmarks;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.NoOpFlightSqlProducer;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A small Arrow Flight SQL server over the same query engine as the Thallus server, for Arrow Flight SQL's JDBC
 * driver to query: just the statement and prepared-statement calls a {@code Statement.executeQuery} makes (the
 * driver prepares every query). A query's schema is planned once and remembered, as a server with a plan cache
 * would, so each query costs DuckDB one execution.
 */
final class FlightSqlServer implements AutoCloseable {
  private final FlightServer server;

  FlightSqlServer(QueryEngine engine, BufferAllocator allocator) {
    server = FlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0), new Producer(engine, allocator))
        .build();
    try {
      server.start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start the Flight SQL server: " + e.getMessage(), e);
    }
  }

  int port() {
    return server.getPort();
  }

  String jdbcUrl() {
    return "jdbc:arrow-flight-sql://127.0.0.1:" + server.getPort() + "?useEncryption=false";
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdown();
    if (!server.awaitTermination(10, TimeUnit.SECONDS)) {
      server.close();
    }
  }

  private static final class Producer extends NoOpFlightSqlProducer {
    private static final int BATCH_ROWS = 65_536;
    private final QueryEngine engine;
    private final BufferAllocator allocator;
    private final Map<String, Schema> schemas = new ConcurrentHashMap<>();

    Producer(QueryEngine engine, BufferAllocator allocator) {
      this.engine = engine;
      this.allocator = allocator;
    }

    private Schema schema(String sql) {
      return schemas.computeIfAbsent(sql, text -> {
        try (QueryResult result = engine.execute(new QuerySpec(text, Optional.empty(), BATCH_ROWS, List.of(), true,
            Map.of()), allocator)) {
          return result.schema();
        }
      });
    }

    private static ByteString serialize(Schema schema) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try {
        MessageSerializer.serialize(new WriteChannel(Channels.newChannel(out)), schema);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      return ByteString.copyFrom(out.toByteArray());
    }

    private QuerySpec spec(String sql) {
      return new QuerySpec(sql, Optional.empty(), BATCH_ROWS, Map.of());
    }

    @Override
    public void createPreparedStatement(FlightSql.ActionCreatePreparedStatementRequest request, CallContext context,
        StreamListener<Result> listener) {
      try {
        FlightSql.ActionCreatePreparedStatementResult result = FlightSql.ActionCreatePreparedStatementResult
            .newBuilder()
            .setPreparedStatementHandle(ByteString.copyFromUtf8(request.getQuery()))
            .setDatasetSchema(serialize(schema(request.getQuery())))
            .setParameterSchema(serialize(new Schema(List.of())))
            .build();
        listener.onNext(new Result(Any.pack(result).toByteArray()));
        listener.onCompleted();
      } catch (RuntimeException e) {
        listener.onError(e);
      }
    }

    @Override
    public void closePreparedStatement(FlightSql.ActionClosePreparedStatementRequest request, CallContext context,
        StreamListener<Result> listener) {
      listener.onCompleted();
    }

    @Override
    public FlightInfo getFlightInfoPreparedStatement(FlightSql.CommandPreparedStatementQuery command,
        CallContext context, FlightDescriptor descriptor) {
      Ticket ticket = new Ticket(Any.pack(command).toByteArray());
      return new FlightInfo(schema(command.getPreparedStatementHandle().toStringUtf8()), descriptor,
          List.of(new FlightEndpoint(ticket)), -1, -1);
    }

    @Override
    public void getStreamPreparedStatement(FlightSql.CommandPreparedStatementQuery command, CallContext context,
        ServerStreamListener listener) {
      FlightPeer.stream(engine, allocator, spec(command.getPreparedStatementHandle().toStringUtf8()), listener);
    }

    @Override
    public FlightInfo getFlightInfoStatement(FlightSql.CommandStatementQuery command, CallContext context,
        FlightDescriptor descriptor) {
      FlightSql.TicketStatementQuery handle = FlightSql.TicketStatementQuery.newBuilder()
          .setStatementHandle(ByteString.copyFromUtf8(command.getQuery())).build();
      return new FlightInfo(schema(command.getQuery()), descriptor,
          List.of(new FlightEndpoint(new Ticket(Any.pack(handle).toByteArray()))), -1, -1);
    }

    @Override
    public void getStreamStatement(FlightSql.TicketStatementQuery ticket, CallContext context,
        ServerStreamListener listener) {
      FlightPeer.stream(engine, allocator, spec(ticket.getStatementHandle().toStringUtf8()), listener);
    }
  }
}
