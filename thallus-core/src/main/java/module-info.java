/**
 * Thallus' client, and what a client and a server share: Arrow record batches from a Thallus server to JVM clients,
 * moved without serialization.
 *
 * <p>The public API is {@code io.thallus} (client, options, errors, TLS) and the transport SPI ({@code io.thallus.spi},
 * both halves of a transport, as the ipc, tcp, shm and cma transports here have). The server runtime is
 * {@code io.thallus.server} (module thallus-server) and the DuckDB engine {@code io.thallus.duckdb} (thallus-duckdb):
 * a client carries neither. Everything under {@code io.thallus.internal} is exported only to the Thallus modules that
 * need it.
 */
module io.thallus.core {
  requires transitive org.apache.arrow.memory.core;
  requires transitive org.apache.arrow.vector;
  requires transitive io.netty.buffer;
  requires io.netty.common;
  requires io.netty.transport;
  requires io.netty.codec;
  requires io.netty.handler;
  // Query parameters of java.sql types (Timestamp, Date, Time).
  requires java.sql;
  requires org.slf4j;
  // The codecs of compressed batch bodies; zstd's is optional (a JVM without it refuses ZSTD, named so), which keeps
  // its native libraries out of clients such as the JDBC driver's one jar. The server runtime requires it.
  requires org.lz4.java;
  requires static com.github.luben.zstd_jni;

  exports io.thallus;
  exports io.thallus.spi;
  // The server runtime speaks the protocol, sends and receives batches as the client does, and starts the transports.
  exports io.thallus.internal to io.thallus.server;
  exports io.thallus.internal.protocol to io.thallus.server, io.thallus.duckdb;
  exports io.thallus.internal.batch to io.thallus.server, io.thallus.duckdb, io.thallus.exchange;
  // The size-class pool the rdma transport's registered buffers are made of.
  exports io.thallus.internal.transport to io.thallus.rdma;
  // The DuckDB engine's spill folders are swept as the shm transport's segment folders are.
  exports io.thallus.internal.transport.shm to io.thallus.duckdb;

  uses io.thallus.spi.Transport;

  provides io.thallus.spi.Transport with
      io.thallus.internal.transport.ipc.IpcTransport,
      io.thallus.internal.transport.tcp.TcpTransport,
      io.thallus.internal.transport.shm.ShmTransport,
      io.thallus.internal.transport.cma.CmaTransport;
}
