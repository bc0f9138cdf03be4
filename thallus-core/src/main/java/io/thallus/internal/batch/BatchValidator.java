package io.thallus.internal.batch;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Checks every batch that comes in against its schema before anything reads it: Arrow's loaders and DuckDB's scan
 * trust a batch's offsets, lengths and indices, so one that lies makes them read outside its buffers (another part
 * of the process' memory, or a crash). A batch passes only if reading every value of it stays inside its buffers:
 *
 * <ul>
 *   <li>as many field nodes and buffers as the schema's columns need (and a view column's variadic buffers);
 *   <li>each column's length equal to the record's, each null count between 0 and the length;
 *   <li>each buffer long enough for the length and type: validity (which may be empty when nothing is null), fixed
 *       width values, bit-packed booleans, offsets, sizes, views, union type ids;
 *   <li>offsets (32 and 64 bit) starting at 0 or more, never decreasing, the last inside the data buffer or within
 *       the child's length; list views' offset + size within the child;
 *   <li>views: a length of 0 or more, inline when 12 or less, else a buffer index below the column's variadic
 *       buffer count and offset + length inside that buffer;
 *   <li>children: as long as the parent's offsets need, a struct's and a sparse union's at least the parent's, a
 *       fixed-size list's at least length × size, a dense union's past each offset into it; run ends positive,
 *       increasing, the last covering the length, with as many values;
 *   <li>union type ids among the union's; dictionary indices (signed or unsigned) of non-null rows below the
 *       length of the dictionary received so far (deltas add to it). Which rows are null is read as Arrow's loader
 *       and DuckDB read it: from the validity bits when there are any, whatever the null count says.
 * </ul>
 *
 * A type it does not know is refused by name rather than passed, as is a compressed body. The schema is the one the
 * batches travel with (Arrow IPC's form: a dictionary-encoded column has its values' type and the encoding). One
 * validator serves one stream: it keeps each dictionary's length between batches. Refusal is a
 * {@link StatusCode#INVALID_ARGUMENT} naming the column's path and the rule; it reads the buffers in place, with no
 * allocation per row.
 */
public final class BatchValidator {
  private final ColumnPlan[] columns;
  private final Map<Long, ColumnPlan> dictionaries = new HashMap<>();
  /** Each dictionary's length as received so far in this stream. */
  private final Map<Long, Long> dictionaryLengths = new HashMap<>();

  /**
   * A validator for batches of {@code schema} (in IPC message form). Throws INVALID_ARGUMENT naming a column whose
   * type it cannot check.
   */
  public BatchValidator(Schema schema) {
    columns = ColumnPlan.compile(schema, dictionaries);
  }

  /** Checks a batch's dictionaries (in order) and then its records. */
  public void check(BatchContents contents) {
    for (ArrowDictionaryBatch dictionary : contents.dictionaries()) {
      checkDictionary(dictionary);
    }
    checkRecords(contents.records());
  }

  /** Checks a dictionary batch and, if it passes, counts its values for the indices that follow. */
  public void checkDictionary(ArrowDictionaryBatch dictionary) {
    long id = dictionary.getDictionaryId();
    ColumnPlan values = dictionaries.get(id);
    if (values == null) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the batch carries dictionary " + id
          + ", which no column of its schema uses");
    }
    ArrowRecordBatch batch = dictionary.getDictionary();
    walk(batch, new ColumnPlan[] {values}, "dictionary " + id);
    long before = dictionary.isDelta() ? dictionaryLengths.getOrDefault(id, 0L) : 0L;
    dictionaryLengths.put(id, before + batch.getLength());
  }

  /** Checks a record batch against the schema. */
  public void checkRecords(ArrowRecordBatch records) {
    walk(records, columns, "the batch");
  }

  private void walk(ArrowRecordBatch batch, ColumnPlan[] top, String what) {
    if (batch.getBodyCompression() != null
        && batch.getBodyCompression().getCodec() != NoCompressionCodec.COMPRESSION_TYPE) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, what + " is compressed (codec "
          + batch.getBodyCompression().getCodec() + "); batches travel uncompressed");
    }
    int rows = batch.getLength();
    if (rows < 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, what + " claims " + rows + " rows");
    }
    Cursor cursor = new Cursor(batch);
    for (ColumnPlan column : top) {
      check(column, cursor, rows, true);
    }
    if (cursor.node != cursor.nodes.size()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, what + " has " + cursor.nodes.size()
          + " field nodes, its schema " + cursor.node);
    }
    if (cursor.buffer != cursor.buffers.size()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, what + " has " + cursor.buffers.size()
          + " buffers, its schema " + cursor.buffer);
    }
    if (cursor.variadic != cursor.variadicCounts.size()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, what + " has " + cursor.variadicCounts.size()
          + " variadic buffer counts, its schema " + cursor.variadic + " view columns");
    }
  }

  /** Where the walk is in a batch's field nodes, buffers and variadic buffer counts (schema order, depth first). */
  private static final class Cursor {
    final List<ArrowFieldNode> nodes;
    final List<ArrowBuf> buffers;
    final List<Long> variadicCounts;
    int node;
    int buffer;
    int variadic;

    Cursor(ArrowRecordBatch batch) {
      nodes = batch.getNodes();
      buffers = batch.getBuffers();
      List<Long> counts = batch.getVariadicBufferCounts();
      variadicCounts = counts == null ? List.of() : counts;
    }

    ArrowFieldNode node(ColumnPlan column) {
      if (node >= nodes.size()) {
        throw fail(column, "has no field node (the batch has " + nodes.size() + ")");
      }
      return nodes.get(node++);
    }

    ArrowBuf buffer(ColumnPlan column, String what) {
      if (buffer >= buffers.size()) {
        throw fail(column, "has no " + what + " buffer (the batch has " + buffers.size() + ")");
      }
      return buffers.get(buffer++);
    }
  }

  /**
   * Checks one column and its children. {@code required}: the length the parent needs, exactly (a record's
   * columns) or at least (a child).
   */
  private void check(ColumnPlan column, Cursor cursor, long required, boolean exact) {
    ArrowFieldNode node = cursor.node(column);
    long n = node.getLength();
    long nulls = node.getNullCount();
    if (n < 0 || n > Integer.MAX_VALUE) {
      throw fail(column, "length " + n + " is out of range");
    }
    if (nulls < 0 || nulls > n) {
      throw fail(column, "null count " + nulls + " is outside its length " + n);
    }
    if (exact && n != required) {
      throw fail(column, "has " + n + " values, the batch " + required + " rows");
    }
    if (!exact && n < required) {
      throw fail(column, "has " + n + " values, its parent needs " + required);
    }
    switch (column.shape) {
      case NULL -> {}
      case FIXED -> {
        ArrowBuf validity = validity(column, cursor, n, nulls);
        ArrowBuf values = sized(column, cursor, "values", n * column.byteWidth);
        if (column.dictionaryEncoded()) {
          indices(column, validity, values, n, nulls);
        }
      }
      case BITS -> {
        validity(column, cursor, n, nulls);
        sized(column, cursor, "values", bytesForBits(n));
      }
      case VARIABLE, LARGE_VARIABLE -> {
        validity(column, cursor, n, nulls);
        ArrowBuf offsets = cursor.buffer(column, "offsets");
        ArrowBuf data = cursor.buffer(column, "data");
        if (column.shape == ColumnPlan.Shape.VARIABLE) {
          offsets32(column, offsets, n, data.capacity(), "the data buffer's");
        } else {
          offsets64(column, offsets, n, data.capacity(), "the data buffer's");
        }
      }
      case VIEW -> views(column, cursor, n, nulls);
      case LIST, LARGE_LIST -> {
        validity(column, cursor, n, nulls);
        ArrowBuf offsets = cursor.buffer(column, "offsets");
        long last = column.shape == ColumnPlan.Shape.LIST
            ? offsets32(column, offsets, n, Long.MAX_VALUE, null)
            : offsets64(column, offsets, n, Long.MAX_VALUE, null);
        check(column.children[0], cursor, last, false);
      }
      case LIST_VIEW, LARGE_LIST_VIEW -> {
        validity(column, cursor, n, nulls);
        int width = column.shape == ColumnPlan.Shape.LIST_VIEW ? 4 : 8;
        ArrowBuf offsets = sized(column, cursor, "offsets", n * width);
        ArrowBuf sizes = sized(column, cursor, "sizes", n * width);
        check(column.children[0], cursor, listViewEnd(column, offsets, sizes, n, width), false);
      }
      case FIXED_LIST -> {
        validity(column, cursor, n, nulls);
        check(column.children[0], cursor, n * column.listSize, false);
      }
      case STRUCT -> {
        validity(column, cursor, n, nulls);
        for (ColumnPlan child : column.children) {
          check(child, cursor, n, false);
        }
      }
      case SPARSE_UNION -> {
        ArrowBuf types = sized(column, cursor, "type ids", n);
        typeIds(column, types, n, null, null);
        for (ColumnPlan child : column.children) {
          check(child, cursor, n, false);
        }
      }
      case DENSE_UNION -> {
        ArrowBuf types = sized(column, cursor, "type ids", n);
        ArrowBuf offsets = sized(column, cursor, "offsets", n * 4);
        long[] needs = new long[column.children.length];
        typeIds(column, types, n, offsets, needs);
        for (int i = 0; i < column.children.length; i++) {
          check(column.children[i], cursor, needs[i], false);
        }
      }
      case RUN_END -> {
        int runEndsNode = cursor.node;
        int runEndsBuffer = cursor.buffer;
        ColumnPlan runEnds = column.children[0];
        check(runEnds, cursor, 0, false);
        ArrowFieldNode runs = cursor.nodes.get(runEndsNode);
        runEnds(runEnds, runs, cursor.buffers.get(runEndsBuffer), cursor.buffers.get(runEndsBuffer + 1), n);
        check(column.children[1], cursor, runs.getLength(), false);
      }
      default -> throw new IllegalStateException(column.shape.toString());
    }
  }

  private static long bytesForBits(long n) {
    return (n + 7) >>> 3;
  }

  /** The validity buffer: empty is allowed when nothing is null (Arrow readers then take every row as valid). */
  private static ArrowBuf validity(ColumnPlan column, Cursor cursor, long n, long nulls) {
    ArrowBuf validity = cursor.buffer(column, "validity");
    long need = bytesForBits(n);
    if (validity.capacity() < need && !(nulls == 0 && validity.capacity() == 0)) {
      throw fail(column, "validity buffer has " + validity.capacity() + " bytes, " + n + " rows need " + need);
    }
    return validity;
  }

  private static ArrowBuf sized(ColumnPlan column, Cursor cursor, String what, long need) {
    ArrowBuf buffer = cursor.buffer(column, what);
    if (buffer.capacity() < need) {
      throw fail(column, what + " buffer has " + buffer.capacity() + " bytes, " + need + " needed");
    }
    return buffer;
  }

  /**
   * Whether the rows' validity is in bits: a validity buffer that is not empty is read as it is, whatever the null
   * count says (Arrow's loader keeps it, and DuckDB reads the bits); an empty one means no row is null (null count 0)
   * or every row is (null count = length), any other count having been refused.
   */
  private static boolean hasBits(ArrowBuf validity) {
    return validity.capacity() > 0;
  }

  private static boolean bitSet(long validityAddress, long i) {
    return (MemoryUtil.getByte(validityAddress + (i >>> 3)) >> (i & 7) & 1) != 0;
  }

  /**
   * Checks n + 1 int32 offsets (none at all for no rows): the first 0 or more, none below the one before, the last
   * within {@code limit}. Returns the last.
   */
  private static long offsets32(ColumnPlan column, ArrowBuf offsets, long n, long limit, String limitName) {
    if (n == 0 && offsets.capacity() == 0) {
      return 0;
    }
    long need = (n + 1) * 4;
    if (offsets.capacity() < need) {
      throw fail(column, "offsets buffer has " + offsets.capacity() + " bytes, " + n + " rows need " + need);
    }
    long address = offsets.memoryAddress();
    int previous = MemoryUtil.getInt(address);
    if (previous < 0) {
      throw fail(column, "offset 0 (" + previous + ") is below 0");
    }
    for (long i = 1; i <= n; i++) {
      int offset = MemoryUtil.getInt(address + (i << 2));
      if (offset < previous) {
        throw fail(column, "offset " + i + " (" + offset + ") is below offset " + (i - 1) + " (" + previous + ")");
      }
      previous = offset;
    }
    if (previous > limit) {
      throw fail(column, "last offset " + previous + " is past " + limitName + " " + limit + " bytes");
    }
    return previous;
  }

  /** As {@link #offsets32} for int64 offsets. */
  private static long offsets64(ColumnPlan column, ArrowBuf offsets, long n, long limit, String limitName) {
    if (n == 0 && offsets.capacity() == 0) {
      return 0;
    }
    long need = (n + 1) * 8;
    if (offsets.capacity() < need) {
      throw fail(column, "offsets buffer has " + offsets.capacity() + " bytes, " + n + " rows need " + need);
    }
    long address = offsets.memoryAddress();
    long previous = MemoryUtil.getLong(address);
    if (previous < 0) {
      throw fail(column, "offset 0 (" + previous + ") is below 0");
    }
    for (long i = 1; i <= n; i++) {
      long offset = MemoryUtil.getLong(address + (i << 3));
      if (offset < previous) {
        throw fail(column, "offset " + i + " (" + offset + ") is below offset " + (i - 1) + " (" + previous + ")");
      }
      previous = offset;
    }
    if (previous > limit) {
      throw fail(column, "last offset " + previous + " is past " + limitName + " " + limit + " bytes");
    }
    return previous;
  }

  /** The end of the furthest list view: each offset and size 0 or more (every row, as readers may look at any). */
  private static long listViewEnd(ColumnPlan column, ArrowBuf offsets, ArrowBuf sizes, long n, int width) {
    long offsetAddress = offsets.memoryAddress();
    long sizeAddress = sizes.memoryAddress();
    long end = 0;
    for (long i = 0; i < n; i++) {
      long offset = width == 4 ? MemoryUtil.getInt(offsetAddress + i * 4) : MemoryUtil.getLong(offsetAddress + i * 8);
      long size = width == 4 ? MemoryUtil.getInt(sizeAddress + i * 4) : MemoryUtil.getLong(sizeAddress + i * 8);
      if (offset < 0 || size < 0 || offset + size < 0) {
        throw fail(column, "row " + i + " has offset " + offset + " and size " + size);
      }
      end = Math.max(end, offset + size);
    }
    return end;
  }

  /** Checks views of the valid rows; takes the column's variadic data buffers. */
  private static void views(ColumnPlan column, Cursor cursor, long n, long nulls) {
    ArrowBuf validity = validity(column, cursor, n, nulls);
    ArrowBuf views = sized(column, cursor, "views", n * 16);
    if (cursor.variadic >= cursor.variadicCounts.size()) {
      throw fail(column, "has no variadic buffer count (the batch has " + cursor.variadicCounts.size() + ")");
    }
    long count = cursor.variadicCounts.get(cursor.variadic++);
    if (count < 0 || count > cursor.buffers.size() - cursor.buffer) {
      throw fail(column, "claims " + count + " variadic buffers, the batch has "
          + (cursor.buffers.size() - cursor.buffer) + " left");
    }
    long[] capacities = new long[(int) count];
    for (int b = 0; b < count; b++) {
      capacities[b] = cursor.buffers.get(cursor.buffer++).capacity();
    }
    boolean bits = hasBits(validity);
    if (!bits && nulls != 0) {
      return;
    }
    long address = views.memoryAddress();
    // Null rows included first: honest writers leave them empty, and that pass reads no validity bits.
    long bad = firstBadView(address, 0, n, capacities);
    while (bad >= 0) {
      if (!bits || bitSet(validity.memoryAddress(), bad)) {
        throw fail(column, badView(address, bad, capacities));
      }
      bad = firstBadView(address, bad + 1, n, capacities);
    }
  }

  /** The first row from {@code from} whose view is outside its buffers, or -1. */
  private static long firstBadView(long address, long from, long n, long[] capacities) {
    int count = capacities.length;
    for (long i = from; i < n; i++) {
      long view = address + (i << 4);
      int length = MemoryUtil.getInt(view);
      if (length <= 12) {
        if (length < 0) {
          return i;
        }
        continue;
      }
      int buffer = MemoryUtil.getInt(view + 8);
      int offset = MemoryUtil.getInt(view + 12);
      if (Integer.compareUnsigned(buffer, count) >= 0 || offset < 0 || (long) offset + length > capacities[buffer]) {
        return i;
      }
    }
    return -1;
  }

  /** What is wrong with the view of row {@code i}. */
  private static String badView(long address, long i, long[] capacities) {
    long view = address + (i << 4);
    int length = MemoryUtil.getInt(view);
    if (length < 0) {
      return "view " + i + " has length " + length;
    }
    int buffer = MemoryUtil.getInt(view + 8);
    int offset = MemoryUtil.getInt(view + 12);
    if (buffer < 0 || buffer >= capacities.length) {
      return "view " + i + " names buffer " + buffer + " of its " + capacities.length;
    }
    return "view " + i + " (offset " + offset + ", length " + length + ") is outside its buffer " + buffer + " of "
        + capacities[buffer] + " bytes";
  }

  /**
   * Checks a union's type ids; for a dense union ({@code offsets} given) also each offset, and records in
   * {@code needs} how many values each child must have.
   */
  private static void typeIds(ColumnPlan column, ArrowBuf types, long n, ArrowBuf offsets, long[] needs) {
    long address = types.memoryAddress();
    long offsetAddress = offsets == null ? 0 : offsets.memoryAddress();
    byte[] childOf = column.childOfTypeId;
    for (long i = 0; i < n; i++) {
      byte typeId = MemoryUtil.getByte(address + i);
      int child = typeId < 0 ? -1 : childOf[typeId];
      if (child < 0) {
        throw fail(column, "row " + i + " has type id " + typeId + ", not one of the union's");
      }
      if (offsets != null) {
        int offset = MemoryUtil.getInt(offsetAddress + i * 4);
        if (offset < 0) {
          throw fail(column, "row " + i + " has offset " + offset);
        }
        needs[child] = Math.max(needs[child], offset + 1L);
      }
    }
  }

  /** Run ends: none null, the first above 0, each above the one before, the last covering the column's length. */
  private static void runEnds(ColumnPlan runEnds, ArrowFieldNode runs, ArrowBuf validity, ArrowBuf values, long n) {
    long count = runs.getLength();
    if (hasBits(validity)) {
      long validityAddress = validity.memoryAddress();
      for (long i = 0; i < count; i++) {
        if (!bitSet(validityAddress, i)) {
          throw fail(runEnds, "run end " + i + " is null");
        }
      }
    } else if (runs.getNullCount() != 0) {
      throw fail(runEnds, "has " + runs.getNullCount() + " null run ends");
    }
    if (count == 0) {
      if (n != 0) {
        throw fail(runEnds, "has no runs for " + n + " rows");
      }
      return;
    }
    long address = values.memoryAddress();
    long previous = 0;
    for (long i = 0; i < count; i++) {
      long end = switch (runEnds.byteWidth) {
        case 2 -> MemoryUtil.getShort(address + i * 2);
        case 4 -> MemoryUtil.getInt(address + i * 4);
        default -> MemoryUtil.getLong(address + i * 8);
      };
      if (end <= previous) {
        throw fail(runEnds, "run end " + i + " (" + end + ") is not above " + (i == 0 ? "0" : "run end " + (i - 1)
            + " (" + previous + ")"));
      }
      previous = end;
    }
    if (previous < n) {
      throw fail(runEnds, "last run end " + previous + " is short of the " + n + " rows");
    }
  }

  /** Checks that every non-null index is below its dictionary's length (unsigned indices read as unsigned). */
  private void indices(ColumnPlan column, ArrowBuf validity, ArrowBuf values, long n, long nulls) {
    boolean bits = hasBits(validity);
    if (!bits && nulls != 0) {
      return;
    }
    long size = dictionaryLengths.getOrDefault(column.dictionaryId, 0L);
    long validityAddress = validity.memoryAddress();
    long address = values.memoryAddress();
    boolean unsigned = column.unsignedIndex;
    if (allIndicesBelow(address, n, column.byteWidth, unsigned, size)) {
      // Null rows included: the common case, checked without reading the validity bits.
      return;
    }
    for (long i = 0; i < n; i++) {
      if (bits && !bitSet(validityAddress, i)) {
        continue;
      }
      long index = switch (column.byteWidth) {
        case 1 -> unsigned ? MemoryUtil.getByte(address + i) & 0xFFL : MemoryUtil.getByte(address + i);
        case 2 -> unsigned ? MemoryUtil.getShort(address + i * 2) & 0xFFFFL : MemoryUtil.getShort(address + i * 2);
        case 4 -> unsigned ? MemoryUtil.getInt(address + i * 4) & 0xFFFFFFFFL : MemoryUtil.getInt(address + i * 4);
        default -> MemoryUtil.getLong(address + i * 8);
      };
      // A uint64 index past 2^63 reads as negative here: out of range either way.
      if (index < 0 || index >= size) {
        throw fail(column, "row " + i + " has dictionary index " + (unsigned && column.byteWidth == 8
            ? Long.toUnsignedString(index) : Long.toString(index)) + ", past dictionary " + column.dictionaryId
            + "'s " + size + " values");
      }
    }
  }

  /**
   * Whether every index, null rows' too, is below {@code size}: one branch-free pass per width (an index read as
   * unsigned is below {@code size} exactly when a signed one is 0 or more and below it, so one unsigned compare does).
   */
  private static boolean allIndicesBelow(long address, long n, int width, boolean unsigned, long size) {
    boolean above = false;
    int limit = (int) Math.min(size, Integer.MAX_VALUE);
    switch (width) {
      case 1 -> {
        int mask = unsigned ? 0xFF : -1;
        for (long i = 0; i < n; i++) {
          above |= Integer.compareUnsigned(MemoryUtil.getByte(address + i) & mask, limit) >= 0;
        }
      }
      case 2 -> {
        int mask = unsigned ? 0xFFFF : -1;
        for (long i = 0; i < n; i++) {
          above |= Integer.compareUnsigned(MemoryUtil.getShort(address + (i << 1)) & mask, limit) >= 0;
        }
      }
      case 4 -> {
        for (long i = 0; i < n; i++) {
          above |= Integer.compareUnsigned(MemoryUtil.getInt(address + (i << 2)), limit) >= 0;
        }
      }
      default -> {
        for (long i = 0; i < n; i++) {
          above |= Long.compareUnsigned(MemoryUtil.getLong(address + (i << 3)), size) >= 0;
        }
      }
    }
    return !above;
  }

  private static ThallusException fail(ColumnPlan column, String rule) {
    return ThallusException.of(StatusCode.INVALID_ARGUMENT, column.label + ": " + rule);
  }
}
