package io.thallus.spark;

import io.thallus.ThallusClient;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
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
public final class ThallusSource implements TableProvider, DataSourceRegister {
  private ReadConf inferredFor;
  private List<TypeMapping.Column> inferred;

  public ThallusSource() {}

  @Override
  public String shortName() {
    return "thallus";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    ReadConf conf = ReadConf.from(options.asCaseSensitiveMap());
    return TypeMapping.schema(columns(conf));
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    ReadConf conf = ReadConf.from(properties);
    return new ThallusTable(conf, columns(conf));
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
