package io.thallus.jdbc;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthViewVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.IntervalYearVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Reads one column of the current batch as Java values: the "natural" value of each Arrow type (java.time for dates
 * and times, {@link List} for lists, {@link StructValue} for structs, {@link LinkedHashMap} for maps, {@link Interval}
 * for intervals), which {@link Values} turns into whatever a getter asks for. Built once per stream: the
 * {@code ArrowReader} loads every batch into the same vectors. Integer and floating-point columns have fast paths
 * that box nothing.
 */
abstract class ColumnReader {
  /** The column as the result set describes it: for a dictionary-encoded column, its value type. */
  final Field field;

  ColumnReader(Field field) {
    this.field = field;
  }

  abstract boolean isNull(int row);

  /** The natural value, {@code null} for SQL NULL. */
  abstract Object value(int row);

  /** Whether {@link #longValue} reads without boxing. */
  boolean hasLong() {
    return false;
  }

  long longValue(int row) {
    throw new UnsupportedOperationException();
  }

  boolean hasDouble() {
    return false;
  }

  double doubleValue(int row) {
    throw new UnsupportedOperationException();
  }

  /** A struct's value: its fields' names and values in order. */
  record StructValue(List<String> names, List<Object> values) {}

  /** An interval's three parts, as Arrow's MonthDayNano has them. */
  record Interval(int months, int days, long nanos) {}

  /** A list's value: its elements, and the Arrow field that describes them (for its JDBC base type). */
  static final class ListValue extends ArrayList<Object> {
    final Field element;

    ListValue(Field element, int size) {
      super(size);
      this.element = element;
    }
  }

  static ColumnReader of(FieldVector vector, DictionaryProvider dictionaries) {
    Field field = vector.getField();
    if (field.getDictionary() != null) {
      return dictionary(vector, field, dictionaries);
    }
    return EngineTypeValues.wrap(plain(vector, field, dictionaries));
  }

  private static ColumnReader dictionary(FieldVector vector, Field field, DictionaryProvider dictionaries) {
    long id = field.getDictionary().getId();
    Dictionary dictionary = dictionaries.lookup(id);
    Field valueField = dictionary == null ? field
        : new Field(field.getName(), dictionary.getVector().getField().getFieldType(),
            dictionary.getVector().getField().getChildren());
    BaseIntVector indices = (BaseIntVector) vector;
    return new ColumnReader(valueField) {
      private FieldVector values;
      private ColumnReader valuesReader;

      @Override
      boolean isNull(int row) {
        return vector.isNull(row);
      }

      @Override
      Object value(int row) {
        if (vector.isNull(row)) {
          return null;
        }
        // Looked up again per value: a batch may come with a dictionary vector of its own.
        FieldVector current = dictionaries.lookup(id).getVector();
        if (current != values) {
          values = current;
          valuesReader = plain(current, current.getField(), dictionaries);
        }
        return valuesReader.value((int) indices.getValueAsLong(row));
      }
    };
  }

