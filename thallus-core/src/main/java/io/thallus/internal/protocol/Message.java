package io.thallus.internal.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCounted;
import io.thallus.StatusCode;
import io.thallus.spi.BatchHeader;
import java.util.List;
import java.util.Map;

/** The control protocol's messages, one record per message type. See {@link MessageCodec} for the bytes. */
public sealed interface Message {
  MessageType type();

  /** Client → server, first: who speaks, which protocol version, which transports it offers. */
  record Hello(int version, String clientName, List<String> transports, Map<String, String> parameters,
      Map<String, String> credentials) implements Message {
    public Hello {
      transports = List.copyOf(transports);
      parameters = Map.copyOf(parameters);
      credentials = Map.copyOf(credentials);
    }

    @Override
    public MessageType type() {
      return MessageType.HELLO;
    }
  }

  /** Server → client: the chosen transport and the server's parameters for it. */
  record Welcome(int version, String transport, Map<String, String> parameters, String serverName)
      implements Message {
    public Welcome {
      parameters = Map.copyOf(parameters);
    }

    @Override
    public MessageType type() {
      return MessageType.WELCOME;
    }
  }

  /**
   * Client → server: start a stream. {@code dataset} is empty for none; {@code timeoutMillis} 0 for none;
   * {@code parameters} are {@link QueryParameters#normalize normalized} values for the SQL's {@code ?}s;
   * {@code parameterRows}, with the flag {@link #PARAMETER_ROWS}, an Arrow IPC stream of many rows of them (one
   * column per {@code ?}), for running the statement once per row in one request.
   */
  record Open(int streamId, String sql, String dataset, int batchRows, int credits, long timeoutMillis, int flags,
      List<Object> parameters, Map<String, String> options, byte[] parameterRows, int parts) implements Message {
    /** Flag: answer OPENED (the schema) and END without producing any row. */
    public static final int SCHEMA_ONLY = 1;
    /** Flag: the frame ends with rows of parameters ({@link #parameterRows}). */
    public static final int PARAMETER_ROWS = 2;
    /** Flag: run in the session's transaction, begun first if none is open (auto-commit off). */
    public static final int IN_TRANSACTION = 4;
    /**
     * Flag: answer the statement's {@link io.thallus.StatementDescription} (see {@link StatementDescriptions})
     * instead of running it.
     */
    public static final int DESCRIBE_STATEMENT = 8;
    /**
     * Flag: the frame ends with a part count n (u16, 2 to {@link #MAX_PARTS}): the answer comes on the n stream ids
     * from {@code streamId} on, as parallel streams of one result (see docs/protocol.md).
     */
    public static final int SPLIT = 16;
    /** Every flag this version knows. */
    public static final int KNOWN_FLAGS = SCHEMA_ONLY | PARAMETER_ROWS | IN_TRANSACTION | DESCRIBE_STATEMENT | SPLIT;
    /** The most parallel streams one OPEN may ask for. */
    public static final int MAX_PARTS = 64;

    public Open {
      parameters = List.copyOf(parameters);
      options = Map.copyOf(options);
      if (((flags & PARAMETER_ROWS) != 0) != (parameterRows.length > 0)) {
        throw new IllegalArgumentException("the PARAMETER_ROWS flag and the parameter rows go together");
      }
      if (parts < 1 || parts > MAX_PARTS || ((flags & SPLIT) != 0) != (parts > 1)) {
        throw new IllegalArgumentException("an OPEN asks for 1 to " + MAX_PARTS + " streams, the SPLIT flag exactly "
            + "when more than one; got " + parts);
      }
      if (parts > 1 && streamId > Integer.MAX_VALUE - parts + 1) {
        throw new IllegalArgumentException("stream ids " + streamId + " and the " + (parts - 1) + " after it overflow");
      }
    }

    public Open(int streamId, String sql, String dataset, int batchRows, int credits, long timeoutMillis, int flags,
        List<Object> parameters, Map<String, String> options, byte[] parameterRows) {
      this(streamId, sql, dataset, batchRows, credits, timeoutMillis, flags, parameters, options, parameterRows, 1);
    }

    public Open(int streamId, String sql, String dataset, int batchRows, int credits, long timeoutMillis, int flags,
        List<Object> parameters, Map<String, String> options) {
      this(streamId, sql, dataset, batchRows, credits, timeoutMillis, flags, parameters, options, new byte[0]);
    }

    public Open(int streamId, String sql, String dataset, int batchRows, int credits, long timeoutMillis,
        Map<String, String> options) {
      this(streamId, sql, dataset, batchRows, credits, timeoutMillis, 0, List.of(), options);
    }

    public boolean schemaOnly() {
      return (flags & SCHEMA_ONLY) != 0;
    }

    public boolean inTransaction() {
      return (flags & IN_TRANSACTION) != 0;
    }

    public boolean describeStatement() {
      return (flags & DESCRIBE_STATEMENT) != 0;
    }

    /** Equal when every field is, the rows of parameters compared by their bytes. */
    @Override
    public boolean equals(Object other) {
      return other instanceof Open o && streamId == o.streamId && sql.equals(o.sql) && dataset.equals(o.dataset)
          && batchRows == o.batchRows && credits == o.credits && timeoutMillis == o.timeoutMillis
          && flags == o.flags && parameters.equals(o.parameters) && options.equals(o.options)
          && java.util.Arrays.equals(parameterRows, o.parameterRows) && parts == o.parts;
    }

    @Override
    public int hashCode() {
      return java.util.Objects.hash(streamId, sql, dataset, batchRows, credits, timeoutMillis, flags, parameters,
          options, java.util.Arrays.hashCode(parameterRows), parts);
    }

    @Override
    public String toString() {
      return "Open[streamId=" + streamId + ", sql=" + sql + ", dataset=" + dataset + ", batchRows=" + batchRows
          + ", credits=" + credits + ", timeoutMillis=" + timeoutMillis + ", flags=" + flags + ", parameters="
          + parameters + ", options=" + options + ", parameterRows=" + parameterRows.length + " bytes, parts=" + parts
          + "]";
    }

    @Override
    public MessageType type() {
      return MessageType.OPEN;
    }
  }

