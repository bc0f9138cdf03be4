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
 * into a staging table of its own beside the table ({@code thallus_staging_w<job>_<partition>_<task>}, committed by
 * the task's ingest); the driver's {@link #commit} then makes them the table's in one transaction. A failed or
 * aborted job, or a task killed at any point, leaves the table as it was: the driver drops every staging table of
 * the job, including those of attempts whose tasks died after their ingest committed.
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

  /**
   * Makes the committed tasks' rows the table's, in one transaction; cleans up whatever happens. Append and
   * truncate insert every staging table into the table. Create and replace keep the largest staging table, insert the
   * others into it and rename it into the table's place (the copy of the largest part saved), creating the table
   * empty when no task wrote anything.
   */
  void commit(List<StagedPart> parts) {
    RuntimeException failure = null;
    try (ThallusClient client = Connector.connect(conf, 0)) {
      try {
        boolean creates = mode == WriteMode.CREATE || mode == WriteMode.CREATE_OR_REPLACE;
        if (creates && parts.isEmpty()) {
          createEmpty(client);
        } else if (creates) {
          StagedPart largest = parts.stream().max(java.util.Comparator.comparingLong(StagedPart::rows)).orElseThrow();
          List<StagedPart> others = new ArrayList<>(parts);
          others.remove(largest);
          insert(client, target.staging(largest.stagingTable()), others);
          if (mode == WriteMode.CREATE_OR_REPLACE && "table".equals(ServerSql.kind(client, target))) {
            ServerSql.execute(client, "DROP TABLE " + target.sql(), true);
          }
          // A table (or view) of that name, for CREATE, makes the rename fail: DuckDB says it exists.
          ServerSql.execute(client, "ALTER TABLE " + target.staging(largest.stagingTable()).sql() + " RENAME TO "
              + Sql.identifier(target.table()), true);
        } else {
          if (mode == WriteMode.TRUNCATE) {
            ServerSql.execute(client, "DELETE FROM " + target.sql(), true);
          }
          insert(client, target, parts);
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

  /** Inserts the rows of {@code parts}' staging tables into {@code into} and drops them, in the transaction. */
  private void insert(ThallusClient client, TableName into, List<StagedPart> parts) {
    if (parts.isEmpty()) {
      return;
    }
    List<String> columns = new ArrayList<>();
    for (String name : schema.fieldNames()) {
      columns.add(Sql.identifier(name));
    }
    String list = String.join(", ", columns);
    List<String> selects = new ArrayList<>();
    for (StagedPart part : parts) {
      selects.add("SELECT " + list + " FROM " + target.staging(part.stagingTable()).sql());
    }
    ServerSql.execute(client, "INSERT INTO " + into.sql() + " (" + list + ") " + String.join(" UNION ALL ", selects),
        true);
    for (StagedPart part : parts) {
      ServerSql.execute(client, "DROP TABLE " + target.staging(part.stagingTable()).sql(), true);
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
      List<List<String>> left = ServerSql.rows(client, "SELECT table_name FROM duckdb_tables() WHERE "
          + target.schemaCondition() + " AND starts_with(table_name, "
          + Sql.string(target.staging(jobId + "_").table()) + ")");
      for (List<String> row : left) {
        ServerSql.execute(client, "DROP TABLE IF EXISTS " + target.staging(row.get(0)).sql(), false);
      }
    }
  }
}
