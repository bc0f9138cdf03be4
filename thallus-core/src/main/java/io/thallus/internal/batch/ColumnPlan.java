package io.thallus.internal.batch;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What one column (at any depth) must look like for {@link BatchValidator}, worked out once from the schema: its
 * shape, widths, dictionary and children, and the name errors give it. A type the validator cannot check is refused
 * here, by name.
 */
final class ColumnPlan {
  /** How a column's buffers and children are laid out. */
  enum Shape {
    NULL, FIXED, BITS, VARIABLE, LARGE_VARIABLE, VIEW, LIST, LARGE_LIST, LIST_VIEW, LARGE_LIST_VIEW, FIXED_LIST,
    STRUCT, SPARSE_UNION, DENSE_UNION, RUN_END
  }

  final String label;
  final Shape shape;
  /** Bytes per value of a fixed-width column (indices, for a dictionary-encoded one). */
  final int byteWidth;
  final int listSize;
  final long dictionaryId;
  final boolean unsignedIndex;
  final ColumnPlan[] children;
  /** A union's type id to its child's position, -1 where the id is not the union's. */
  final byte[] childOfTypeId;

  ColumnPlan(String label, Shape shape, int byteWidth, int listSize, long dictionaryId, boolean unsignedIndex,
      ColumnPlan[] children, byte[] childOfTypeId) {
    this.label = label;
    this.shape = shape;
    this.byteWidth = byteWidth;
    this.listSize = listSize;
    this.dictionaryId = dictionaryId;
    this.unsignedIndex = unsignedIndex;
    this.children = children;
    this.childOfTypeId = childOfTypeId;
  }

  boolean dictionaryEncoded() {
    return dictionaryId >= 0;
  }

  /**
   * The plans of {@code schema}'s columns (in IPC message form); each dictionary's values go into
   * {@code dictionaries} by id. Throws INVALID_ARGUMENT naming a column whose type cannot be checked.
   */
  static ColumnPlan[] compile(Schema schema, Map<Long, ColumnPlan> dictionaries) {
    List<Field> fields = schema.getFields();
    ColumnPlan[] columns = new ColumnPlan[fields.size()];
    for (int i = 0; i < columns.length; i++) {
      columns[i] = compile(fields.get(i), "column ", fields.get(i).getName(), dictionaries);
    }
    return columns;
  }

