/**
 * The rdma transport: RDMA READ of Arrow batch bodies over libibverbs, bound with the Foreign Function and Memory API
 * (no JNI). It has no API of its own: clients and servers find it with {@link java.util.ServiceLoader} and choose it
 * by name ({@code thallus+rdma://}). On the module path it needs {@code --enable-native-access=io.thallus.rdma}. The
 * push verbs (SEND, RECV, WRITE with immediate) and the push channel built on them ({@code io.thallus.rdma.push})
 * are internal: the transport uses them for ingest by RDMA WRITE ({@code -Dthallus.rdma.ingestTransfer}), which is
 * how the exchange's pushes, made as ingests, reach them.
 */
module io.thallus.rdma {
  requires io.thallus.core;
  requires org.slf4j;

  provides io.thallus.spi.Transport with io.thallus.rdma.transport.RdmaTransport;
}
