package io.thallus.internal.protocol;

import io.thallus.StatementDescription;
import io.thallus.StatementKind;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A {@link StatementDescription} on the wire: the answer to an OPEN with the DESCRIBE flag is a stream of one batch
 * of one row, {@code kind} (int8: the {@link StatementKind}'s wire value), {@code parameters} (binary: an Arrow IPC
 * Schema message with one field per placeholder, in order) and {@code result} (binary: the result's Arrow IPC
 * Schema message). The types travel as Arrow's own typed schema form, whatever they are (nested ones included),
 * and the row holds only plain values.
 */
public final class StatementDescriptions {
  static final String KIND = "kind";
  static final String PARAMETERS = "parameters";
  static final String RESULT = "result";
  /** The answer's schema: the same for every statement. */
  public static final Schema SCHEMA = new Schema(List.of(
      new Field(KIND, FieldType.notNullable(new ArrowType.Int(8, true)), null),
      new Field(PARAMETERS, FieldType.notNullable(ArrowType.Binary.INSTANCE), null),
      new Field(RESULT, FieldType.notNullable(ArrowType.Binary.INSTANCE), null)));

  private StatementDescriptions() {}

  /** The answer's one row (the caller closes it). */
  public static VectorSchemaRoot row(StatementDescription description, BufferAllocator allocator) {
    VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
    try {
      root.allocateNew();
      ((TinyIntVector) root.getVector(KIND)).setSafe(0, description.kind().wireValue());
      ((VarBinaryVector) root.getVector(PARAMETERS)).setSafe(0,
          new Schema(description.parameters()).serializeAsMessage());
      ((VarBinaryVector) root.getVector(RESULT)).setSafe(0, description.result().serializeAsMessage());
      root.setRowCount(1);
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  /** The description a server answered: the stream's one row. */
  public static StatementDescription read(Schema schema, VectorSchemaRoot row) {
    if (!SCHEMA.equals(schema) || row == null || row.getRowCount() != 1
        || !(row.getVector(KIND) instanceof TinyIntVector kind) || kind.isNull(0)
        || !(row.getVector(PARAMETERS) instanceof VarBinaryVector parameters) || parameters.isNull(0)
        || !(row.getVector(RESULT) instanceof VarBinaryVector result) || result.isNull(0)) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "the server's statement description is malformed: "
          + schema + (row == null ? " with no row" : " with " + row.getRowCount() + " rows"));
    }
    StatementKind statementKind = StatementKind.fromWireValue(kind.get(0));
    if (statementKind == null) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "the server described a statement of kind "
          + kind.get(0) + ", which this client does not know");
    }
    return new StatementDescription(statementKind, schemaOf(parameters.get(0), PARAMETERS).getFields(),
        schemaOf(result.get(0), RESULT));
  }

  private static Schema schemaOf(byte[] message, String what) {
    try {
      return Schema.deserializeMessage(ByteBuffer.wrap(message));
    } catch (RuntimeException e) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "the server's statement description has a " + what
          + " that is not an Arrow IPC Schema message: " + e.getMessage(), e);
    }
  }
}
