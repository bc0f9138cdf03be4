package io.thallus.spark.shuffle;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection$;
import org.apache.spark.sql.catalyst.types.DataTypeUtils$;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.execution.arrow.ArrowWriter$;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.Seq;

/**
 * Rows of every type the exchange claims, with nulls and edge values, for the map side's unit tests: as Spark's
 * generic rows, as UnsafeRows, and as Arrow batches written by Spark's own ArrowWriter; and each row's values as plain
 * Java objects to compare (floats by their raw bits, decimals as BigDecimals, strings and bytes as text).
 */
final class WriterRows {
  static final DataType[] TYPES = {
      DataTypes.BooleanType, DataTypes.ByteType, DataTypes.ShortType, DataTypes.IntegerType, DataTypes.LongType,
      DataTypes.FloatType, DataTypes.DoubleType, DataTypes.StringType, DataTypes.BinaryType, DataTypes.DateType,
      DataTypes.TimestampType, DataTypes.TimestampNTZType, DataTypes.createDecimalType(7, 2),
      DataTypes.createDecimalType(18, 4), DataTypes.createDecimalType(38, 10), DataTypes.createDecimalType(20, 0)};
  static final StructType SCHEMA = schema(TYPES);

  private WriterRows() {}

  static StructType schema(DataType[] types) {
    StructField[] fields = new StructField[types.length];
    for (int i = 0; i < types.length; i++) {
      fields[i] = new StructField("c" + i, types[i], true, Metadata.empty());
    }
    return new StructType(fields);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static Seq<Attribute> attributes(StructType schema) {
    return (Seq) DataTypeUtils$.MODULE$.toAttributes(schema);
  }

  /** {@code count} generic rows: the first ones each column's edge values, then random ones; about 1 in 6 null. */
  static List<InternalRow> generic(int count, long seed) {
    Random random = new Random(seed);
    List<InternalRow> rows = new ArrayList<>(count);
    for (int r = 0; r < count; r++) {
      Object[] values = new Object[TYPES.length];
      for (int c = 0; c < TYPES.length; c++) {
        boolean isNull = r == 1 || (r > 2 && random.nextInt(6) == 0);
        values[c] = isNull ? null : value(TYPES[c], r, random);
      }
      rows.add(new GenericInternalRow(values));
    }
    return rows;
  }

  /** The same rows as UnsafeRows (copies). */
  static List<InternalRow> unsafe(List<InternalRow> rows, StructType schema) {
    UnsafeProjection toUnsafe = UnsafeProjection$.MODULE$.create(schema);
    List<InternalRow> copies = new ArrayList<>(rows.size());
    for (InternalRow row : rows) {
      copies.add(toUnsafe.apply(row).copy());
    }
    return copies;
  }

  /** Rows {@code from} to {@code to} as one batch of Spark's ArrowWriter (Spark's Arrow mapping, decimal128). */
  static ColumnarBatch sparkArrowBatch(List<InternalRow> rows, int from, int to, StructType schema,
      BufferAllocator allocator, List<VectorSchemaRoot> toClose) {
    VectorSchemaRoot root = VectorSchemaRoot.create(ArrowUtils.toArrowSchema(schema, "UTC", false, false), allocator);
    toClose.add(root);
    ArrowWriter writer = ArrowWriter$.MODULE$.create(root);
    for (int r = from; r < to; r++) {
      writer.write(rows.get(r));
    }
    writer.finish();
    ColumnVector[] columns = new ColumnVector[schema.fields().length];
    for (int c = 0; c < columns.length; c++) {
      columns[c] = new ArrowColumnVector(root.getVector(c));
    }
    return new ColumnarBatch(columns, to - from);
  }

  /**
   * Rows {@code from} to {@code to} as the exchange's reduce side reads one of its batches ({@code layout}'s column
   * vectors: compact decimals as longs), written by the map side's own writers.
   */
  static ColumnarBatch exchangeArrowBatch(List<InternalRow> rows, int from, int to, ExchangeLayout layout,
      BufferAllocator allocator, List<VectorSchemaRoot> toClose) {
    PartitionBatch written =
        new PartitionBatch(layout.arrowSchema(), layout.types(), allocator, Math.max(1, to - from));
    for (int r = from; r < to; r++) {
      written.append(rows.get(r));
    }
    VectorSchemaRoot root = written.finish();
    toClose.add(root);
    return new ColumnarBatch(layout.columns(root), to - from);
  }

  /**
   * Rows {@code from} to {@code to} as Spark's on-heap column vectors (what its vectorized Parquet reader gives), which
   * the caller closes.
   */
  static OnHeapColumnVector[] onHeapColumns(List<InternalRow> rows, int from, int to) {
    return fill(OnHeapColumnVector.allocateColumns(Math.max(1, to - from), SCHEMA), rows, from, to);
  }

  /** The same as Spark's off-heap column vectors (its reader's with {@code spark.sql.columnVector.offheap.enabled}). */
  static OffHeapColumnVector[] offHeapColumns(List<InternalRow> rows, int from, int to) {
    return fill(OffHeapColumnVector.allocateColumns(Math.max(1, to - from), SCHEMA), rows, from, to);
  }

  private static <T extends WritableColumnVector> T[] fill(T[] columns, List<InternalRow> rows, int from, int to) {
    for (int r = from; r < to; r++) {
      InternalRow row = rows.get(r);
      for (int c = 0; c < TYPES.length; c++) {
        put(columns[c], r - from, row, c, TYPES[c]);
      }
    }
    return columns;
  }

  private static void put(WritableColumnVector column, int at, InternalRow row, int c, DataType type) {
    if (row.isNullAt(c)) {
      column.putNull(at);
      return;
    }
    switch (type) {
      case BooleanType ignored -> column.putBoolean(at, row.getBoolean(c));
      case ByteType ignored -> column.putByte(at, row.getByte(c));
      case ShortType ignored -> column.putShort(at, row.getShort(c));
      case IntegerType ignored -> column.putInt(at, row.getInt(c));
      case DateType ignored -> column.putInt(at, row.getInt(c));
      case LongType ignored -> column.putLong(at, row.getLong(c));
      case TimestampType ignored -> column.putLong(at, row.getLong(c));
      case TimestampNTZType ignored -> column.putLong(at, row.getLong(c));
      case FloatType ignored -> column.putFloat(at, row.getFloat(c));
      case DoubleType ignored -> column.putDouble(at, row.getDouble(c));
      case DecimalType d -> column.putDecimal(at, row.getDecimal(c, d.precision(), d.scale()), d.precision());
      case StringType ignored -> column.putByteArray(at, row.getUTF8String(c).getBytes());
      case BinaryType ignored -> column.putByteArray(at, row.getBinary(c));
      default -> throw new IllegalArgumentException(type.sql());
    }
  }

  /** A row's values as comparable Java objects. */
  static List<Object> values(SpecializedGetters row, DataType[] types) {
    List<Object> values = new ArrayList<>(types.length);
    for (int c = 0; c < types.length; c++) {
      values.add(row.isNullAt(c) ? null : switch (types[c]) {
        case BooleanType ignored -> row.getBoolean(c);
        case ByteType ignored -> row.getByte(c);
        case ShortType ignored -> row.getShort(c);
        case IntegerType ignored -> row.getInt(c);
        case DateType ignored -> "date " + row.getInt(c);
        case LongType ignored -> row.getLong(c);
        case TimestampType ignored -> "ts " + row.getLong(c);
        case TimestampNTZType ignored -> "ntz " + row.getLong(c);
        case FloatType ignored -> "float bits " + Float.floatToRawIntBits(row.getFloat(c));
        case DoubleType ignored -> "double bits " + Double.doubleToRawLongBits(row.getDouble(c));
        case DecimalType d -> row.getDecimal(c, d.precision(), d.scale()).toJavaBigDecimal();
        case StringType ignored -> "string " + row.getUTF8String(c);
        case BinaryType ignored -> "binary " + HexFormat.of().formatHex(row.getBinary(c));
        default -> throw new IllegalArgumentException(types[c].sql());
      });
    }
    return values;
  }

  private static Object value(DataType type, int r, Random random) {
    boolean edge = r < 16;
    int pick = r % 8;
    return switch (type) {
      case BooleanType ignored -> edge ? r % 2 == 0 : random.nextBoolean();
      case ByteType ignored -> (byte) (edge ? new int[] {0, -1, Byte.MIN_VALUE, Byte.MAX_VALUE, 1, 7, -7, 42}[pick]
          : random.nextInt());
      case ShortType ignored -> (short) (edge ? new int[] {0, -1, Short.MIN_VALUE, Short.MAX_VALUE, 1, 7, -7, 42}[pick]
          : random.nextInt());
      case IntegerType ignored -> edge ? new int[] {0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 1, 7, -7, 42}[pick]
          : random.nextInt();
      case DateType ignored -> edge ? new int[] {0, -1, -719162, 2932896, 1, 19000, -7, 42}[pick]
          : random.nextInt(100_000) - 50_000;
      case LongType ignored -> longValue(edge, pick, random);
      case TimestampType ignored -> longValue(edge, pick, random);
      case TimestampNTZType ignored -> longValue(edge, pick, random);
      case FloatType ignored -> edge ? new float[] {0f, -0f, Float.NaN, Float.POSITIVE_INFINITY,
          Float.NEGATIVE_INFINITY, Float.MIN_VALUE, Float.MAX_VALUE, -1.5f}[pick] : random.nextFloat() * 1e6f - 5e5f;
      case DoubleType ignored -> edge ? new double[] {0d, -0d, Double.NaN, Double.POSITIVE_INFINITY,
          Double.NEGATIVE_INFINITY, Double.MIN_VALUE, Double.MAX_VALUE, -1.5d}[pick] : random.nextGaussian() * 1e9;
      case DecimalType d -> decimal(d, edge, pick, random);
      case StringType ignored -> UTF8String.fromString(edge
          ? new String[] {"", "a", "ü€😀", "x".repeat(10_000), "abc", "abcd", "abcde", "null"}[pick]
          : randomText(random));
      case BinaryType ignored -> edge
          ? new byte[][] {{}, {0}, {-1, 0, 1}, new byte[5000], {1, 2, 3, 4}, {1, 2, 3, 4, 5}, {9}, {7, 7}}[pick]
          : randomText(random).getBytes(StandardCharsets.UTF_8);
      default -> throw new IllegalArgumentException(type.sql());
    };
  }

  private static long longValue(boolean edge, int pick, Random random) {
    return edge ? new long[] {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1, 1L << 40, -7, 42}[pick] : random.nextLong();
  }

  private static Decimal decimal(DecimalType type, boolean edge, int pick, Random random) {
    BigInteger largest = BigInteger.TEN.pow(type.precision()).subtract(BigInteger.ONE);
    BigInteger unscaled = edge
        ? new BigInteger[] {BigInteger.ZERO, BigInteger.ONE.negate(), largest, largest.negate(), BigInteger.ONE,
            BigInteger.valueOf(Long.MAX_VALUE).min(largest), BigInteger.valueOf(Long.MIN_VALUE).max(largest.negate()),
            BigInteger.valueOf(12345)}[pick]
        : new BigInteger(random.nextInt(largest.bitLength() - 1) + 1, random).multiply(
            BigInteger.valueOf(random.nextBoolean() ? 1 : -1));
    return Decimal.apply(new BigDecimal(unscaled, type.scale()), type.precision(), type.scale());
  }

  private static String randomText(Random random) {
    int length = random.nextInt(40);
    StringBuilder text = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      text.append(random.nextInt(10) == 0 ? (char) ('À' + random.nextInt(200)) : (char) ('a' + random.nextInt(26)));
    }
    return text.toString();
  }
}
