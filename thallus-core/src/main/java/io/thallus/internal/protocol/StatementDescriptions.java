package io.thallus.internal.protocol;

import io.thallus.StatementDescription;
import io.thallus.StatementKind;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A {@link StatementDescription} on the wire: the answer to an OPEN with the DESCRIBE flag is a stream whose schema
 * carries the types (a struct field {@code parameters} with one child per placeholder, a struct field {@code result}
 * with the statement's result columns) and whose one batch of one row carries the kind ({@code kind}, int8: the
 * {@link StatementKind}'s wire value; both structs null).
 */
public final class StatementDescriptions {
  static final String KIND = "kind";
  static final String PARAMETERS = "parameters";
  static final String RESULT = "result";

  private StatementDescriptions() {}

  /** The answer's schema. */
  public static Schema schema(StatementDescription description) {
    return new Schema(List.of(
        new Field(KIND, FieldType.notNullable(new ArrowType.Int(8, true)), null),
        new Field(PARAMETERS, FieldType.nullable(ArrowType.Struct.INSTANCE), description.parameters()),
        new Field(RESULT, FieldType.nullable(ArrowType.Struct.INSTANCE), description.result().getFields())));
  }

  /** The answer's one row (the caller closes it). */
  public static VectorSchemaRoot row(StatementDescription description, BufferAllocator allocator) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema(description), allocator);
    try {
      root.allocateNew();
      ((TinyIntVector) root.getVector(KIND)).setSafe(0, description.kind().wireValue());
      ((StructVector) root.getVector(PARAMETERS)).setNull(0);
      ((StructVector) root.getVector(RESULT)).setNull(0);
      root.setRowCount(1);
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  /** The description a server answered: its schema, and the batch that carries the kind. */
  public static StatementDescription read(Schema schema, VectorSchemaRoot row) {
    List<Field> fields = schema.getFields();
    if (fields.size() != 3 || !fields.get(0).getName().equals(KIND) || !fields.get(1).getName().equals(PARAMETERS)
        || !fields.get(2).getName().equals(RESULT) || row == null || row.getRowCount() != 1
        || !(row.getVector(KIND) instanceof TinyIntVector kindVector) || kindVector.isNull(0)) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "the server's statement description is malformed: "
          + schema);
    }
    StatementKind kind = StatementKind.fromWireValue(kindVector.get(0));
    if (kind == null) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "the server described a statement of kind "
          + kindVector.get(0) + ", which this client does not know");
    }
    return new StatementDescription(kind, fields.get(1).getChildren(), new Schema(fields.get(2).getChildren()));
  }
}
