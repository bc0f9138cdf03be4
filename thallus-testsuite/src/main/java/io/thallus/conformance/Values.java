package io.thallus.conformance;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.util.Text;

/** Reads Arrow values into plain, comparable Java values (byte arrays as hex, dictionaries decoded). */
public final class Values {
  private Values() {}

  /** Every row of {@code root} as a list of column values. */
  public static void appendRows(VectorSchemaRoot root, DictionaryProvider dictionaries, List<List<Object>> out) {
    for (int row = 0; row < root.getRowCount(); row++) {
      List<Object> values = new ArrayList<>(root.getFieldVectors().size());
      for (FieldVector vector : root.getFieldVectors()) {
        values.add(value(vector, row, dictionaries));
      }
      out.add(values);
    }
  }

  static Object value(FieldVector vector, int row, DictionaryProvider dictionaries) {
    if (vector.isNull(row)) {
      return null;
    }
    DictionaryEncoding encoding = vector.getField().getDictionary();
    if (encoding != null) {
      Dictionary dictionary = dictionaries.lookup(encoding.getId());
      if (dictionary == null) {
        throw new AssertionError("no dictionary " + encoding.getId() + " for " + vector.getField());
      }
      long index = ((BaseIntVector) vector).getValueAsLong(row);
      return normalize(dictionary.getVector().getObject((int) index));
    }
    return normalize(vector.getObject(row));
  }

  static Object normalize(Object value) {
    if (value == null) {
      return null;
    }
    if (value instanceof byte[] bytes) {
      return "0x" + HexFormat.of().formatHex(bytes);
    }
    if (value instanceof Text text) {
      return text.toString();
    }
    if (value instanceof List<?> list) {
      List<Object> copy = new ArrayList<>(list.size());
      for (Object item : list) {
        copy.add(normalize(item));
      }
      return copy;
    }
    if (value instanceof Map<?, ?> map) {
      Map<String, Object> copy = new TreeMap<>();
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        copy.put(String.valueOf(entry.getKey()), normalize(entry.getValue()));
      }
      return copy;
    }
    return value;
  }
}
