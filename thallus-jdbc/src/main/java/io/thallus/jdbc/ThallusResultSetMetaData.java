package io.thallus.jdbc;

import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Field;

/** A result's columns, described from its Arrow schema (see {@link JdbcTypes} for the mapping). */
final class ThallusResultSetMetaData implements ResultSetMetaData {
  private final List<Field> fields;
  private final List<JdbcTypes> types;

  ThallusResultSetMetaData(List<Field> fields) {
    this.fields = List.copyOf(fields);
    this.types = fields.stream().map(JdbcTypes::of).toList();
  }

  private Field field(int column) throws SQLException {
    if (column < 1 || column > fields.size()) {
      throw Errors.badColumn("column " + column + " is outside 1.." + fields.size());
    }
    return fields.get(column - 1);
  }

  private JdbcTypes type(int column) throws SQLException {
    field(column);
    return types.get(column - 1);
  }

  @Override
  public int getColumnCount() {
    return fields.size();
  }

  @Override
  public boolean isAutoIncrement(int column) throws SQLException {
    field(column);
    return false;
  }

  @Override
  public boolean isCaseSensitive(int column) throws SQLException {
    int sqlType = type(column).sqlType();
    return sqlType == Types.VARCHAR || sqlType == Types.OTHER;
  }

  @Override
  public boolean isSearchable(int column) throws SQLException {
    field(column);
    return true;
  }

  @Override
  public boolean isCurrency(int column) throws SQLException {
    field(column);
    return false;
  }

  @Override
  public int isNullable(int column) throws SQLException {
    return field(column).isNullable() ? columnNullable : columnNoNulls;
  }

  @Override
  public boolean isSigned(int column) throws SQLException {
    return type(column).signed();
  }

  @Override
  public int getColumnDisplaySize(int column) throws SQLException {
    return type(column).displaySize();
  }

  @Override
  public String getColumnLabel(int column) throws SQLException {
    return field(column).getName();
  }

  @Override
  public String getColumnName(int column) throws SQLException {
    return field(column).getName();
  }

  @Override
  public String getSchemaName(int column) throws SQLException {
    field(column);
    return "";
  }

  @Override
  public int getPrecision(int column) throws SQLException {
    return type(column).precision();
  }

  @Override
  public int getScale(int column) throws SQLException {
    return type(column).scale();
  }

  @Override
  public String getTableName(int column) throws SQLException {
    field(column);
    return "";
  }

  @Override
  public String getCatalogName(int column) throws SQLException {
    field(column);
    return "";
  }

  @Override
  public int getColumnType(int column) throws SQLException {
    return type(column).sqlType();
  }

  @Override
  public String getColumnTypeName(int column) throws SQLException {
    return JdbcTypes.name(field(column));
  }

  @Override
  public boolean isReadOnly(int column) throws SQLException {
    field(column);
    return true;
  }

  @Override
  public boolean isWritable(int column) throws SQLException {
    field(column);
    return false;
  }

  @Override
  public boolean isDefinitelyWritable(int column) throws SQLException {
    field(column);
    return false;
  }

  @Override
  public String getColumnClassName(int column) throws SQLException {
    return type(column).className();
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    throw Errors.invalid("not a " + type.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return type.isInstance(this);
  }
}
