package io.thallus.exchange;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** Deterministic map outputs (each row names its map, partition, batch and row) and what a reader should see. */
final class ExchangeData {
  static final Schema SCHEMA = new Schema(List.of(
      new Field("id", FieldType.nullable(new ArrowType.Int(64, true)), null),
      new Field("label", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

  private ExchangeData() {}

  static long id(int map, int partition, int batch, int row) {
    return map * 1_000_000_000L + partition * 1_000_000L + batch * 10_000L + row;
  }

  /** Rows of batch {@code batch} of map {@code map} for {@code partition}: a few, or a few thousand. */
  static int rows(int map, int partition, int batch) {
    return 1 + ((map * 31 + partition * 7 + batch * 13) % 5) * 700;
  }

  static void fill(VectorSchemaRoot root, int map, int partition, int batch) {
    int rows = rows(map, partition, batch);
    BigIntVector ids = (BigIntVector) root.getVector("id");
    VarCharVector labels = (VarCharVector) root.getVector("label");
    root.allocateNew();
    for (int i = 0; i < rows; i++) {
      long id = id(map, partition, batch, i);
      ids.setSafe(i, id);
      if (i % 11 == 3) {
        labels.setNull(i);
      } else {
        labels.setSafe(i, ("m" + map + "p" + partition + "b" + batch + "r" + i).getBytes(StandardCharsets.UTF_8));
      }
    }
    root.setRowCount(rows);
  }

  /** Writes {@code batches} batches per partition for map {@code map}, partitions interleaved as a map task would. */
  static long[] writeMap(ExchangeEndpoint endpoint, BufferAllocator allocator, int shuffle, int map, int partitions,
      int batches, List<EndpointAddress> pushTargets) {
    try (MapOutput output = endpoint.open(shuffle, map, SCHEMA, partitions, pushTargets);
         VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      for (int b = 0; b < batches; b++) {
        for (int p = 0; p < partitions; p++) {
          fill(root, map, p, b);
          output.add(p, root);
        }
      }
      return output.commit();
    }
  }

  /** The rows a reader of {@code partition} must see for {@code maps}, each map's in order. */
  static List<String> expected(int partition, List<Integer> maps, int batches) {
    List<String> rows = new ArrayList<>();
    for (int map : maps) {
      for (int b = 0; b < batches; b++) {
        for (int i = 0; i < rows(map, partition, b); i++) {
          rows.add(id(map, partition, b, i) + "|" + (i % 11 == 3 ? "null" : "m" + map + "p" + partition + "b" + b
              + "r" + i));
        }
      }
    }
    return rows;
  }

  /** Every row the reader answers, as text, in order. */
  static List<String> readAll(PartitionReader reader) {
    List<String> rows = new ArrayList<>();
    VectorSchemaRoot batch;
    while ((batch = reader.next()) != null) {
      BigIntVector ids = (BigIntVector) batch.getVector("id");
      VarCharVector labels = (VarCharVector) batch.getVector("label");
      for (int i = 0; i < batch.getRowCount(); i++) {
        rows.add(ids.get(i) + "|" + (labels.isNull(i) ? "null" : new String(labels.get(i), StandardCharsets.UTF_8)));
      }
    }
    return rows;
  }

  /** Rows of a partition grouped by map id (from the id), each map's rows in read order. */
  static Map<Long, List<String>> byMap(List<String> rows) {
    Map<Long, List<String>> grouped = new java.util.TreeMap<>();
    for (String row : rows) {
      long id = Long.parseLong(row.substring(0, row.indexOf('|')));
      grouped.computeIfAbsent(id / 1_000_000_000L, m -> new ArrayList<>()).add(row);
    }
    return grouped;
  }
}