  /** Server → client: the stream's Arrow schema, as an IPC Schema message. */
  record Opened(int streamId, byte[] schema) implements Message {
    @Override
    public MessageType type() {
      return MessageType.OPENED;
    }
  }

  /** Client → server: grant {@code credits} more batches and report the batches the client released. */
  record Next(int streamId, int credits, long[] releases) implements Message {
    @Override
    public MessageType type() {
      return MessageType.NEXT;
    }
  }

  /**
   * Server → client: one batch's layout, plus transport-defined inline bytes. Reference-counted through
   * {@code inline}, so Netty releases the bytes of a message it cannot write and handlers release what they read.
   */
  record Batch(BatchHeader header, ByteBuf inline) implements Message, ReferenceCounted {
    public Batch(BatchHeader header) {
      this(header, Unpooled.EMPTY_BUFFER);
    }

    @Override
    public MessageType type() {
      return MessageType.BATCH;
    }

    @Override
    public int refCnt() {
      return inline.refCnt();
    }

    @Override
    public Batch retain() {
      inline.retain();
      return this;
    }

    @Override
    public Batch retain(int increment) {
      inline.retain(increment);
      return this;
    }

    @Override
    public Batch touch() {
      inline.touch();
      return this;
    }

    @Override
    public Batch touch(Object hint) {
      inline.touch(hint);
      return this;
    }

    @Override
    public boolean release() {
      return inline.release();
    }

    @Override
    public boolean release(int decrement) {
      return inline.release(decrement);
    }
  }

  /** Server → client: the stream is complete. */
  record End(int streamId, long rows, long batches, long bytes, long serverNanos, long serverCpuNanos)
      implements Message {
    @Override
    public MessageType type() {
      return MessageType.END;
    }
  }

  /** Either way: a failure. {@code streamId} 0 concerns the whole connection, which then closes. */
  record Error(int streamId, StatusCode code, String message) implements Message {
    @Override
    public MessageType type() {
      return MessageType.ERROR;
    }
  }

