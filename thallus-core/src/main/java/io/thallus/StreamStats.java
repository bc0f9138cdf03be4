package io.thallus;

import java.time.Duration;

/**
 * What the server reported at the end of a stream: rows, batches, Arrow buffer bytes, the stream's wall time on the
 * server, and the CPU time its server thread used (query execution and sending; not the I/O event loop).
 */
public record StreamStats(long rows, long batches, long bytes, Duration serverTime, Duration serverCpuTime) {}
