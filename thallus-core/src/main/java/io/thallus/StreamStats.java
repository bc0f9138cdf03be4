package io.thallus;

import java.time.Duration;

/** What the server reported at the end of a stream. */
public record StreamStats(long rows, long batches, long bytes, Duration serverTime) {}