  /** Client → server: stop the stream; the server answers with ERROR(CANCELLED) once it has stopped. */
  record Cancel(int streamId) implements Message {
    @Override
    public MessageType type() {
      return MessageType.CANCEL;
    }
  }

  /**
   * Client → server: start a stream of batches into {@code table}. {@code mode} is an {@link io.thallus.IngestMode}'s
   * wire value; {@code schema} the batches' Arrow schema as an IPC Schema message; {@code credits} how many batches
   * the client would like in flight (the server grants what it allows with NEXT). The client then sends BATCH
   * frames on this stream (each within the credits the server granted) and END when it has sent the last; the
   * server answers END with the rows it wrote, or ERROR. {@code flags}: {@link #IN_TRANSACTION}. {@code insertStatement}
   * (empty for none) makes the batches rows of parameters for that {@code INSERT ... VALUES (?, ...)}. {@code options}
   * carry, prefixed with the transport's name, the parameters of the client's side of the write direction.
   */
  record Ingest(int streamId, String table, int mode, int credits, long timeoutMillis, byte[] schema, int flags,
      String insertStatement, Map<String, String> options) implements Message {
    /** Flag: write in the session's transaction, begun first if none is open (auto-commit off). */
    public static final int IN_TRANSACTION = 1;

    public Ingest {
      options = Map.copyOf(options);
    }

    public Ingest(int streamId, String table, int mode, int credits, long timeoutMillis, byte[] schema,
        Map<String, String> options) {
      this(streamId, table, mode, credits, timeoutMillis, schema, 0, "", options);
    }

    public boolean inTransaction() {
      return (flags & IN_TRANSACTION) != 0;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Ingest o && streamId == o.streamId && table.equals(o.table) && mode == o.mode
          && credits == o.credits && timeoutMillis == o.timeoutMillis && java.util.Arrays.equals(schema, o.schema)
          && flags == o.flags && insertStatement.equals(o.insertStatement) && options.equals(o.options);
    }

    @Override
    public int hashCode() {
      return java.util.Objects.hash(streamId, table, mode, credits, timeoutMillis, java.util.Arrays.hashCode(schema),
          flags, insertStatement, options);
    }

    @Override
    public String toString() {
      return "Ingest[streamId=" + streamId + ", table=" + table + ", mode=" + mode + ", credits=" + credits
          + ", timeoutMillis=" + timeoutMillis + ", schema=" + schema.length + " bytes, flags=" + flags
          + ", insertStatement=" + insertStatement + ", options=" + options + "]";
    }

    @Override
    public MessageType type() {
      return MessageType.INGEST;
    }
  }

  /** Client → server: the client is done with the stream; the server frees it and does not answer. */
  record Close(int streamId) implements Message {
    @Override
    public MessageType type() {
      return MessageType.CLOSE;
    }
  }

  /**
   * Client → server: what is {@code name} (a table, a view, or {@code dataset} for the request's files)? With
   * {@code dataset} not empty, the name is looked up with that dataset bound, as an OPEN with it would see it. The
   * server answers DESCRIBED or ERROR on the same stream id, which is free again after the answer.
   */
  record Describe(int streamId, String name, String dataset) implements Message {
    @Override
    public MessageType type() {
      return MessageType.DESCRIBE;
    }
  }

  /** Server → client: the answer to DESCRIBE. */
  record Described(int streamId, io.thallus.DatasetDescription description) implements Message {
    @Override
    public MessageType type() {
      return MessageType.DESCRIBED;
    }
  }

  /**
   * Client → server: which sharded datasets does the server declare parts of? The server answers SHARDS or ERROR on
   * the same stream id, which is free again after the answer.
   */
  record ListShards(int streamId) implements Message {
    @Override
    public MessageType type() {
      return MessageType.LIST_SHARDS;
    }
  }

  /** Server → client: the answer to LIST_SHARDS, the declared names in declaration order. */
  record Shards(int streamId, java.util.List<String> names) implements Message {
    public Shards {
      names = java.util.List.copyOf(names);
    }

    @Override
    public MessageType type() {
      return MessageType.SHARDS;
    }
  }
}