  private static ColumnReader plain(FieldVector vector, Field field, DictionaryProvider dictionaries) {
    return switch (vector) {
      case BigIntVector v -> integers(field, v, v::get);
      case IntVector v -> new IntegerReader(field, v, v::get, row -> v.get(row));
      case SmallIntVector v -> new IntegerReader(field, v, v::get, row -> v.get(row));
      case TinyIntVector v -> new IntegerReader(field, v, v::get, row -> v.get(row));
      case UInt1Vector v -> new IntegerReader(field, v, row -> (long) (v.get(row) & 0xFF),
          row -> (short) (v.get(row) & 0xFF));
      case UInt2Vector v -> new IntegerReader(field, v, row -> (long) v.get(row), row -> (int) v.get(row));
      case UInt4Vector v -> new IntegerReader(field, v, row -> v.get(row) & 0xFFFF_FFFFL,
          row -> v.get(row) & 0xFFFF_FFFFL);
      case UInt8Vector v -> simple(field, v, row -> {
        long raw = v.get(row);
        return raw >= 0 ? BigInteger.valueOf(raw) : BigInteger.valueOf(raw).add(BigInteger.ONE.shiftLeft(64));
      });
      case BitVector v -> simple(field, v, row -> v.get(row) != 0);
      case Float8Vector v -> new FloatingReader(field, v, v::get, row -> v.get(row));
      case Float4Vector v -> new FloatingReader(field, v, row -> v.get(row), row -> v.get(row));
      case Float2Vector v -> new FloatingReader(field, v, row -> v.getValueAsFloat(row), row -> v.getValueAsFloat(row));
      case DecimalVector v -> simple(field, v, v::getObject);
      case Decimal256Vector v -> simple(field, v, v::getObject);
      case BaseVariableWidthVector v when isText(field) -> simple(field, v,
          row -> new String(v.get(row), StandardCharsets.UTF_8));
      case BaseVariableWidthVector v -> simple(field, v, v::get);
      case BaseVariableWidthViewVector v when isText(field) -> simple(field, v,
          row -> new String(v.get(row), StandardCharsets.UTF_8));
      case BaseVariableWidthViewVector v -> simple(field, v, v::get);
      case FixedSizeBinaryVector v -> simple(field, v, v::get);
      case DateDayVector v -> simple(field, v, row -> LocalDate.ofEpochDay(v.get(row)));
      case DateMilliVector v -> simple(field, v, row -> LocalDate.ofEpochDay(Math.floorDiv(v.get(row), 86_400_000L)));
      case TimeSecVector v -> simple(field, v, row -> LocalTime.ofSecondOfDay(v.get(row)));
      case TimeMilliVector v -> simple(field, v, row -> LocalTime.ofNanoOfDay(v.get(row) * 1_000_000L));
      case TimeMicroVector v -> simple(field, v, row -> LocalTime.ofNanoOfDay(v.get(row) * 1_000L));
      case TimeNanoVector v -> simple(field, v, row -> LocalTime.ofNanoOfDay(v.get(row)));
      case TimeStampVector v -> timestamps(field, v);
      case IntervalMonthDayNanoVector v -> simple(field, v, row -> {
        var holder = new org.apache.arrow.vector.holders.NullableIntervalMonthDayNanoHolder();
        v.get(row, holder);
        return new Interval(holder.months, holder.days, holder.nanoseconds);
      });
      case IntervalDayVector v -> simple(field, v, row -> {
        var holder = new org.apache.arrow.vector.holders.NullableIntervalDayHolder();
        v.get(row, holder);
        return new Interval(0, holder.days, holder.milliseconds * 1_000_000L);
      });
      case IntervalYearVector v -> simple(field, v, row -> new Interval(v.get(row), 0, 0));
      case DurationVector v -> simple(field, v, row -> Duration.of(DurationVector.get(v.getDataBuffer(), row),
          unit(((ArrowType.Duration) field.getType()).getUnit()).toChronoUnit()));
      case NullVector v -> simple(field, v, row -> null);
      case MapVector v -> maps(field, v, dictionaries);
      case ListVector v -> lists(field, v, v.getDataVector(), dictionaries,
          row -> v.getElementStartIndex(row), row -> v.getElementEndIndex(row));
      case LargeListVector v -> lists(field, v, v.getDataVector(), dictionaries,
          row -> (int) v.getElementStartIndex(row), row -> (int) v.getElementEndIndex(row));
      case FixedSizeListVector v -> lists(field, v, v.getDataVector(), dictionaries,
          row -> row * v.getListSize(), row -> (row + 1) * v.getListSize());
      case StructVector v -> structs(field, v, dictionaries);
      default -> simple(field, vector, vector::getObject);
    };
  }

  private static boolean isText(Field field) {
    return field.getType() instanceof ArrowType.Utf8 || field.getType() instanceof ArrowType.LargeUtf8
        || field.getType() instanceof ArrowType.Utf8View;
  }

  private static TimeUnit unit(org.apache.arrow.vector.types.TimeUnit unit) {
    return switch (unit) {
      case SECOND -> TimeUnit.SECONDS;
      case MILLISECOND -> TimeUnit.MILLISECONDS;
      case MICROSECOND -> TimeUnit.MICROSECONDS;
      case NANOSECOND -> TimeUnit.NANOSECONDS;
    };
  }

