/**
 * Thallus: Arrow record batches from an embedded DuckDB server to JVM clients, moved without serialization.
 *
 * <p>The public API is {@code io.thallus} (client, server, options, errors), the SPI for transports and engines
 * ({@code io.thallus.spi}) and the DuckDB engine ({@code io.thallus.duckdb}). Everything under
 * {@code io.thallus.internal} is exported only to the Thallus modules that need it.
 */
module io.thallus.core {
  requires transitive org.apache.arrow.memory.core;
  requires transitive org.apache.arrow.vector;
  requires transitive io.netty.buffer;
  requires io.netty.common;
  requires io.netty.transport;
  requires io.netty.codec;
  requires io.netty.handler;
  requires duckdb.jdbc;
  // Rows of parameters go to DuckDB through the C stream interface.
  requires org.apache.arrow.c;
  requires java.sql;
  // Thread CPU time and the process' memory, for stream statistics and default budgets.
  requires java.management;
  requires jdk.management;
  requires org.slf4j;
  requires transitive micrometer.core;

  exports io.thallus;
  exports io.thallus.spi;
  exports io.thallus.duckdb;
  // The size-class pool the rdma transport's registered buffers are made of.
  exports io.thallus.internal.transport to io.thallus.rdma;

  uses io.thallus.spi.Transport;

  provides io.thallus.spi.Transport with
      io.thallus.internal.transport.ipc.IpcTransport,
      io.thallus.internal.transport.tcp.TcpTransport,
      io.thallus.internal.transport.shm.ShmTransport,
      io.thallus.internal.transport.cma.CmaTransport;
}
