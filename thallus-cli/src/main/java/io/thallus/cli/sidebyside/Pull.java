package io.thallus.cli.sidebyside;

/**
 * One movement of a whole result by a {@link Peer}: how long it took, what arrived, and the CPU each side spent
 * where the peer can tell them apart ({@code -1} where it cannot).
 *
 * @param checksum the {@link Checksum} of what arrived when the pull was asked to verify, else 0
 */
public record Pull(long elapsedNanos, long rows, long batches, long bytes, long checksum, long serverCpuNanos,
    long clientCpuNanos) {}
