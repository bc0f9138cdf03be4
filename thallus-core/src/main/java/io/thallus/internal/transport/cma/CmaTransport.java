package io.thallus.internal.transport.cma;

import io.thallus.internal.transport.Hosts;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Same host, by cross-memory attach: the server exposes its own batch memory (DuckDB's exported buffers, not a
 * copy) by address, and the client pulls the bytes with one {@code process_vm_readv} call per batch straight into
 * its pooled receive buffers: the one-sided RDMA READ pattern, within one machine. The kernel allows it between
 * processes of the same user when no ptrace restriction (Yama {@code ptrace_scope} above 0) forbids it; the
 * handshake proves it with a probe read, and a client that may not read falls back to the next transport.
 */
public final class CmaTransport implements Transport {
  public static final String NAME = "cma";
  static final String PID = NAME + ".pid";
  static final String PROBE_ADDRESS = NAME + ".probe";
  static final String PROBE_TOKEN = NAME + ".token";
  /** The client's side of the same, for ingested batches, which the server reads out of the client. */
  static final String CLIENT_PID = NAME + ".client_pid";
  static final String CLIENT_PROBE_ADDRESS = NAME + ".client_probe";
  static final String CLIENT_PROBE_TOKEN = NAME + ".client_token";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean confidentialUnderTls() {
    return true;
  }

  @Override
  public int preference() {
    return 20;
  }

  @Override
  public boolean isAvailableFor(String host) {
    return ProcessVm.isSupported() && ptraceAllowsPeers() && Hosts.isLocal(host);
  }

  /** Yama's ptrace_scope 1 and above limit cross-memory reads to descendants or to nobody. */
  static boolean ptraceAllowsPeers() {
    Path scope = Path.of("/proc/sys/kernel/yama/ptrace_scope");
    try {
      return !Files.exists(scope) || Files.readString(scope).trim().equals("0");
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public ServerTransport startServer(ServerTransport.Context context) {
    return new CmaServer(context);
  }

  @Override
  public ClientOffer offer(ClientOffer.Context context) {
    return ClientOffer.of(Map.of(), welcome -> CmaClientSession.open(context, welcome));
  }
}
