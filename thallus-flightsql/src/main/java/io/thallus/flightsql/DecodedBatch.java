package io.thallus.flightsql;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A batch with its dictionary-encoded columns replaced by their values (a copy of those columns only); the other
 * columns are the batch's own. Closing frees the decoded columns.
 */
final class DecodedBatch implements AutoCloseable {
  private final VectorSchemaRoot root;
  private final List<FieldVector> decoded;

  private DecodedBatch(VectorSchemaRoot root, List<FieldVector> decoded) {
    this.root = root;
    this.decoded = decoded;
  }

  static DecodedBatch of(VectorSchemaRoot batch, DictionaryProvider dictionaries) {
    List<Field> fields = new ArrayList<>();
    List<FieldVector> vectors = new ArrayList<>();
    List<FieldVector> decoded = new ArrayList<>();
    try {
      for (int i = 0; i < batch.getFieldVectors().size(); i++) {
        FieldVector vector = batch.getVector(i);
        // The schema's own fields, not the vectors': those name list children "$data$" where DuckDB says "l".
        Field field = batch.getSchema().getFields().get(i);
        if (field.getDictionary() == null) {
          fields.add(field);
          vectors.add(vector);
          continue;
        }
        Dictionary dictionary = dictionaries.lookup(field.getDictionary().getId());
        FieldVector values = (FieldVector) DictionaryEncoder.decode(vector, dictionary);
        decoded.add(values);
        fields.add(new Field(field.getName(), new FieldType(field.isNullable(), values.getField().getType(), null,
            field.getMetadata()), dictionary.getVector().getField().getChildren()));
        vectors.add(values);
      }
    } catch (RuntimeException e) {
      decoded.forEach(FieldVector::close);
      throw e;
    }
    VectorSchemaRoot root = new VectorSchemaRoot(fields, vectors);
    root.setRowCount(batch.getRowCount());
    return new DecodedBatch(root, decoded);
  }

  /**
   * The schema the client receives: dictionary columns as text (DuckDB's ENUMs are of strings), the rest as they
   * are. FlightInfo announces it, and a result without batches is sent with it.
   */
  static Schema schema(Schema encoded) {
    List<Field> fields = new ArrayList<>();
    for (Field field : encoded.getFields()) {
      fields.add(field.getDictionary() == null ? field
          : new Field(field.getName(), new FieldType(field.isNullable(), ArrowType.Utf8.INSTANCE, null,
              field.getMetadata()), List.of()));
    }
    return new Schema(fields, encoded.getCustomMetadata());
  }

  VectorSchemaRoot root() {
    return root;
  }

  @Override
  public void close() {
    decoded.forEach(FieldVector::close);
  }
}
