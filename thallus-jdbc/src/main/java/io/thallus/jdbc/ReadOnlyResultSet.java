package io.thallus.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.Ref;
import java.sql.ResultSet;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;

/**
 * What a forward-only, read-only result set refuses: every update, insert and delete, and the types Thallus never
 * produces (REF, ROWID, SQLXML, NCLOB, URL). Each throws SQLFeatureNotSupportedException naming the method.
 */
abstract class ReadOnlyResultSet implements ResultSet {
  @Override
  public void cancelRowUpdates() throws SQLException {
    throw Errors.unsupported("cancelRowUpdates");
  }

  @Override
  public void deleteRow() throws SQLException {
    throw Errors.unsupported("deleteRow");
  }

  @Override
  public String getCursorName() throws SQLException {
    throw Errors.unsupported("getCursorName");
  }

  @Override
  public NClob getNClob(String arg0) throws SQLException {
    throw Errors.unsupported("getNClob");
  }

  @Override
  public NClob getNClob(int arg0) throws SQLException {
    throw Errors.unsupported("getNClob");
  }

  @Override
  public Ref getRef(String arg0) throws SQLException {
    throw Errors.unsupported("getRef");
  }

  @Override
  public Ref getRef(int arg0) throws SQLException {
    throw Errors.unsupported("getRef");
  }

  @Override
  public RowId getRowId(String arg0) throws SQLException {
    throw Errors.unsupported("getRowId");
  }

  @Override
  public RowId getRowId(int arg0) throws SQLException {
    throw Errors.unsupported("getRowId");
  }

  @Override
  public SQLXML getSQLXML(String arg0) throws SQLException {
    throw Errors.unsupported("getSQLXML");
  }

  @Override
  public SQLXML getSQLXML(int arg0) throws SQLException {
    throw Errors.unsupported("getSQLXML");
  }

  @Override
  public java.net.URL getURL(String arg0) throws SQLException {
    throw Errors.unsupported("getURL");
  }

  @Override
  public java.net.URL getURL(int arg0) throws SQLException {
    throw Errors.unsupported("getURL");
  }

  @Override
  public void insertRow() throws SQLException {
    throw Errors.unsupported("insertRow");
  }

  @Override
  public void moveToCurrentRow() throws SQLException {
    throw Errors.unsupported("moveToCurrentRow");
  }

  @Override
  public void moveToInsertRow() throws SQLException {
    throw Errors.unsupported("moveToInsertRow");
  }

  @Override
  public void refreshRow() throws SQLException {
    throw Errors.unsupported("refreshRow");
  }

  @Override
  public boolean rowDeleted() throws SQLException {
    throw Errors.unsupported("rowDeleted");
  }

  @Override
  public boolean rowInserted() throws SQLException {
    throw Errors.unsupported("rowInserted");
  }

  @Override
  public boolean rowUpdated() throws SQLException {
    throw Errors.unsupported("rowUpdated");
  }

  @Override
  public void updateArray(String arg0, Array arg1) throws SQLException {
    throw Errors.unsupported("updateArray");
  }

  @Override
  public void updateArray(int arg0, Array arg1) throws SQLException {
    throw Errors.unsupported("updateArray");
  }

  @Override
  public void updateAsciiStream(String arg0, InputStream arg1, int arg2) throws SQLException {
    throw Errors.unsupported("updateAsciiStream");
  }

  @Override
  public void updateAsciiStream(String arg0, InputStream arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateAsciiStream");
  }

  @Override
  public void updateAsciiStream(String arg0, InputStream arg1) throws SQLException {
    throw Errors.unsupported("updateAsciiStream");
  }

  @Override
  public void updateAsciiStream(int arg0, InputStream arg1, int arg2) throws SQLException {
    throw Errors.unsupported("updateAsciiStream");
  }

  @Override
  public void updateAsciiStream(int arg0, InputStream arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateAsciiStream");
  }

  @Override
  public void updateAsciiStream(int arg0, InputStream arg1) throws SQLException {
    throw Errors.unsupported("updateAsciiStream");
  }

  @Override
  public void updateBigDecimal(String arg0, BigDecimal arg1) throws SQLException {
    throw Errors.unsupported("updateBigDecimal");
  }

  @Override
  public void updateBigDecimal(int arg0, BigDecimal arg1) throws SQLException {
    throw Errors.unsupported("updateBigDecimal");
  }

  @Override
  public void updateBinaryStream(String arg0, InputStream arg1, int arg2) throws SQLException {
    throw Errors.unsupported("updateBinaryStream");
  }

  @Override
  public void updateBinaryStream(String arg0, InputStream arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateBinaryStream");
  }

