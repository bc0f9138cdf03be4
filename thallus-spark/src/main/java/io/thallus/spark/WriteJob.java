package io.thallus.spark;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusIngest;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * One DataFrame write into a table, atomic at job level. Each task ingests its partition's rows as Arrow batches
 * into a staging table of its own ({@code thallus_staging.w<job>_<partition>_<task>}, committed by the task's
 * ingest); the driver's {@link #commit} then, in one transaction, prepares the table (create, replace or truncate as
 * the mode says), inserts every committed task's staging table, drops them and commits. A failed or aborted job,
 * or a task killed at any point, leaves the table as it was: the driver drops every staging table of the job,
 * including those of attempts whose tasks died after their ingest committed.
 */
record WriteJob(ReadConf conf, TableName target, WriteMode mode, String jobId, StructType schema, String timeZone)
    implements Serializable {

  static WriteJob of(ReadConf conf, TableName target, WriteMode mode, String queryId, StructType schema,
      String timeZone) {
    String job = "w" + queryId.replaceAll("[^A-Za-z0-9]", "").toLowerCase(Locale.ROOT);
    return new WriteJob(conf, target, mode, job, schema, timeZone);
  }

  /** The Arrow schema of the batches: Spark's own mapping (timestamps with the session's time zone). */
  Schema arrowSchema() {
    return ArrowUtils.toArrowSchema(schema, timeZone, true, false);
  }

  /** The staging table of one task attempt. */
  TableName stagingTable(int partition, long taskId) {
    return target.staging(jobId + "_" + partition + "_" + taskId);
  }

  /** Before any task runs: the staging schema exists. */
  void prepare() {
    try (ThallusClient client = Connector.connect(conf, 0)) {
      ServerSql.execute(client, "CREATE SCHEMA IF NOT EXISTS " + target.stagingSchemaSql(), false);
    }
  }

  /** Makes the committed tasks' rows the table's, in one transaction; cleans up whatever happens. */
  void commit(List<StagedPart> parts) {
    RuntimeException failure = null;
    try (ThallusClient client = Connector.connect(conf, 0)) {
      try {
        switch (mode) {
          case CREATE, CREATE_OR_REPLACE -> createEmpty(client);
          case TRUNCATE -> ServerSql.execute(client, "DELETE FROM " + target.sql(), true);
          case APPEND -> { }
        }
        if (!parts.isEmpty()) {
          List<String> columns = new ArrayList<>();
          for (String name : schema.fieldNames()) {
            columns.add(Sql.identifier(name));
          }
          String list = String.join(", ", columns);
          List<String> selects = new ArrayList<>();
          for (StagedPart part : parts) {
            selects.add("SELECT " + list + " FROM " + target.staging(part.stagingTable()).sql());
          }
          ServerSql.execute(client, "INSERT INTO " + target.sql() + " (" + list + ") "
              + String.join(" UNION ALL ", selects), true);
          for (StagedPart part : parts) {
            ServerSql.execute(client, "DROP TABLE " + target.staging(part.stagingTable()).sql(), true);
          }
        }
        ServerSql.execute(client, "COMMIT", false);
      } catch (RuntimeException e) {
        try {
          ServerSql.execute(client, "ROLLBACK", false);
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
    } catch (RuntimeException e) {
      failure = e;
      throw e;
    } finally {
      // Whatever the commit did, nothing of the job stays staged; a failed clean-up does not hide a failed commit.
      try {
        cleanUp();
      } catch (RuntimeException e) {
        if (failure == null) {
          throw e;
        }
        failure.addSuppressed(e);
      }
    }
  }

  /** The table, empty, with the DataFrame's columns, inside the commit's transaction (an ingest of no batches). */
  private void createEmpty(ThallusClient client) {
    IngestMode ingestMode = mode == WriteMode.CREATE ? IngestMode.CREATE : IngestMode.REPLACE;
    try (ThallusIngest ingest = client.ingest(IngestRequest.builder(target.sql()).mode(ingestMode)
        .autoCommit(false).build(), arrowSchema())) {
      ingest.finish();
    }
  }

  /** Drops every staging table of this job still there (a failed job, a killed task's committed attempt). */
  void cleanUp() {
    try (ThallusClient client = Connector.connect(conf, 0)) {
      String database = target.catalogOrNull() == null ? "current_database()" : Sql.string(target.catalogOrNull());
      List<List<String>> left = ServerSql.rows(client, "SELECT table_name FROM duckdb_tables() WHERE database_name = "
          + database + " AND schema_name = " + Sql.string(TableName.STAGING_SCHEMA) + " AND starts_with(table_name, "
          + Sql.string(jobId + "_") + ")");
      for (List<String> row : left) {
        ServerSql.execute(client, "DROP TABLE IF EXISTS " + target.staging(row.get(0)).sql(), false);
      }
    }
  }
}
