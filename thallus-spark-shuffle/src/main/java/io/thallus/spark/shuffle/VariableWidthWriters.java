package io.thallus.spark.shuffle;

import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The {@link ColumnWriter}s of strings and binaries: the bytes are copied to the end of the data buffer, which
 * grows by doubling when a value does not fit, and the row's end offset is put after them; a null repeats the
 * previous offset.
 */
final class VariableWidthWriters {
  /** Arrow's utf8 and binary columns (Spark's mapping) have 32-bit offsets. */
  private static final long MAX_DATA_BYTES = Integer.MAX_VALUE;

  private VariableWidthWriters() {}

  abstract static class VariableWidth extends ColumnWriter {
    private final BaseVariableWidthVector variable;
    private long offsets;
    long data;
    private long dataCapacity;
    int end;

    VariableWidth(BaseVariableWidthVector vector) {
      super(vector);
      this.variable = vector;
    }

    /**
     * An Arrow source of 32-bit offsets is copied value by value from its data buffer, after one pass that sums the
     * lengths so the data buffer grows at most once; any other is read by its getters. A null copies no bytes,
     * whatever length the source gives it. The source's offsets were checked once for the batch ({@link
     * ColumnSource#of}): from 0 up, never backwards, within its data.
     */
    @Override
    void copy(ColumnSource source, int[] rowIds, int from, int to, int index) {
      if (source.layout != ColumnSource.Layout.VARIABLE) {
        super.copy(source, rowIds, from, to, index);
        return;
      }
      boolean nulls = source.nulls;
      long offsetsFrom = source.offsets;
      long total = 0;
      for (int i = from; i < to; i++) {
        int row = rowIds[i];
        if (!nulls || source.valid(row)) {
          total += MemoryUtil.getInt(offsetsFrom + 4L * row + 4) - MemoryUtil.getInt(offsetsFrom + 4L * row);
        }
      }
      reserve(total);
      for (int i = from; i < to; i++, index++) {
        int row = rowIds[i];
        if (nulls && !source.valid(row)) {
          writeNull(index);
          continue;
        }
        setValid(index);
        int start = MemoryUtil.getInt(offsetsFrom + 4L * row);
        int length = MemoryUtil.getInt(offsetsFrom + 4L * row + 4) - start;
        copyBytes(source.values + start, data + end, length);
        putEnd(index, length);
      }
    }

    /**
     * {@code length} bytes from {@code from} to {@code to}; a short value word by word, since Unsafe's copyMemory
     * costs more than such a copy itself (no read or write past either end).
     */
    private static void copyBytes(long from, long to, int length) {
      if (length > 64) {
        MemoryUtil.copyMemory(from, to, length);
        return;
      }
      int i = 0;
      for (; i + 8 <= length; i += 8) {
        MemoryUtil.putLong(to + i, MemoryUtil.getLong(from + i));
      }
      for (; i < length; i++) {
        MemoryUtil.putByte(to + i, MemoryUtil.getByte(from + i));
      }
    }

    /** Makes room for {@code length} more bytes; returns where they go. */
    final long reserve(long length) {
      long needed = end + length;
      if (needed > dataCapacity) {
        if (needed > MAX_DATA_BYTES) {
          throw new IllegalStateException("One batch of a reduce partition passed 2 GiB in a string or binary"
              + " column; lower spark.thallus.shuffle.batchRows");
        }
        variable.reallocDataBuffer(Math.max(needed, 2 * dataCapacity));
        addressesChanged();
      }
      return data + end;
    }

    final void putEnd(int index, int length) {
      end += length;
      MemoryUtil.putInt(offsets + 4L * (index + 1), end);
    }

    @Override
    void writeNull(int index) {
      MemoryUtil.putInt(offsets + 4L * (index + 1), end);
    }

    @Override
    void ensureRows(int rows) {
      while (variable.getValueCapacity() < rows) {
        variable.reallocValidityAndOffsetBuffers();
      }
      addressesChanged();
    }

    @Override
    void finish(int rows) {
      variable.setLastSet(rows - 1);
    }

    @Override
    void reset() {
      super.reset();
      end = 0;
    }

    @Override
    void addressesChanged() {
      super.addressesChanged();
      offsets = variable.getOffsetBuffer().memoryAddress();
      data = variable.getDataBuffer().memoryAddress();
      dataCapacity = variable.getDataBuffer().capacity();
    }
  }

  static final class Strings extends VariableWidth {
    Strings(BaseVariableWidthVector vector) {
      super(vector);
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      put(row.getUTF8String(ordinal), index);
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      put(column.getUTF8String(rowId), index);
    }

    private void put(UTF8String value, int index) {
      int length = value.numBytes();
      long to = reserve(length);
      Platform.copyMemory(value.getBaseObject(), value.getBaseOffset(), null, to, length);
      putEnd(index, length);
    }
  }

  static final class Binaries extends VariableWidth {
    Binaries(BaseVariableWidthVector vector) {
      super(vector);
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      put(row.getBinary(ordinal), index);
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      put(column.getBinary(rowId), index);
    }

    private void put(byte[] value, int index) {
      long to = reserve(value.length);
      MemoryUtil.copyToMemory(value, 0, to, value.length);
      putEnd(index, value.length);
    }
  }
}