  @Override
  public void updateBinaryStream(String arg0, InputStream arg1) throws SQLException {
    throw Errors.unsupported("updateBinaryStream");
  }

  @Override
  public void updateBinaryStream(int arg0, InputStream arg1, int arg2) throws SQLException {
    throw Errors.unsupported("updateBinaryStream");
  }

  @Override
  public void updateBinaryStream(int arg0, InputStream arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateBinaryStream");
  }

  @Override
  public void updateBinaryStream(int arg0, InputStream arg1) throws SQLException {
    throw Errors.unsupported("updateBinaryStream");
  }

  @Override
  public void updateBlob(String arg0, InputStream arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateBlob");
  }

  @Override
  public void updateBlob(String arg0, InputStream arg1) throws SQLException {
    throw Errors.unsupported("updateBlob");
  }

  @Override
  public void updateBlob(String arg0, Blob arg1) throws SQLException {
    throw Errors.unsupported("updateBlob");
  }

  @Override
  public void updateBlob(int arg0, InputStream arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateBlob");
  }

  @Override
  public void updateBlob(int arg0, InputStream arg1) throws SQLException {
    throw Errors.unsupported("updateBlob");
  }

  @Override
  public void updateBlob(int arg0, Blob arg1) throws SQLException {
    throw Errors.unsupported("updateBlob");
  }

  @Override
  public void updateBoolean(String arg0, boolean arg1) throws SQLException {
    throw Errors.unsupported("updateBoolean");
  }

  @Override
  public void updateBoolean(int arg0, boolean arg1) throws SQLException {
    throw Errors.unsupported("updateBoolean");
  }

  @Override
  public void updateByte(String arg0, byte arg1) throws SQLException {
    throw Errors.unsupported("updateByte");
  }

  @Override
  public void updateByte(int arg0, byte arg1) throws SQLException {
    throw Errors.unsupported("updateByte");
  }

  @Override
  public void updateBytes(String arg0, byte[] arg1) throws SQLException {
    throw Errors.unsupported("updateBytes");
  }

  @Override
  public void updateBytes(int arg0, byte[] arg1) throws SQLException {
    throw Errors.unsupported("updateBytes");
  }

  @Override
  public void updateCharacterStream(String arg0, Reader arg1, int arg2) throws SQLException {
    throw Errors.unsupported("updateCharacterStream");
  }

  @Override
  public void updateCharacterStream(String arg0, Reader arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateCharacterStream");
  }

  @Override
  public void updateCharacterStream(String arg0, Reader arg1) throws SQLException {
    throw Errors.unsupported("updateCharacterStream");
  }

  @Override
  public void updateCharacterStream(int arg0, Reader arg1, int arg2) throws SQLException {
    throw Errors.unsupported("updateCharacterStream");
  }

  @Override
  public void updateCharacterStream(int arg0, Reader arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateCharacterStream");
  }

  @Override
  public void updateCharacterStream(int arg0, Reader arg1) throws SQLException {
    throw Errors.unsupported("updateCharacterStream");
  }

  @Override
  public void updateClob(String arg0, Reader arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateClob");
  }

  @Override
  public void updateClob(String arg0, Reader arg1) throws SQLException {
    throw Errors.unsupported("updateClob");
  }

  @Override
  public void updateClob(String arg0, Clob arg1) throws SQLException {
    throw Errors.unsupported("updateClob");
  }

  @Override
  public void updateClob(int arg0, Reader arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateClob");
  }

  @Override
  public void updateClob(int arg0, Reader arg1) throws SQLException {
    throw Errors.unsupported("updateClob");
  }

  @Override
  public void updateClob(int arg0, Clob arg1) throws SQLException {
    throw Errors.unsupported("updateClob");
  }

  @Override
  public void updateDate(String arg0, Date arg1) throws SQLException {
    throw Errors.unsupported("updateDate");
  }

  @Override
  public void updateDate(int arg0, Date arg1) throws SQLException {
    throw Errors.unsupported("updateDate");
  }

  @Override
  public void updateDouble(String arg0, double arg1) throws SQLException {
    throw Errors.unsupported("updateDouble");
  }

  @Override
  public void updateDouble(int arg0, double arg1) throws SQLException {
    throw Errors.unsupported("updateDouble");
  }

  @Override
  public void updateFloat(String arg0, float arg1) throws SQLException {
    throw Errors.unsupported("updateFloat");
  }

  @Override
  public void updateFloat(int arg0, float arg1) throws SQLException {
    throw Errors.unsupported("updateFloat");
  }

  @Override
  public void updateInt(String arg0, int arg1) throws SQLException {
    throw Errors.unsupported("updateInt");
  }

  @Override
  public void updateInt(int arg0, int arg1) throws SQLException {
    throw Errors.unsupported("updateInt");
  }

