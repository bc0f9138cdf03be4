package io.thallus.spark;

import io.thallus.ThallusClient;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The Spark DataSource V2 for Thallus servers, registered as {@code thallus}:
 *
 * <pre>{@code
 * Dataset<Row> trips = spark.read().format("thallus")
 *     .option("url", "thallus://server:47470")
 *     .option("dataset", "trips/")                       // or .option("query", "SELECT ... FROM dataset")
 *     .option("partitions", "8")
 *     .load();
 * }</pre>
 *
 * or in SQL: {@code CREATE TEMPORARY VIEW trips USING thallus OPTIONS (url '...', dataset 'trips/')}. The schema
 * comes from the server without running the query; columns, filters, aggregates, limits and top-N are pushed into
 * the SQL the server runs, and batches reach Spark as Arrow column vectors without a copy. The options are listed
 * in the README's Spark section.
 */
public final class ThallusSource implements TableProvider, DataSourceRegister, CreatableRelationProvider {
  private ReadConf inferredFor;
  private List<TypeMapping.Column> inferred;
  private ReadConf resolvedFrom;
  private ReadConf resolved;

  public ThallusSource() {}

  @Override
  public String shortName() {
    return "thallus";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    ReadConf conf = resolve(ReadConf.from(options.asCaseSensitiveMap()));
    return TypeMapping.schema(columns(conf));
  }

  /** A write hands over its DataFrame's schema; a read without a schema of its own asks {@link #inferSchema}. */
  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  /**
   * The table to read. For a write, Spark asks here first: a table that does not exist yet is a placeholder that
   * takes no batch writes, so Spark hands the write to {@link #createRelation}, which knows the save mode.
   */
  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    ReadConf conf = resolve(ReadConf.from(properties));
    try {
      // A read asked inferSchema first, so the columns are known and this costs no round trip.
      return new ThallusTable(conf, columns(conf));
    } catch (io.thallus.ThallusException e) {
      if (conf.table().isPresent() && conf.dataset().isEmpty() && !FormatWrites.tableExists(conf)) {
        return new FormatWrites.MissingTable(conf, schema);
      }
      throw e;
    }
  }

  /**
   * {@code df.write.format("thallus").option("table", ...).mode(...).save()}: the DataFrame's partitions are
   * ingested in parallel and committed in one transaction, as through {@link ThallusCatalog}. append adds rows
   * (creating a missing table), overwrite replaces every row (creating a missing table; an existing one keeps its
   * definition), errorifexists creates the table and fails if it exists, ignore creates it or does nothing.
   */
  @Override
  public BaseRelation createRelation(SQLContext sqlContext, SaveMode mode,
      scala.collection.immutable.Map<String, String> parameters, Dataset<Row> data) {
    Map<String, String> options = scala.jdk.javaapi.CollectionConverters.asJava(parameters);
    FormatWrites.save(options, mode, data);
    StructType schema = data.schema();
    return new BaseRelation() {
      @Override
      public SQLContext sqlContext() {
        return sqlContext;
      }

      @Override
      public StructType schema() {
        return schema;
      }
    };
  }

  /**
   * A sharded read's layout, learned once for {@link #inferSchema} and the {@link #getTable} that follows with the
   * same options (Spark asks both of one instance): the servers are asked once per read.
   */
  private synchronized ReadConf resolve(ReadConf conf) {
    if (resolved == null || !conf.equals(resolvedFrom)) {
      resolved = ShardedReads.resolve(conf);
      resolvedFrom = conf;
    }
    return resolved;
  }

  /** Spark asks for the schema, then for the table with the same options: the server is asked once. */
  private synchronized List<TypeMapping.Column> columns(ReadConf conf) {
    if (inferred == null || !conf.equals(inferredFor)) {
      try (ThallusClient client = Connector.connect(conf, 0)) {
        Schema schema = client.schema(Connector.request(conf, conf.baseSql()));
        inferred = TypeMapping.columns(schema.getFields());
        inferredFor = conf;
      }
    }
    return inferred;
  }
}
