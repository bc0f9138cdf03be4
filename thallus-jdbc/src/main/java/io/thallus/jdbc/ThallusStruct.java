package io.thallus.jdbc;

import java.sql.SQLException;
import java.sql.Struct;
import java.util.Map;

/** A STRUCT value: its fields' values in order, as {@code getObject} gives them. */
final class ThallusStruct implements Struct {
  private final ColumnReader.StructValue value;

  ThallusStruct(ColumnReader.StructValue value) {
    this.value = value;
  }

  @Override
  public String getSQLTypeName() {
    return "STRUCT";
  }

  @Override
  public Object[] getAttributes() {
    Object[] attributes = new Object[value.values().size()];
    for (int i = 0; i < attributes.length; i++) {
      attributes[i] = Values.toJdbc(value.values().get(i));
    }
    return attributes;
  }

  @Override
  public Object[] getAttributes(Map<String, Class<?>> map) throws SQLException {
    throw Errors.unsupported("custom type maps", "values map to their standard Java types");
  }

  @Override
  public String toString() {
    return Values.format(value);
  }
}
