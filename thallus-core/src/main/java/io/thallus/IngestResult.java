package io.thallus;

import java.time.Duration;

/**
 * What an ingest wrote: the rows the table received (as the engine counts them), the batches and buffer bytes the
 * client sent, and how long the server took from the first batch asked for to the commit.
 */
public record IngestResult(long rows, long batches, long bytes, Duration serverTime, String transport) {}
