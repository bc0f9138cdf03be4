package io.thallus.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.types.StructType;

/** One planned read: the SQL with every pushdown applied, split into partitions when Spark asks for them. */
final class ThallusScan implements Scan, Batch, SupportsReportStatistics {
  private final ReadConf conf;
  private final ScanQuery query;
  private final List<String> pushedFilters;
  private final Optional<String> pushedAggregate;
  private final Optional<String> pushedJoin;
  private List<PartitionSpec> partitions;
  private Statistics statistics;

  ThallusScan(ReadConf conf, ScanQuery query, List<String> pushedFilters, Optional<String> pushedAggregate,
      Optional<String> pushedJoin) {
    this.conf = conf;
    this.query = query;
    this.pushedFilters = pushedFilters;
    this.pushedAggregate = pushedAggregate;
    this.pushedJoin = pushedJoin;
  }

  @Override
  public StructType readSchema() {
    return query.readSchema();
  }

  /** What EXPLAIN shows: the servers, what was pushed, and the SQL the server runs (partition predicate aside). */
  @Override
  public String description() {
    StringBuilder text = new StringBuilder("ThallusScan[url=").append(String.join(",",
        conf.sharded().map(ShardedSource::servers).orElse(conf.urls())));
    conf.sharded().ifPresentOrElse(s -> text.append(", sharded=").append(s.name()).append(" (").append(s.shards())
        .append(" shards, ").append(s.partitionsPerShard()).append(" partition(s) each)"),
        () -> conf.dataset().ifPresent(d -> text.append(", dataset=").append(d)));
    if (!conf.namedDatasets().isEmpty()) {
      text.append(", datasets=").append(conf.namedDatasets());
    }
    pushedJoin.ifPresent(j -> text.append(", pushedJoin=[").append(j).append(']'));
    text.append(", pushedFilters=").append(pushedFilters);
    pushedAggregate.ifPresent(a -> text.append(", pushedAggregate=[").append(a).append(']'));
    if (!query.orderBy().isEmpty()) {
      text.append(", pushedTopN=[ORDER BY ").append(String.join(", ", query.orderBy()))
          .append(" LIMIT ").append(query.limit().getAsInt()).append(']');
    } else {
      query.limit().ifPresent(n -> text.append(", pushedLimit=").append(n));
    }
    text.append(", partitions=").append(conf.partitions());
    if (conf.partitions() > 1 && conf.sharded().isEmpty()) {
      try {
        List<PartitionSpec> specs = partitionSpecs();
        text.append(" (").append(specs.size()).append(" by ").append(specs.get(0).split()).append(')');
      } catch (RuntimeException e) {
        // EXPLAIN shows the rest; planning the partitions reports the error itself.
      }
    }
    text.append(", sql=[").append(sql().replace('\n', ' ')).append(']');
    query.narrowSql(new PartitionSpec.Whole()).ifPresent(narrow -> text.append(", runsFirst=[")
        .append(narrow.replace('\n', ' ')).append(']'));
    text.append(']');
    return text.toString();
  }

  /** The connection and source this scan reads (the whole-plan strategy joins scans of one server). */
  ReadConf conf() {
    return conf;
  }

  /** The scan's SQL as a whole (what one partition would run), as EXPLAIN shows it. */
  String sql() {
    return query.sql(new PartitionSpec.Whole());
  }

  /**
   * DuckDB's estimate of the rows the scan's SQL returns (its plan's cardinality, filters and aggregates applied),
   * times Spark's default width of the columns read. Without it Spark takes every thallus read for huge and never
   * broadcasts one in a join (TPC-H Q3's customer side: a sort-merge join where Parquet's gets a broadcast).
   */
  @Override
  public synchronized Statistics estimateStatistics() {
    if (statistics == null) {
      java.util.OptionalLong rows = ShardedReads.scale(conf, ServerSql.estimatedRows(conf, sql()));
      long width = 0;
      for (org.apache.spark.sql.types.StructField field : query.readSchema().fields()) {
        width += field.dataType().defaultSize();
      }
      long size = rows.isPresent() ? Math.max(1, rows.getAsLong()) * Math.max(1, width) : Long.MAX_VALUE;
      statistics = new Statistics() {
        @Override
        public java.util.OptionalLong sizeInBytes() {
          return java.util.OptionalLong.of(size);
        }

        @Override
        public java.util.OptionalLong numRows() {
          return rows;
        }
      };
    }
    return statistics;
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public ColumnarSupportMode columnarSupportMode() {
    return ColumnarSupportMode.SUPPORTED;
  }

  synchronized List<PartitionSpec> partitionSpecs() {
    if (partitions == null) {
      conf.partitionColumn().ifPresent(key -> {
        List<String> names = query.columns().stream().map(TypeMapping.Column::name).toList();
        if (!names.contains(key)) {
          // Said here, on the driver, rather than as a DuckDB binder error in every task.
          throw new IllegalArgumentException("option 'partitionColumn' names no column of the result: '" + key
              + "'; the columns are " + names);
        }
      });
      partitions = Partitioner.plan(conf);
    }
    return partitions;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    if (conf.sharded().isPresent()) {
      return ShardedReads.plan(conf, query);
    }
    List<PartitionSpec> specs = partitionSpecs();
    List<InputPartition> planned = new ArrayList<>(specs.size());
    for (int i = 0; i < specs.size(); i++) {
      // Several servers serving the same data share the partitions round robin.
      int server = i % conf.urls().size();
      String exact = query.sql(specs.get(i));
      java.util.Optional<String> narrow = query.narrowSql(specs.get(i));
      planned.add(new ThallusInputPartition(conf, server, narrow.orElse(exact), narrow.isPresent() ? exact : null,
          query.readSchema().size(), conf.location(server).host()));
    }
    return planned.toArray(InputPartition[]::new);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return ThallusReaderFactory.INSTANCE;
  }
}