  /** The plan for one field; {@code prefix} and {@code path} name it in errors ({@code column "l.item"}). */
  private static ColumnPlan compile(Field field, String prefix, String path, Map<Long, ColumnPlan> dictionaries) {
    String label = prefix + "\"" + path + "\"";
    DictionaryEncoding encoding = field.getDictionary();
    if (encoding != null) {
      ArrowType.Int indexType = encoding.getIndexType() == null ? new ArrowType.Int(32, true)
          : encoding.getIndexType();
      long id = encoding.getId();
      if (id < 0) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, label + ": dictionary id " + id + " is below 0");
      }
      if (!dictionaries.containsKey(id)) {
        Field values = new Field(field.getName(),
            new FieldType(field.isNullable(), field.getType(), null, field.getMetadata()), field.getChildren());
        // Put first: a dictionary whose values name the same dictionary would not end.
        dictionaries.put(id, null);
        dictionaries.put(id, compile(values, "dictionary " + id + " of column ", path, dictionaries));
      }
      return new ColumnPlan(label, Shape.FIXED, indexType.getBitWidth() / 8, 0, id, !indexType.getIsSigned(),
          new ColumnPlan[0], null);
    }
    ArrowType type = field.getType();
    if (type instanceof ArrowType.ExtensionType extension) {
      type = extension.storageType();
    }
    List<Field> fields = field.getChildren();
    ColumnPlan[] children = new ColumnPlan[fields.size()];
    for (int i = 0; i < children.length; i++) {
      String childPath = path + "." + fields.get(i).getName();
      children[i] = compile(fields.get(i), prefix, childPath, dictionaries);
    }
    Shape shape;
    int byteWidth = 0;
    int listSize = 0;
    byte[] childOf = null;
    switch (type) {
      case ArrowType.Null t -> shape = Shape.NULL;
      case ArrowType.Bool t -> shape = Shape.BITS;
      case ArrowType.Int t -> {
        shape = Shape.FIXED;
        byteWidth = t.getBitWidth() / 8;
      }
      case ArrowType.FloatingPoint t -> {
        shape = Shape.FIXED;
        byteWidth = switch (t.getPrecision()) {
          case HALF -> 2;
          case SINGLE -> 4;
          case DOUBLE -> 8;
        };
      }
      case ArrowType.Decimal t -> {
        shape = Shape.FIXED;
        byteWidth = t.getBitWidth() / 8;
      }
      case ArrowType.Date t -> {
        shape = Shape.FIXED;
        byteWidth = t.getUnit() == org.apache.arrow.vector.types.DateUnit.DAY ? 4 : 8;
      }
      case ArrowType.Time t -> {
        shape = Shape.FIXED;
        byteWidth = t.getBitWidth() / 8;
      }
      case ArrowType.Timestamp t -> {
        shape = Shape.FIXED;
        byteWidth = 8;
      }
      case ArrowType.Duration t -> {
        shape = Shape.FIXED;
        byteWidth = 8;
      }
      case ArrowType.Interval t -> {
        shape = Shape.FIXED;
        byteWidth = switch (t.getUnit()) {
          case YEAR_MONTH -> 4;
          case DAY_TIME -> 8;
          case MONTH_DAY_NANO -> 16;
        };
      }
      case ArrowType.FixedSizeBinary t -> {
        shape = Shape.FIXED;
        byteWidth = t.getByteWidth();
      }
      case ArrowType.Utf8 t -> shape = Shape.VARIABLE;
      case ArrowType.Binary t -> shape = Shape.VARIABLE;
      case ArrowType.LargeUtf8 t -> shape = Shape.LARGE_VARIABLE;
      case ArrowType.LargeBinary t -> shape = Shape.LARGE_VARIABLE;
      case ArrowType.Utf8View t -> shape = Shape.VIEW;
      case ArrowType.BinaryView t -> shape = Shape.VIEW;
      case ArrowType.List t -> shape = Shape.LIST;
      case ArrowType.Map t -> shape = Shape.LIST;
      case ArrowType.LargeList t -> shape = Shape.LARGE_LIST;
      case ArrowType.ListView t -> shape = Shape.LIST_VIEW;
      case ArrowType.LargeListView t -> shape = Shape.LARGE_LIST_VIEW;
      case ArrowType.FixedSizeList t -> {
        shape = Shape.FIXED_LIST;
        listSize = t.getListSize();
      }
      case ArrowType.Struct t -> shape = Shape.STRUCT;
      case ArrowType.Union t -> {
        shape = t.getMode() == org.apache.arrow.vector.types.UnionMode.Dense ? Shape.DENSE_UNION
            : Shape.SPARSE_UNION;
        childOf = new byte[128];
        java.util.Arrays.fill(childOf, (byte) -1);
        int[] ids = t.getTypeIds();
        for (int i = 0; i < children.length; i++) {
          int id = ids == null ? i : ids[i];
          if (id < 0 || id > 127) {
            throw ThallusException.of(StatusCode.INVALID_ARGUMENT, label + ": union type id " + id
                + " is outside 0..127");
          }
          childOf[id] = (byte) i;
        }
      }
      case ArrowType.RunEndEncoded t -> {
        shape = Shape.RUN_END;
        if (children.length != 2 || !(fields.get(0).getType() instanceof ArrowType.Int ends)
            || fields.get(0).getDictionary() != null || ends.getBitWidth() < 16 || !ends.getIsSigned()) {
          throw ThallusException.of(StatusCode.INVALID_ARGUMENT, label + ": a run-end encoded column needs "
              + "run ends of int16, int32 or int64 and values");
        }
      }
      default -> throw ThallusException.of(StatusCode.INVALID_ARGUMENT, label + ": type " + type
          + " cannot be checked, so batches of it are refused");
    }
    int expectedChildren = switch (shape) {
      case LIST, LARGE_LIST, LIST_VIEW, LARGE_LIST_VIEW, FIXED_LIST -> 1;
      case RUN_END -> 2;
      case STRUCT, SPARSE_UNION, DENSE_UNION -> children.length;
      default -> 0;
    };
    if (children.length != expectedChildren) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, label + ": type " + type + " has "
          + children.length + " children in the schema");
    }
    if (shape == Shape.FIXED && byteWidth <= 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, label + ": type " + type + " has no byte width");
    }
    if (listSize < 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, label + ": list size " + listSize + " is below 0");
    }
    return new ColumnPlan(label, shape, byteWidth, listSize, -1, false, children, childOf);
  }
}
