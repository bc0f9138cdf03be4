package io.thallus.exchange;

/**
 * What an endpoint has moved since it started, counted where it happens. Reduce side: {@code pullRequests} (one per
 * peer per partition read that needed a pull), {@code pulledBatches} and {@code pulledBytes} (what those pulls
 * answered: each batch is one BATCH frame and, past 32 KiB, one body), {@code pushedBatchesRead} (batches a reducer
 * here took from what peers pushed). Map side: {@code pushes} (ingests sent, each carrying one or more partitions'
 * rows as one batch), {@code pushedBytes}, {@code pushesRefused} (a peer's buffer was full or it was gone: those
 * rows stay here for a pull); receiving side: {@code pushesReceived} (peers' pushes kept here) and
 * {@code pushFramesReceived} (their BATCH frames, one body each: one per push with rows); {@code spilledBytes} (map
 * output written to the local disk).
 */
public record ExchangeStats(long pullRequests, long pulledBatches, long pulledBytes, long pushedBatchesRead,
    long pushes, long pushedBytes, long pushesRefused, long pushesReceived, long pushFramesReceived,
    long spilledBytes) {}
