package io.thallus.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatementDescription;
import io.thallus.StatementKind;
import io.thallus.ThallusException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/** A statement description survives its wire form (Arrow IPC: schema and one row), whatever types it carries. */
class StatementDescriptionsTest {
  @Test
  void aDescriptionRoundTripsThroughArrowIpc() throws Exception {
    Field list = new Field("tags", FieldType.nullable(ArrowType.List.INSTANCE),
        List.of(new Field("item", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
    Field struct = new Field("point", FieldType.notNullable(ArrowType.Struct.INSTANCE),
        List.of(new Field("x", FieldType.notNullable(new ArrowType.FloatingPoint(
            org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE)), null)));
    StatementDescription description = new StatementDescription(StatementKind.QUERY,
        List.of(new Field("parameter_1", FieldType.nullable(new ArrowType.Int(32, true)), null),
            new Field("parameter_2", FieldType.nullable(new ArrowType.Decimal(12, 3, 128)), null),
            new Field("parameter_3", FieldType.nullable(ArrowType.Null.INSTANCE), null)),
        new Schema(List.of(new Field("day", FieldType.nullable(new ArrowType.Date(DateUnit.DAY)), null),
            new Field("at", FieldType.notNullable(new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")), null),
            list, struct)));
    for (StatementDescription each : List.of(description,
        new StatementDescription(StatementKind.COMMAND, List.of(), new Schema(List.of())),
        new StatementDescription(StatementKind.UPDATE, description.parameters(), new Schema(List.of())))) {
      assertThat(throughIpc(each)).isEqualTo(each);
    }
  }

  @Test
  void anAnswerOfAnotherShapeIsAProtocolError() {
    assertThatThrownBy(() -> StatementDescriptions.read(new Schema(List.of()), null))
        .isInstanceOf(ThallusException.class).hasMessageContaining("malformed");
  }

  private static StatementDescription throughIpc(StatementDescription description) throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (VectorSchemaRoot row = StatementDescriptions.row(description, allocator);
           ArrowStreamWriter writer = new ArrowStreamWriter(row, null, bytes)) {
        writer.start();
        writer.writeBatch();
        writer.end();
      }
      try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(bytes.toByteArray()),
          allocator)) {
        assertThat(reader.loadNextBatch()).isTrue();
        return StatementDescriptions.read(reader.getVectorSchemaRoot().getSchema(), reader.getVectorSchemaRoot());
      }
    }
  }
}