  private static ColumnReader timestamps(Field field, TimeStampVector v) {
    ArrowType.Timestamp type = (ArrowType.Timestamp) field.getType();
    TimeUnit unit = unit(type.getUnit());
    long perSecond = unit.convert(1, TimeUnit.SECONDS);
    long nanosPerUnit = TimeUnit.NANOSECONDS.convert(1, unit);
    ZoneId zone = type.getTimezone() == null ? null : ZoneId.of(type.getTimezone());
    return simple(field, v, row -> {
      long raw = v.get(row);
      long seconds = Math.floorDiv(raw, perSecond);
      int nanos = (int) (Math.floorMod(raw, perSecond) * nanosPerUnit);
      if (zone == null) {
        return LocalDateTime.ofEpochSecond(seconds, nanos, ZoneOffset.UTC);
      }
      return Instant.ofEpochSecond(seconds, nanos).atZone(zone).toOffsetDateTime();
    });
  }

  private interface ValueAt {
    Object at(int row);
  }

  private interface LongAt {
    long at(int row);
  }

  private interface DoubleAt {
    double at(int row);
  }

  private interface IndexAt {
    int at(int row);
  }

  private static ColumnReader simple(Field field, ValueVector vector, ValueAt value) {
    return new ColumnReader(field) {
      @Override
      boolean isNull(int row) {
        return vector.isNull(row);
      }

      @Override
      Object value(int row) {
        return vector.isNull(row) ? null : value.at(row);
      }
    };
  }

  private static ColumnReader integers(Field field, ValueVector vector, LongAt longs) {
    return new IntegerReader(field, vector, longs, longs::at);
  }

  /** An integer column: read as a long without boxing, or as its own boxed type (Byte, Short, ...). */
  private static final class IntegerReader extends ColumnReader {
    private final ValueVector vector;
    private final LongAt longs;
    private final ValueAt boxed;

    IntegerReader(Field field, ValueVector vector, LongAt longs, ValueAt boxed) {
      super(field);
      this.vector = vector;
      this.longs = longs;
      this.boxed = boxed;
    }

    @Override
    boolean isNull(int row) {
      return vector.isNull(row);
    }

    @Override
    Object value(int row) {
      return vector.isNull(row) ? null : boxed.at(row);
    }

    @Override
    boolean hasLong() {
      return true;
    }

    @Override
    long longValue(int row) {
      return longs.at(row);
    }
  }

  private static final class FloatingReader extends ColumnReader {
    private final ValueVector vector;
    private final DoubleAt doubles;
    private final ValueAt boxed;

    FloatingReader(Field field, ValueVector vector, DoubleAt doubles, ValueAt boxed) {
      super(field);
      this.vector = vector;
      this.doubles = doubles;
      this.boxed = boxed;
    }

    @Override
    boolean isNull(int row) {
      return vector.isNull(row);
    }

    @Override
    Object value(int row) {
      return vector.isNull(row) ? null : boxed.at(row);
    }

    @Override
    boolean hasDouble() {
      return true;
    }

    @Override
    double doubleValue(int row) {
      return doubles.at(row);
    }
  }

  private static ColumnReader lists(Field field, ValueVector vector, FieldVector elements,
      DictionaryProvider dictionaries, IndexAt start, IndexAt end) {
    ColumnReader elementReader = of(elements, dictionaries);
    return simple(field, vector, row -> {
      int from = start.at(row);
      int to = end.at(row);
      List<Object> values = new ListValue(elementReader.field, to - from);
      for (int i = from; i < to; i++) {
        values.add(elementReader.value(i));
      }
      return values;
    });
  }

  private static ColumnReader structs(Field field, StructVector vector, DictionaryProvider dictionaries) {
    List<String> names = new ArrayList<>();
    List<ColumnReader> children = new ArrayList<>();
    for (FieldVector child : vector.getChildrenFromFields()) {
      names.add(child.getName());
      children.add(of(child, dictionaries));
    }
    List<String> fixedNames = List.copyOf(names);
    return simple(field, vector, row -> {
      List<Object> values = new ArrayList<>(children.size());
      for (ColumnReader child : children) {
        values.add(child.value(row));
      }
      return new StructValue(fixedNames, values);
    });
  }

  private static ColumnReader maps(Field field, MapVector vector, DictionaryProvider dictionaries) {
    StructVector entries = (StructVector) vector.getDataVector();
    ColumnReader keys = of(entries.getChildrenFromFields().get(0), dictionaries);
    ColumnReader values = of(entries.getChildrenFromFields().get(1), dictionaries);
    return simple(field, vector, row -> {
      Map<Object, Object> map = new LinkedHashMap<>();
      for (int i = vector.getElementStartIndex(row); i < vector.getElementEndIndex(row); i++) {
        map.put(keys.value(i), values.value(i));
      }
      return map;
    });
  }

}
