package io.thallus.flightsql;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.TransferPair;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/**
 * What every DoPut of the door shares: its batches on their way in, its answer and its failure. Every batch a client
 * puts (ingest rows, parameter rows) is moved into its session's memory as it arrives, so it counts against that
 * session's budget.
 */
final class DoPuts {
  private DoPuts() {}

  /** The work of a DoPut, which gRPC runs later: a failure is answered to the client as a Flight error. */
  static Runnable answering(StreamListener<PutResult> ack, Runnable work) {
    return () -> {
      try {
        work.run();
      } catch (RuntimeException e) {
        ack.onError(FlightErrors.of(e));
      }
    };
  }

  /**
   * A batch gRPC received into the door's memory, moved (not copied) into the session's, so that every DoPut batch
   * counts against the session's {@code memoryPerClient} as it arrives; one that takes the session past it is
   * refused with {@code RESOURCE_EXHAUSTED}.
   */
  static VectorSchemaRoot intoSessionMemory(VectorSchemaRoot batch, BufferAllocator session) {
    List<FieldVector> vectors = new ArrayList<>();
    for (FieldVector vector : batch.getFieldVectors()) {
      TransferPair transfer = vector.getTransferPair(session);
      // A transfer never fails for the target's limit (Arrow forces the accounting), so the limit is checked below.
      transfer.transfer();
      vectors.add((FieldVector) transfer.getTo());
    }
    VectorSchemaRoot moved = new VectorSchemaRoot(batch.getSchema(), vectors, batch.getRowCount());
    long held = session.getAllocatedMemory();
    if (held > session.getLimit()) {
      moved.close();
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "a DoPut batch took this session's Arrow memory to "
          + held + " bytes, over its budget of " + session.getLimit() + " bytes (memoryPerClient)");
    }
    return moved;
  }

  /** Every batch of a DoPut, in one root of the session's memory (null for none); the caller closes it. */
  static VectorSchemaRoot readAll(FlightStream flightStream, BufferAllocator session) {
    VectorSchemaRoot rows = null;
    try {
      while (flightStream.next()) {
        VectorSchemaRoot batch = flightStream.getRoot();
        if (rows == null) {
          rows = intoSessionMemory(batch, session);
        } else {
          VectorSchemaRootAppender.append(rows, batch);
        }
      }
      return rows;
    } catch (RuntimeException e) {
      if (rows != null) {
        rows.close();
      }
      throw e;
    }
  }

  /** Answers a DoPut with the rows it changed (Flight SQL's {@code DoPutUpdateResult}) and completes it. */
  static void acknowledge(StreamListener<PutResult> ack, long count, BufferAllocator allocator) {
    FlightSql.DoPutUpdateResult result = FlightSql.DoPutUpdateResult.newBuilder().setRecordCount(count).build();
    byte[] bytes = result.toByteArray();
    try (ArrowBuf buffer = allocator.buffer(bytes.length)) {
      buffer.writeBytes(bytes);
      ack.onNext(PutResult.metadata(buffer));
    }
    ack.onCompleted();
  }
}
