/**
 * The Thallus exchange: one {@link io.thallus.exchange.ExchangeEndpoint} per JVM moves partitioned Arrow batches
 * between JVMs over Thallus transports (shm, cma, tcp, rdma), pushed to the JVM that will read them when it has room
 * and pulled from the JVM that made them otherwise. It knows nothing of Spark and never loads DuckDB.
 */
module io.thallus.exchange {
  requires transitive io.thallus.core;
  requires io.thallus.server;
  requires org.slf4j;

  exports io.thallus.exchange;
}
