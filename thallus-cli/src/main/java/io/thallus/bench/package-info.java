/**
 * Measuring Thallus the way its users would: the pieces {@code thallus demo}, {@code thallus bench} and the
 * benchmarks module share. A {@link io.thallus.bench.Peer} moves one result once (a Thallus transport, Arrow
 * Flight, a raw socket, a memcpy, DuckDB's own export); {@link io.thallus.bench.Comparison} runs several side by
 * side, checks that each delivered the same values ({@link io.thallus.bench.Checksum}) and times them interleaved
 * so they share the machine's noise. Not an application API: it exists for the benchmarks.
 */
package io.thallus.bench;