  @Override
  public void updateLong(String arg0, long arg1) throws SQLException {
    throw Errors.unsupported("updateLong");
  }

  @Override
  public void updateLong(int arg0, long arg1) throws SQLException {
    throw Errors.unsupported("updateLong");
  }

  @Override
  public void updateNCharacterStream(String arg0, Reader arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateNCharacterStream");
  }

  @Override
  public void updateNCharacterStream(String arg0, Reader arg1) throws SQLException {
    throw Errors.unsupported("updateNCharacterStream");
  }

  @Override
  public void updateNCharacterStream(int arg0, Reader arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateNCharacterStream");
  }

  @Override
  public void updateNCharacterStream(int arg0, Reader arg1) throws SQLException {
    throw Errors.unsupported("updateNCharacterStream");
  }

  @Override
  public void updateNClob(String arg0, Reader arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateNClob");
  }

  @Override
  public void updateNClob(String arg0, Reader arg1) throws SQLException {
    throw Errors.unsupported("updateNClob");
  }

  @Override
  public void updateNClob(String arg0, NClob arg1) throws SQLException {
    throw Errors.unsupported("updateNClob");
  }

  @Override
  public void updateNClob(int arg0, Reader arg1, long arg2) throws SQLException {
    throw Errors.unsupported("updateNClob");
  }

  @Override
  public void updateNClob(int arg0, Reader arg1) throws SQLException {
    throw Errors.unsupported("updateNClob");
  }

  @Override
  public void updateNClob(int arg0, NClob arg1) throws SQLException {
    throw Errors.unsupported("updateNClob");
  }

  @Override
  public void updateNString(String arg0, String arg1) throws SQLException {
    throw Errors.unsupported("updateNString");
  }

  @Override
  public void updateNString(int arg0, String arg1) throws SQLException {
    throw Errors.unsupported("updateNString");
  }

  @Override
  public void updateNull(String arg0) throws SQLException {
    throw Errors.unsupported("updateNull");
  }

  @Override
  public void updateNull(int arg0) throws SQLException {
    throw Errors.unsupported("updateNull");
  }

  @Override
  public void updateObject(String arg0, Object arg1, int arg2) throws SQLException {
    throw Errors.unsupported("updateObject");
  }

  @Override
  public void updateObject(String arg0, Object arg1) throws SQLException {
    throw Errors.unsupported("updateObject");
  }

  @Override
  public void updateObject(int arg0, Object arg1, int arg2) throws SQLException {
    throw Errors.unsupported("updateObject");
  }

  @Override
  public void updateObject(int arg0, Object arg1) throws SQLException {
    throw Errors.unsupported("updateObject");
  }

  @Override
  public void updateRef(String arg0, Ref arg1) throws SQLException {
    throw Errors.unsupported("updateRef");
  }

  @Override
  public void updateRef(int arg0, Ref arg1) throws SQLException {
    throw Errors.unsupported("updateRef");
  }

  @Override
  public void updateRow() throws SQLException {
    throw Errors.unsupported("updateRow");
  }

  @Override
  public void updateRowId(String arg0, RowId arg1) throws SQLException {
    throw Errors.unsupported("updateRowId");
  }

  @Override
  public void updateRowId(int arg0, RowId arg1) throws SQLException {
    throw Errors.unsupported("updateRowId");
  }

  @Override
  public void updateSQLXML(String arg0, SQLXML arg1) throws SQLException {
    throw Errors.unsupported("updateSQLXML");
  }

  @Override
  public void updateSQLXML(int arg0, SQLXML arg1) throws SQLException {
    throw Errors.unsupported("updateSQLXML");
  }

  @Override
  public void updateShort(String arg0, short arg1) throws SQLException {
    throw Errors.unsupported("updateShort");
  }

  @Override
  public void updateShort(int arg0, short arg1) throws SQLException {
    throw Errors.unsupported("updateShort");
  }

  @Override
  public void updateString(String arg0, String arg1) throws SQLException {
    throw Errors.unsupported("updateString");
  }

  @Override
  public void updateString(int arg0, String arg1) throws SQLException {
    throw Errors.unsupported("updateString");
  }

  @Override
  public void updateTime(String arg0, Time arg1) throws SQLException {
    throw Errors.unsupported("updateTime");
  }

  @Override
  public void updateTime(int arg0, Time arg1) throws SQLException {
    throw Errors.unsupported("updateTime");
  }

  @Override
  public void updateTimestamp(String arg0, Timestamp arg1) throws SQLException {
    throw Errors.unsupported("updateTimestamp");
  }

  @Override
  public void updateTimestamp(int arg0, Timestamp arg1) throws SQLException {
    throw Errors.unsupported("updateTimestamp");
  }

}
