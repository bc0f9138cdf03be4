package io.thallus.internal.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ViewVarCharVector;
import org.apache.arrow.vector.complex.DenseUnionVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.ListViewVector;
import org.apache.arrow.vector.complex.RunEndEncodedVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.UnionVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.Types.MinorType;
import org.apache.arrow.vector.types.UnionMode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One test per rule of {@link BatchValidator}: a real Arrow batch of the type, unloaded as the wire carries it (each
 * buffer exactly as long as its bytes), passes; the same batch with one buffer, offset, index, length or count
 * overwritten is refused with INVALID_ARGUMENT naming the column and the rule.
 */
class BatchValidatorTest {
  private BufferAllocator allocator;
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeEach
  void setUp() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    allocator.close();
  }

  // ---- fixtures

  /** The root's batch as it travels: each buffer a slice exactly as long as the bytes the unloader sends. */
  private ArrowRecordBatch wire(VectorSchemaRoot root) {
    try (ArrowRecordBatch unloaded = new VectorUnloader(root).getRecordBatch()) {
      return rebuilt(unloaded.getLength(), unloaded.getNodes(), exact(unloaded.getBuffers()),
          unloaded.getVariadicBufferCounts());
    }
  }

  private static List<ArrowBuf> exact(List<ArrowBuf> buffers) {
    List<ArrowBuf> slices = new ArrayList<>();
    for (ArrowBuf buffer : buffers) {
      slices.add(buffer.slice(0, buffer.readableBytes()));
    }
    return slices;
  }

  private ArrowRecordBatch rebuilt(int length, List<ArrowFieldNode> nodes, List<ArrowBuf> buffers,
      List<Long> variadic) {
    ArrowRecordBatch batch = new ArrowRecordBatch(length, nodes, buffers,
        org.apache.arrow.vector.compression.NoCompressionCodec.DEFAULT_BODY_COMPRESSION, variadic, false);
    open.add(batch);
    return batch;
  }

  private static ArrowRecordBatch withNodes(BatchValidatorTest test, ArrowRecordBatch batch, int length,
      List<ArrowFieldNode> nodes) {
    return test.rebuilt(length, nodes, batch.getBuffers(), batch.getVariadicBufferCounts());
  }

  private VectorSchemaRoot root(FieldVector... vectors) {
    VectorSchemaRoot root = new VectorSchemaRoot(List.of(vectors));
    open.add(root);
    return root;
  }

  private VarCharVector strings(String name, String... values) {
    VarCharVector vector = new VarCharVector(name, allocator);
    vector.allocateNew();
    for (int i = 0; i < values.length; i++) {
      if (values[i] == null) {
        vector.setNull(i);
      } else {
        vector.setSafe(i, values[i].getBytes(StandardCharsets.UTF_8));
      }
    }
    vector.setValueCount(values.length);
    return vector;
  }

  private BigIntVector longs(String name, int rows) {
    BigIntVector vector = new BigIntVector(name, allocator);
    vector.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      vector.set(i, i);
    }
    vector.setValueCount(rows);
    return vector;
  }

  private static void passes(Schema schema, ArrowRecordBatch batch) {
    assertThatCode(() -> new BatchValidator(schema).checkRecords(batch)).doesNotThrowAnyException();
  }

  private static void refused(Schema schema, ArrowRecordBatch batch, String message) {
    assertThatThrownBy(() -> new BatchValidator(schema).checkRecords(batch))
        .isInstanceOfSatisfying(ThallusException.class,
            e -> assertThat(e.status().code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
        .hasMessageContaining(message);
  }

  private static ArrowFieldNode node(long length, long nulls) {
    return new ArrowFieldNode(length, nulls);
  }

  // ---- record-level rules

  @Test
  void validBatchesOfEveryKindPass() {
    VectorSchemaRoot root = root(longs("n", 5), strings("s", "a", null, "ccc", "", "eeeee"));
    passes(root.getSchema(), wire(root));
  }

  @Test
  void aColumnWhoseLengthIsNotTheBatchsIsRefused() {
    VectorSchemaRoot root = root(longs("n", 4));
    ArrowRecordBatch batch = wire(root);
    refused(root.getSchema(), withNodes(this, batch, 4, List.of(node(3, 0))), "column \"n\": has 3 values, the batch 4 rows");
  }

  @Test
  void aRowCountTheBuffersDoNotCarryIsRefused() {
    VectorSchemaRoot root = root(longs("n", 8192));
    ArrowRecordBatch batch = wire(root);
    refused(root.getSchema(), withNodes(this, batch, 1_008_192, List.of(node(1_008_192, 0))),
        "column \"n\": validity buffer has 1024 bytes, 1008192 rows need 126024");
  }

  @Test
  void fixedWidthValuesShorterThanTheLengthAreRefused() {
    VectorSchemaRoot root = root(longs("n", 16));
    ArrowRecordBatch batch = wire(root);
    List<ArrowBuf> buffers = List.of(batch.getBuffers().get(0), batch.getBuffers().get(1).slice(0, 64));
    refused(root.getSchema(), rebuilt(16, batch.getNodes(), buffers, List.of()),
        "column \"n\": values buffer has 64 bytes, 128 needed");
  }

  @Test
  void anEmptyValidityIsAllowedOnlyWithoutNulls() {
    VectorSchemaRoot root = root(longs("n", 16));
    ArrowRecordBatch batch = wire(root);
    List<ArrowBuf> buffers = List.of(batch.getBuffers().get(0).slice(0, 0), batch.getBuffers().get(1));
    passes(root.getSchema(), rebuilt(16, batch.getNodes(), buffers, List.of()));
    refused(root.getSchema(), rebuilt(16, List.of(node(16, 1)), buffers, List.of()),
        "column \"n\": validity buffer has 0 bytes, 16 rows need 2");
  }

  @Test
  void aNullCountOverTheLengthIsRefused() {
    VectorSchemaRoot root = root(longs("n", 4));
    ArrowRecordBatch batch = wire(root);
    refused(root.getSchema(), withNodes(this, batch, 4, List.of(node(4, 5))),
        "column \"n\": null count 5 is outside its length 4");
  }

  @Test
  void missingOrExtraBuffersAndNodesAreRefused() {
    VectorSchemaRoot root = root(longs("n", 4));
    ArrowRecordBatch batch = wire(root);
    refused(root.getSchema(), rebuilt(4, batch.getNodes(), List.of(batch.getBuffers().get(0)), List.of()),
        "column \"n\": has no values buffer (the batch has 1)");
    List<ArrowBuf> extra = new ArrayList<>(batch.getBuffers());
    extra.add(batch.getBuffers().get(1));
    refused(root.getSchema(), rebuilt(4, batch.getNodes(), extra, List.of()), "the batch has 3 buffers, its schema 2");
    refused(root.getSchema(), withNodes(this, batch, 4, List.of(node(4, 0), node(4, 0))),
        "the batch has 2 field nodes, its schema 1");
    refused(root.getSchema(), withNodes(this, batch, 4, List.of()), "column \"n\": has no field node");
  }

  @Test
  void booleansArePackedBits() {
    BitVector bits = new BitVector("b", allocator);
    bits.allocateNew(20);
    for (int i = 0; i < 20; i++) {
      bits.set(i, i % 2);
    }
    bits.setValueCount(20);
    VectorSchemaRoot root = root(bits);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    List<ArrowBuf> buffers = List.of(batch.getBuffers().get(0), batch.getBuffers().get(1).slice(0, 2));
    refused(root.getSchema(), rebuilt(20, batch.getNodes(), buffers, List.of()),
        "column \"b\": values buffer has 2 bytes, 3 needed");
  }

  // ---- offsets

  private void stringsWithOffset(int index, int value, String message) {
    VectorSchemaRoot root = root(strings("s", "aaaa", "bbbb", "cccc", "dddd"));
    ArrowRecordBatch batch = wire(root);
    batch.getBuffers().get(1).setInt(index * 4L, value);
    refused(root.getSchema(), batch, message);
  }

  @Test
  void offsetsThatGoBackwardsAreRefused() {
    stringsWithOffset(3, -8, "column \"s\": offset 3 (-8) is below offset 2 (8)");
  }

  @Test
  void aNegativeFirstOffsetIsRefused() {
    stringsWithOffset(0, -4, "column \"s\": offset 0 (-4) is below 0");
  }

  @Test
  void offsetsThatJumpPastTheDataAreRefused() {
    stringsWithOffset(4, 16 + 4096, "column \"s\": last offset 4112 is past the data buffer's 16 bytes");
  }

  @Test
  void offsetsThatJumpAndComeBackAreRefused() {
    stringsWithOffset(2, 1 << 30, "column \"s\": offset 3 (12) is below offset 2 (1073741824)");
  }

  @Test
  void anOffsetsBufferShorterThanTheRowsIsRefused() {
    VectorSchemaRoot root = root(strings("s", "a", "b", "c"));
    ArrowRecordBatch batch = wire(root);
    List<ArrowBuf> buffers = List.of(batch.getBuffers().get(0), batch.getBuffers().get(1).slice(0, 8),
        batch.getBuffers().get(2));
    refused(root.getSchema(), rebuilt(3, batch.getNodes(), buffers, List.of()),
        "column \"s\": offsets buffer has 8 bytes, 3 rows need 16");
  }

  @Test
  void largeOffsetsAreCheckedAsLongs() {
    LargeVarCharVector large = new LargeVarCharVector("l", allocator);
    large.allocateNew();
    for (int i = 0; i < 4; i++) {
      large.setSafe(i, "xyz".getBytes(StandardCharsets.UTF_8));
    }
    large.setValueCount(4);
    VectorSchemaRoot root = root(large);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    batch.getBuffers().get(1).setLong(2 * 8L, -1L << 40);
    refused(root.getSchema(), batch, "column \"l\": offset 2 (-1099511627776) is below offset 1 (3)");
  }

  // ---- views

  private VectorSchemaRoot viewRoot() {
    ViewVarCharVector views = new ViewVarCharVector("v", allocator);
    views.allocateNew();
    views.setSafe(0, "short".getBytes(StandardCharsets.UTF_8));
    views.setSafe(1, "a string longer than twelve bytes".getBytes(StandardCharsets.UTF_8));
    views.setNull(2);
    views.setValueCount(3);
    return root(views);
  }

  @Test
  void viewsInsideTheirBuffersPassAndANullRowsViewIsNotRead() {
    VectorSchemaRoot root = viewRoot();
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    batch.getBuffers().get(1).setInt(32, 100);
    batch.getBuffers().get(1).setInt(32 + 8, 9);
    passes(root.getSchema(), batch);
    batch.getBuffers().get(0).setByte(0, 0b111);
    refused(root.getSchema(), batch, "column \"v\": view 2 names buffer 9 of its 1");
  }

  @Test
  void aViewPastItsBufferIsRefused() {
    VectorSchemaRoot root = viewRoot();
    ArrowRecordBatch batch = wire(root);
    batch.getBuffers().get(1).setInt(16 + 12, 4096);
    refused(root.getSchema(), batch, "column \"v\": view 1 (offset 4096, length 33) is outside its buffer 0");
  }

  @Test
  void aViewNamingAMissingBufferIsRefused() {
    VectorSchemaRoot root = viewRoot();
    ArrowRecordBatch batch = wire(root);
    batch.getBuffers().get(1).setInt(16 + 8, 3);
    refused(root.getSchema(), batch, "column \"v\": view 1 names buffer 3 of its 1");
  }

  @Test
  void aNegativeViewLengthIsRefused() {
    VectorSchemaRoot root = viewRoot();
    ArrowRecordBatch batch = wire(root);
    batch.getBuffers().get(1).setInt(0, -5);
    refused(root.getSchema(), batch, "column \"v\": view 0 has length -5");
  }

  @Test
  void aVariadicCountBeyondTheBuffersIsRefused() {
    VectorSchemaRoot root = viewRoot();
    ArrowRecordBatch batch = wire(root);
    refused(root.getSchema(), rebuilt(3, batch.getNodes(), batch.getBuffers(), List.of(5L)),
        "column \"v\": claims 5 variadic buffers, the batch has 1 left");
  }

  // ---- nested

  private VectorSchemaRoot listRoot() {
    ListVector list = ListVector.empty("l", allocator);
    UnionListWriter writer = list.getWriter();
    for (int row = 0; row < 3; row++) {
      writer.setPosition(row);
      writer.startList();
      for (int i = 0; i <= row; i++) {
        writer.writeInt(i);
      }
      writer.endList();
    }
    writer.setValueCount(3);
    return root(list);
  }

  @Test
  void aListWhoseOffsetsPassItsChildIsRefused() {
    VectorSchemaRoot root = listRoot();
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    batch.getBuffers().get(1).setInt(3 * 4L, 7);
    refused(root.getSchema(), batch, "column \"l.$data$\": has 6 values, its parent needs 7");
  }

  @Test
  void aLargeListsOffsetsAreChecked() {
    LargeListVector list = LargeListVector.empty("l", allocator);
    var writer = list.getWriter();
    for (int row = 0; row < 2; row++) {
      writer.setPosition(row);
      writer.startList();
      writer.writeBigInt(row);
      writer.endList();
    }
    writer.setValueCount(2);
    VectorSchemaRoot root = root(list);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    batch.getBuffers().get(1).setLong(8, -3);
    refused(root.getSchema(), batch, "column \"l\": offset 1 (-3) is below offset 0 (0)");
  }

  @Test
  void aFixedSizeListsChildMustHoldLengthTimesSize() {
    FixedSizeListVector list = FixedSizeListVector.empty("f", 3, allocator);
    list.addOrGetVector(FieldType.nullable(MinorType.INT.getType()));
    IntVector values = (IntVector) list.getDataVector();
    list.allocateNew();
    values.allocateNew(6);
    for (int i = 0; i < 6; i++) {
      values.setSafe(i, i);
    }
    values.setValueCount(6);
    list.setNotNull(0);
    list.setNotNull(1);
    list.setValueCount(2);
    VectorSchemaRoot root = root(list);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    refused(root.getSchema(), withNodes(this, batch, 3, List.of(node(3, 0), node(6, 0))),
        "column \"f.$data$\": has 6 values, its parent needs 9");
  }

  @Test
  void aStructsChildrenMustBeAsLongAsItIs() {
    StructVector struct = StructVector.empty("st", allocator);
    IntVector a = struct.addOrGet("a", FieldType.nullable(MinorType.INT.getType()), IntVector.class);
    struct.allocateNew();
    for (int i = 0; i < 4; i++) {
      struct.setIndexDefined(i);
      a.setSafe(i, i);
    }
    a.setValueCount(4);
    struct.setValueCount(4);
    VectorSchemaRoot root = root(struct);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    refused(root.getSchema(), withNodes(this, batch, 4, List.of(node(4, 0), node(2, 0))),
        "column \"st.a\": has 2 values, its parent needs 4");
  }

  @Test
  void aListViewPastItsChildIsRefused() {
    ListViewVector list = ListViewVector.empty("lv", allocator);
    var writer = list.getWriter();
    for (int row = 0; row < 2; row++) {
      writer.setPosition(row);
      writer.startListView();
      writer.writeInt(row);
      writer.endListView();
    }
    writer.setValueCount(2);
    VectorSchemaRoot root = root(list);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    batch.getBuffers().get(2).setInt(4, 9);
    refused(root.getSchema(), batch, "column \"lv.$data$\": has 2 values, its parent needs 10");
    batch.getBuffers().get(2).setInt(4, -1);
    refused(root.getSchema(), batch, "column \"lv\": row 1 has offset 1 and size -1");
  }

  @Test
  void aSparseUnionsTypeIdsMustBeItsOwn() {
    UnionVector union = UnionVector.empty("u", allocator);
    union.allocateNew();
    var ints = new org.apache.arrow.vector.holders.NullableIntHolder();
    ints.isSet = 1;
    ints.value = 5;
    var longs = new org.apache.arrow.vector.holders.NullableBigIntHolder();
    longs.isSet = 1;
    longs.value = 6;
    union.setType(0, MinorType.INT);
    union.setSafe(0, ints);
    union.setType(1, MinorType.BIGINT);
    union.setSafe(1, longs);
    union.setValueCount(2);
    VectorSchemaRoot root = root(union);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    batch.getBuffers().get(0).setByte(1, 77);
    refused(root.getSchema(), batch, "column \"u\": row 1 has type id 77, not one of the union's");
  }

  @Test
  void aDenseUnionsOffsetsMustBeInsideTheirChild() {
    DenseUnionVector union = DenseUnionVector.empty("d", allocator);
    union.allocateNew();
    byte intType = union.registerNewTypeId(Field.nullable("i", MinorType.INT.getType()));
    union.addVector(intType, new IntVector("i", allocator));
    IntVector ints = (IntVector) union.getVectorByType(intType);
    for (int i = 0; i < 3; i++) {
      union.setTypeId(i, intType);
      ints.setSafe(i, i * 10);
      union.getOffsetBuffer().setInt(i * 4L, i);
    }
    ints.setValueCount(3);
    union.setValueCount(3);
    VectorSchemaRoot root = root(union);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    batch.getBuffers().get(1).setInt(8, 3);
    refused(root.getSchema(), batch, "column \"d.i\": has 3 values, its parent needs 4");
    batch.getBuffers().get(1).setInt(8, -2);
    refused(root.getSchema(), batch, "column \"d\": row 2 has offset -2");
  }

  @Test
  void runEndsMustRiseAndCoverTheRows() {
    Field runEnds = Field.notNullable("run_ends", MinorType.INT.getType());
    Field values = Field.nullable("values", MinorType.BIGINT.getType());
    Field ree = new Field("r", FieldType.notNullable(ArrowType.RunEndEncoded.INSTANCE), List.of(runEnds, values));
    RunEndEncodedVector vector = (RunEndEncodedVector) ree.createVector(allocator);
    vector.allocateNew();
    IntVector ends = (IntVector) vector.getRunEndsVector();
    BigIntVector valueVector = (BigIntVector) vector.getValuesVector();
    ends.allocateNew(2);
    ends.set(0, 2);
    ends.set(1, 5);
    ends.setValueCount(2);
    valueVector.allocateNew(2);
    valueVector.set(0, 7);
    valueVector.set(1, 8);
    valueVector.setValueCount(2);
    vector.setValueCount(5);
    VectorSchemaRoot root = root(vector);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    batch.getBuffers().get(1).setInt(4, 1);
    refused(root.getSchema(), batch, "column \"r.run_ends\": run end 1 (1) is not above run end 0 (2)");
    batch.getBuffers().get(1).setInt(4, 4);
    refused(root.getSchema(), batch, "column \"r.run_ends\": last run end 4 is short of the 5 rows");
    batch.getBuffers().get(1).setInt(4, 5);
    batch.getBuffers().get(0).setByte(0, 0b01);
    refused(root.getSchema(), batch, "column \"r.run_ends\": run end 1 is null");
  }

  // ---- dictionaries

  private static final long DICTIONARY_ID = 7;

  private Schema dictionarySchema(ArrowType.Int indexType) {
    Field field = new Field("d", new FieldType(true, ArrowType.Utf8.INSTANCE,
        new DictionaryEncoding(DICTIONARY_ID, false, indexType)), null);
    return new Schema(List.of(field));
  }

  private BatchContents dictionaryBatch(FieldVector indices, String... words) {
    VectorSchemaRoot values = root(strings("d", words));
    ArrowDictionaryBatch dictionary = new ArrowDictionaryBatch(DICTIONARY_ID, wire(values), false);
    VectorSchemaRoot records = root(indices);
    return new BatchContents(List.of(dictionary), wire(records));
  }

  @Test
  void dictionaryIndicesBelowTheDictionaryPass() {
    IntVector indices = new IntVector("d", allocator);
    indices.allocateNew(3);
    indices.set(0, 0);
    indices.set(1, 1);
    indices.setNull(2);
    indices.setValueCount(3);
    BatchContents contents = dictionaryBatch(indices, "x", "y");
    assertThatCode(() -> new BatchValidator(dictionarySchema(new ArrowType.Int(32, true))).check(contents))
        .doesNotThrowAnyException();
  }

  @Test
  void aDictionaryIndexPastTheDictionaryIsRefused() {
    IntVector indices = new IntVector("d", allocator);
    indices.allocateNew(3);
    indices.set(0, 0);
    indices.set(1, 2);
    indices.set(2, 1);
    indices.setValueCount(3);
    BatchContents contents = dictionaryBatch(indices, "x", "y");
    assertThatThrownBy(() -> new BatchValidator(dictionarySchema(new ArrowType.Int(32, true))).check(contents))
        .hasMessageContaining("column \"d\": row 1 has dictionary index 2, past dictionary 7's 2 values");
  }

  @Test
  void aNegativeIndexIsRefusedAndANullOneIsNotRead() {
    IntVector indices = new IntVector("d", allocator);
    indices.allocateNew(2);
    indices.set(0, 0);
    indices.set(1, -1);
    indices.setValueCount(2);
    BatchContents contents = dictionaryBatch(indices, "x");
    Schema schema = dictionarySchema(new ArrowType.Int(32, true));
    assertThatThrownBy(() -> new BatchValidator(schema).check(contents))
        .hasMessageContaining("column \"d\": row 1 has dictionary index -1, past dictionary 7's 1 values");
    indices.setNull(1);
    BatchContents withNull = dictionaryBatch(indices, "x");
    assertThatCode(() -> new BatchValidator(schema).check(withNull)).doesNotThrowAnyException();
  }

  @Test
  void theValidityBitsNotTheNullCountSayWhichIndicesAreRead() {
    IntVector indices = new IntVector("d", allocator);
    indices.allocateNew(2);
    indices.set(0, 0);
    indices.set(1, 9);
    indices.setValueCount(2);
    BatchContents contents = dictionaryBatch(indices, "x");
    // The bits say both rows are valid; a null count of 2 must not hide row 1 (Arrow's loader keeps the bits).
    ArrowRecordBatch records = contents.records();
    ArrowRecordBatch allNull = withNodes(this, records, 2, List.of(node(2, 2)));
    BatchContents lying = new BatchContents(contents.dictionaries(), allNull);
    assertThatThrownBy(() -> new BatchValidator(dictionarySchema(new ArrowType.Int(32, true))).check(lying))
        .hasMessageContaining("column \"d\": row 1 has dictionary index 9, past dictionary 7's 1 values");
  }

  @Test
  void unsignedIndicesAreReadUnsigned() {
    UInt1Vector indices = new UInt1Vector("d", allocator);
    indices.allocateNew(1);
    indices.set(0, 200);
    indices.setValueCount(1);
    BatchContents contents = dictionaryBatch(indices, "x", "y");
    assertThatThrownBy(() -> new BatchValidator(dictionarySchema(new ArrowType.Int(8, false))).check(contents))
        .hasMessageContaining("row 0 has dictionary index 200, past dictionary 7's 2 values");
  }

  @Test
  void aDictionaryIsCheckedAsItsValuesColumn() {
    IntVector indices = new IntVector("d", allocator);
    indices.allocateNew(1);
    indices.set(0, 0);
    indices.setValueCount(1);
    BatchContents contents = dictionaryBatch(indices, "ab", "cd");
    contents.dictionaries().get(0).getDictionary().getBuffers().get(1).setInt(4, 900);
    assertThatThrownBy(() -> new BatchValidator(dictionarySchema(new ArrowType.Int(32, true))).check(contents))
        .hasMessageContaining("dictionary 7 of column \"d\": offset 2 (4) is below offset 1 (900)");
  }

  @Test
  void indicesWithoutTheirDictionaryAndUnknownDictionariesAreRefused() {
    IntVector indices = new IntVector("d", allocator);
    indices.allocateNew(1);
    indices.set(0, 0);
    indices.setValueCount(1);
    VectorSchemaRoot records = root(indices);
    Schema schema = dictionarySchema(new ArrowType.Int(32, true));
    assertThatThrownBy(() -> new BatchValidator(schema).checkRecords(wire(records)))
        .hasMessageContaining("row 0 has dictionary index 0, past dictionary 7's 0 values");
    VectorSchemaRoot values = root(strings("d", "x"));
    ArrowDictionaryBatch stranger = new ArrowDictionaryBatch(8, wire(values), false);
    assertThatThrownBy(() -> new BatchValidator(schema).checkDictionary(stranger))
        .hasMessageContaining("dictionary 8, which no column of its schema uses");
  }

  @Test
  void aDeltaDictionaryAddsToTheLengthAndAReplacementResetsIt() {
    Schema schema = dictionarySchema(new ArrowType.Int(32, true));
    BatchValidator validator = new BatchValidator(schema);
    validator.checkDictionary(new ArrowDictionaryBatch(DICTIONARY_ID, wire(root(strings("d", "x", "y"))), false));
    validator.checkDictionary(new ArrowDictionaryBatch(DICTIONARY_ID, wire(root(strings("d", "z"))), true));
    IntVector indices = new IntVector("d", allocator);
    indices.allocateNew(1);
    indices.set(0, 2);
    indices.setValueCount(1);
    ArrowRecordBatch records = wire(root(indices));
    validator.checkRecords(records);
    validator.checkDictionary(new ArrowDictionaryBatch(DICTIONARY_ID, wire(root(strings("d", "x"))), false));
    assertThatThrownBy(() -> validator.checkRecords(records)).hasMessageContaining("past dictionary 7's 1 values");
  }

  // ---- other types

  @Test
  void decimalsTimestampsAndDoublesAreFixedWidth() {
    DecimalVector decimals = new DecimalVector("dec", allocator, 20, 2);
    decimals.allocateNew(3);
    Float8Vector doubles = new Float8Vector("dbl", allocator);
    doubles.allocateNew(3);
    TimeStampMicroVector times = new TimeStampMicroVector("ts", allocator);
    times.allocateNew(3);
    for (int i = 0; i < 3; i++) {
      decimals.set(i, i);
      doubles.set(i, i);
      times.set(i, i);
    }
    decimals.setValueCount(3);
    doubles.setValueCount(3);
    times.setValueCount(3);
    VectorSchemaRoot root = root(decimals, doubles, times);
    ArrowRecordBatch batch = wire(root);
    passes(root.getSchema(), batch);
    List<ArrowBuf> buffers = new ArrayList<>(batch.getBuffers());
    buffers.set(1, buffers.get(1).slice(0, 40));
    refused(root.getSchema(), rebuilt(3, batch.getNodes(), buffers, List.of()),
        "column \"dec\": values buffer has 40 bytes, 48 needed");
  }

  @Test
  void aCompressedBodyIsRefused() {
    VectorSchemaRoot root = root(longs("n", 2));
    ArrowRecordBatch batch = wire(root);
    ArrowRecordBatch compressed = new ArrowRecordBatch(2, batch.getNodes(), batch.getBuffers(),
        new org.apache.arrow.vector.ipc.message.ArrowBodyCompression((byte) 0,
            org.apache.arrow.flatbuf.BodyCompressionMethod.BUFFER), List.of(), false);
    open.add(compressed);
    refused(root.getSchema(), compressed, "the batch is compressed");
  }
}
