package io.thallus.spark;

import org.apache.spark.sql.connector.write.WriterCommitMessage;

/** A task's committed contribution to a write: the staging table holding its rows. */
record StagedPart(String stagingTable, long rows) implements WriterCommitMessage {}
