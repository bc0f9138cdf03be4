/**
 * The Thallus server runtime: {@link io.thallus.server.ThallusServer}, who may connect and how much each may hold
 * ({@code Authentication}, {@code Admission}), and the engine SPI ({@code io.thallus.engine}) through which it runs
 * queries. It knows no engine: the application passes one (module io.thallus.duckdb's {@code DuckDBEngine}, for one).
 * Its transports come from io.thallus.core (and any module that provides {@code io.thallus.spi.Transport}).
 */
module io.thallus.server {
  requires transitive io.thallus.core;
  requires io.netty.common;
  requires io.netty.transport;
  requires io.netty.codec;
  requires io.netty.handler;
  // The machine's memory, for the default memory limit; a stream's thread CPU time, for its statistics.
  requires java.management;
  requires jdk.management;
  requires org.slf4j;
  requires transitive micrometer.core;
  // A server decodes every codec a client may send: zstd's is optional in io.thallus.core, so the server runtime
  // brings it (required here, it is in every server's module graph, and core reads it).
  requires com.github.luben.zstd_jni;

  exports io.thallus.server;
  exports io.thallus.engine;
}
