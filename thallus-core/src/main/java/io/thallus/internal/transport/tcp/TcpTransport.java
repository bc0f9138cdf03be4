package io.thallus.internal.transport.tcp;

import io.thallus.spi.ClientOffer;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.util.Map;

/**
 * Batch bodies on a second, plain socket per connection, written straight from Arrow memory with gathering writes
 * and read straight into pooled, page-aligned receive buffers that become the batch's {@code ArrowBuf}s: no
 * serialization and no copy in user space on either side. The BATCH message on the control connection says where
 * each buffer lies in the body; bodies follow on the data socket in the order of their BATCH messages. Small
 * bodies travel inside the BATCH frame instead, which saves a round of socket calls on tiny results.
 */
public final class TcpTransport implements Transport {
  public static final String NAME = "tcp";
  static final String PORT = NAME + ".port";
  static final String TOKEN = NAME + ".token";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int preference() {
    return 10;
  }

  @Override
  public ServerTransport startServer(ServerTransport.Context context) {
    return TcpServer.start(context);
  }

  @Override
  public ClientOffer offer(ClientOffer.Context context) {
    return ClientOffer.of(Map.of(), welcome -> TcpClientSession.connect(context, welcome));
  }
}
