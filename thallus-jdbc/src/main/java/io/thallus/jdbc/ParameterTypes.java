package io.thallus.jdbc;

import java.sql.ParameterMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * A statement's placeholders as the server's engine typed them (one Arrow field each), told as DuckDB's own driver
 * tells them: the JDBC type and DuckDB's name ({@link JdbcTypes}), a DECIMAL's precision and scale (0 for other
 * types), nullability unknown. A placeholder whose type the engine cannot tell before a value is bound is OTHER,
 * "ANY".
 */
final class ParameterTypes implements ParameterMetaData {
  private final List<Field> parameters;

  ParameterTypes(List<Field> parameters) {
    this.parameters = List.copyOf(parameters);
  }

  private Field field(int index) throws SQLException {
    if (index < 1 || index > parameters.size()) {
      throw Errors.invalid("parameter " + index + " is outside 1.." + parameters.size());
    }
    return parameters.get(index - 1);
  }

  private static boolean unknown(Field field) {
    return field.getType() instanceof ArrowType.Null;
  }

  @Override
  public int getParameterCount() {
    return parameters.size();
  }

  @Override
  public int isNullable(int index) throws SQLException {
    field(index);
    return parameterNullableUnknown;
  }

  @Override
  public boolean isSigned(int index) throws SQLException {
    Field field = field(index);
    return unknown(field) || JdbcTypes.of(field).signed();
  }

  @Override
  public int getPrecision(int index) throws SQLException {
    return field(index).getType() instanceof ArrowType.Decimal decimal ? decimal.getPrecision() : 0;
  }

  @Override
  public int getScale(int index) throws SQLException {
    return field(index).getType() instanceof ArrowType.Decimal decimal ? decimal.getScale() : 0;
  }

  @Override
  public int getParameterType(int index) throws SQLException {
    Field field = field(index);
    return unknown(field) ? Types.OTHER : JdbcTypes.of(field).sqlType();
  }

  @Override
  public String getParameterTypeName(int index) throws SQLException {
    Field field = field(index);
    return unknown(field) ? "ANY" : JdbcTypes.of(field).typeName();
  }

  @Override
  public String getParameterClassName(int index) throws SQLException {
    Field field = field(index);
    return unknown(field) ? Object.class.getName() : JdbcTypes.of(field).className();
  }

  @Override
  public int getParameterMode(int index) throws SQLException {
    field(index);
    return parameterModeIn;
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    return Errors.unwrap(this, type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return type.isInstance(this);
  }
}
