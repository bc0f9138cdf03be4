/**
 * The side-by-side comparison that {@code thallus demo} and {@code thallus bench} print: peers that each move one
 * result once ({@link Peer}: a Thallus transport, a raw socket, a memcpy, DuckDB's own export), run interleaved so
 * they share the machine's noise and checked to deliver the same values ({@link Comparison}, {@link Checksum}).
 * It lives in the CLI because those two commands are the CLI's; every other measurement (the JMH benchmarks, the
 * paper's sweeps, Arrow Flight's peers, the soak) lives in the benchmarks module, which builds on this package.
 * Not an application API.
 */
package io.thallus.cli.sidebyside;
