package io.thallus.cli;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.server.ThallusServer;
import io.thallus.server.Authentication;
import io.thallus.server.Overlap;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.Tls;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.flightsql.ThallusFlightSqlServer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "serve", mixinStandardHelpOptions = true,
    description = "Serve SQL over the datasets under a data root until interrupted (Ctrl-C).")
final class ServeCommand implements Callable<Integer> {
  @Option(names = "--config", paramLabel = "FILE", description = "A properties file with any of these settings, "
      + "named without the dashes (data-root=/srv/data, memory-per-client=1073741824, ...); flags override it.")
  Path config;

  @Option(names = "--data-root", description = "Folder whose files clients may query (required, here or in the "
      + "config file).")
  Path dataRoot;

  @Option(names = "--host", defaultValue = "127.0.0.1",
      description = "Address to listen on (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--port", defaultValue = "47470",
      description = "Port to listen on, 0 for any (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(names = "--database", paramLabel = "FILE", description = "Keep tables in this DuckDB file (created if "
      + "missing; beside the data root, not under it): committed data survives a restart and a crash. Default: an "
      + "in-memory database, empty at every start.")
  Path database;

  @Option(names = "--read-only", description = "Serve the --database file read-only: statements that write fail.")
  boolean readOnly;

  @Option(names = "--time-zone", description = "Time zone of TIMESTAMPTZ values for every session, e.g. UTC "
      + "(default: the host's).")
  String timeZone;

  @Option(names = "--threads", description = "DuckDB worker threads (default: one per core).")
  Integer threads;

  @Option(names = "--memory-limit", description = "DuckDB memory limit, e.g. 4GB.")
  String memoryLimit;

  @Option(names = "--transports", split = ",", description = "Transports to offer (default: all available).")
  List<String> transports = List.of();

  @Option(names = "--shard", paramLabel = "NAME=PART:PATH", description = "This server holds part PART of sharded "
      + "dataset NAME at PATH under the data root (repeatable; docs/sharding.md), e.g. lineitem=p0:lineitem/part0.")
  List<String> shards = List.of();

  @Option(names = "--token-file", description = "Require clients to send the secret in this file (its first line).")
  Path tokenFile;

  @Option(names = "--users-file", description = "Also (or instead) let in these users: one user:password a line.")
  Path usersFile;

  @Option(names = "--tls-cert", description = "TLS certificate chain (PEM); needs --tls-key.")
  Path tlsCertificate;

  @Option(names = "--tls-key", description = "TLS private key (PKCS#8 PEM); needs --tls-cert.")
  Path tlsKey;

  @Option(names = "--flight-sql-port", description = "Also serve Arrow Flight SQL (gRPC) on this port, for the Flight"
      + " SQL JDBC driver, ADBC and pyarrow clients: same engine, logins, TLS and limits (0 for any port; default: "
      + "none).")
  Integer flightSqlPort;

  @Option(names = "--flight-sql-max-result-message-bytes", description = "Largest message of a Flight SQL result, in "
      + "bytes (default 8 MiB, at least 64 KiB): larger batches go out as row ranges that fit, under the 16 MiB "
      + "clients take by default; a single larger row fails its query.")
  Integer flightSqlMaxResultMessageBytes;

  @Option(names = "--batch-memory", description = "Arrow memory the server's streams may hold at once, in bytes "
      + "(default: a quarter of the machine's memory).")
  Long batchMemory;

  @Option(names = "--memory-per-client", description = "Arrow memory one client (or Flight SQL session) may hold, in "
      + "bytes (default 1 GiB).")
  Long memoryPerClient;

  @Option(names = "--max-clients", description = "Authenticated clients at once (default 1024).")
  Integer maxClients;

  @Option(names = "--max-strangers", description = "Connections still "
      + "authenticating, per port (default 1024); one more closes the oldest silent one.")
  Integer maxStrangers;

  @Option(names = "--handshake-timeout-ms", description = "Time a connection has to authenticate, on either port "
      + "(default 5000).")
  Long handshakeTimeoutMillis;

  @Option(names = "--max-connections-per-credential", description = "Connections (Flight SQL sessions included) one "
      + "credential may have open; the shared token is one credential (default 256).")
  Integer maxConnectionsPerCredential;

  @Option(names = "--max-connections-per-address", description = "Connections from one IP address, per port "
      + "(default 256).")
  Integer maxConnectionsPerAddress;

  @Option(names = "--max-sessions-per-address", description = "Flight SQL sessions of the clients at one IP address "
      + "(default 64).")
  Integer maxSessionsPerAddress;

  @Option(names = "--max-statements-per-credential", description = "Statements of one credential running at once "
      + "over all its connections; more wait their turn (default 4).")
  Integer maxStatementsPerCredential;

  @Option(names = "--max-memory-per-credential", description = "Arrow memory the connections of one credential may "
      + "hold together, in bytes (default: a quarter of --batch-memory).")
  Long maxMemoryPerCredential;

  @Option(names = "--max-streams", description = "Streams open on the whole server (default 256).")
  Integer maxStreams;

  @Option(names = "--max-streams-per-client", description = "Streams one client may have open (default 64).")
  Integer maxStreamsPerClient;

  @Option(names = "--engine-threads", description = "Threads that run queries and produce batches "
      + "(default: 4 per core, at least 16).")
  Integer engineThreads;

  @Option(names = "--engine-threads-per-client", description = "Engine threads one client's streams may hold at "
      + "once (default 2).")
  Integer engineThreadsPerClient;

  @Option(names = "--overlap", converter = OverlapFlag.class, description = "Make a large result's next batch on "
      + "a producer thread while its stream sends the last one: auto (default: while the machine has cores to "
      + "spare, never on 2 cores), off, or a number N: always, with up to N producer threads.")
  Overlap overlap;

  @Option(names = "--max-frame-bytes", description = "Largest frame a client may send, SQL included (default 4 MiB).")
  Integer maxFrameBytes;

  @Option(names = "--max-sql-bytes", description = "Longest SQL text, in UTF-8 bytes (default 1 MiB).")
  Integer maxSqlBytes;

  @Option(names = "--max-credits-per-stream", description = "Batches one stream may send ahead of its client "
      + "(default 256).")
  Integer maxCreditsPerStream;

  @Option(names = "--max-credits-per-client", description = "The same over all of one client's streams "
      + "(default 1024).")
  Integer maxCreditsPerClient;

  @Option(names = "--io-timeout-ms", description = "How long one write to a client may take (default 60000).")
  Long ioTimeoutMillis;

  @Option(names = "--stream-idle-timeout-ms", description = "How long a stream may wait for its client to ask for "
      + "a batch (default 600000).")
  Long streamIdleTimeoutMillis;

  @Option(names = "--connection-idle-timeout-ms", description = "How long a client with no open stream (native "
      + "port) or no call in progress (Flight SQL port) may stay silent (default 3600000).")
  Long connectionIdleTimeoutMillis;

  @Option(names = "--metrics-port", description = "Serve Prometheus metrics at http://HOST:PORT/metrics and "
      + "readiness at /health (0 for any port; default: no metrics endpoint).")
  Integer metricsPort;

  @Option(names = "--metrics-timeout-ms", description = "Time a metrics connection has to send its request and read "
      + "the answer; then it is closed (default 5000).")
  Long metricsTimeoutMillis;

  @Option(names = "--metrics-max-connections", description = "Metrics connections waiting for their requests at "
      + "once (default 16); one more closes the oldest silent or half-sent one.")
  Integer metricsMaxConnections;

  private ThallusServer.Builder shards(ThallusServer.Builder builder) {
    for (String shard : shards) {
      io.thallus.server.ShardDeclaration declaration = ShardOption.parse(shard);
      builder.shard(declaration.name(), declaration.partId(), declaration.path());
    }
    return builder;
  }

  @Override
  public Integer call() throws InterruptedException, java.io.IOException {
    if (dataRoot == null) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a data root is required: --data-root, or data-root in "
          + "the config file");
    }
    // Before any file of the server's own exists: the database, its WAL, spill files, COPY's output.
    OwnerOnlyFiles.fromNowOn();
    DuckDBEngine.Builder engine = DuckDBEngine.builder().filesUnder(dataRoot);
    if (database != null) {
      engine.database(database).readOnly(readOnly);
    } else if (readOnly) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "--read-only needs --database FILE");
    }
    if (threads != null) {
      engine.threads(threads);
    }
    if (timeZone != null) {
      engine.timeZone(timeZone);
    }
    if (memoryLimit != null) {
      engine.memoryLimit(memoryLimit);
    }
    CountDownLatch stopped = new CountDownLatch(1);
    // The JVM ends once its shutdown hooks return: the hook waits until the server below has closed (streams told,
    // shared memory removed), within the server's own shutdown timeout and a margin.
    CountDownLatch closed = new CountDownLatch(1);
    PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    try {
      try (DuckDBEngine duckdb = engine.build();
           BufferAllocator allocator = new RootAllocator();
           ThallusServer server = shards(security(ThallusServer.builder(allocator, Location.of(host, port), duckdb)))
               .dataRoot(dataRoot).transports(transports).meterRegistry(metrics).build().start();
           MetricsEndpoint endpoint = metricsPort == null ? null
               : MetricsEndpoint.start(host, metricsPort, metrics, server::isAccepting, metricsSettings());
           ThallusFlightSqlServer flightSql = flightSqlPort == null ? null : flightSql(allocator, server)) {
        // Every file of the server's own is open or absolute by now: relative paths in SQL mean the data root.
        WorkingDirectory.change(dataRoot.toAbsolutePath());
        System.out.println("thallus serving " + dataRoot.toAbsolutePath() + " at " + server.getLocation()
            + " over " + server.transports());
        if (database != null) {
          System.out.println("database " + database.toAbsolutePath() + (readOnly ? " (read-only)" : ""));
        }
        if (endpoint != null) {
          System.out.println("metrics at http://" + host + ":" + endpoint.port() + "/metrics");
        }
        if (flightSql != null) {
          System.out.println("flight sql at " + flightSql.location());
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
          stopped.countDown();
          try {
            closed.await(15, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }));
        while (!stopped.await(1, TimeUnit.SECONDS)) {
          // Serving; the shutdown hook ends the wait.
        }
      }
    } finally {
      closed.countDown();
    }
    return 0;
  }

  /**
   * The Flight SQL front door: its sessions connect to this server over loopback with each client's credentials
   * (trusting the server's own certificate under TLS), and its FlightInfos announce the transports the server offers
   * as lanes.
   */
  private ThallusFlightSqlServer flightSql(BufferAllocator allocator, ThallusServer server) {
    Location loopback = Location.of(host.equals("0.0.0.0") || host.equals("::") ? "127.0.0.1" : host,
        server.getLocation().port());
    ThallusFlightSqlServer.Builder flightSql = ThallusFlightSqlServer.builder(allocator, loopback).host(host)
        .port(flightSqlPort).lanes(server).admission(admission());
    if (batchMemory != null) {
      flightSql.memoryLimit(batchMemory);
    }
    if (flightSqlMaxResultMessageBytes != null) {
      flightSql.maxResultMessageBytes(flightSqlMaxResultMessageBytes);
    }
    if (memoryPerClient != null) {
      // A Flight SQL session is a client too: the same budget on both doors.
      flightSql.memoryPerClient(memoryPerClient);
    }
    if (connectionIdleTimeoutMillis != null) {
      // One idle rule for both doors.
      flightSql.connectionIdleTimeout(java.time.Duration.ofMillis(connectionIdleTimeoutMillis));
    }
    if (tlsCertificate != null) {
      flightSql.tls(tlsCertificate, tlsKey)
          .clientOptions(ClientOptions.builder().tls(Tls.client(tlsCertificate).withoutHostnameVerification()).build());
    }
    return flightSql.build().start();
  }

  private MetricsEndpoint.Settings metricsSettings() {
    MetricsEndpoint.Settings defaults = MetricsEndpoint.Settings.DEFAULTS;
    return new MetricsEndpoint.Settings(
        metricsTimeoutMillis == null ? defaults.deadline() : java.time.Duration.ofMillis(metricsTimeoutMillis),
        metricsMaxConnections == null ? defaults.maxConnections() : metricsMaxConnections);
  }

  private ThallusServer.Builder security(ThallusServer.Builder server) throws java.io.IOException {
    Authentication authentication = Authentication.none();
    if (tokenFile != null) {
      authentication = Authentication.token(CliSecrets.firstLine(tokenFile));
    }
    if (usersFile != null) {
      Authentication users = Authentication.users(CliSecrets.users(usersFile));
      authentication = tokenFile == null ? users : authentication.or(users);
    }
    if (authentication.isRequired()) {
      server.authentication(authentication);
    }
    if ((tlsCertificate == null) != (tlsKey == null)) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "--tls-cert and --tls-key go together");
    }
    if (tlsCertificate != null) {
      server.tls(Tls.server(tlsCertificate, tlsKey));
    }
    return limits(server);
  }

  private ThallusServer.Builder limits(ThallusServer.Builder server) {
    if (batchMemory != null) {
      server.memoryLimit(batchMemory);
    }
    if (memoryPerClient != null) {
      server.memoryPerClient(memoryPerClient);
    }
    if (maxClients != null) {
      server.maxConnections(maxClients);
    }
    server.admission(admission());
    if (maxStreams != null) {
      server.maxStreams(maxStreams);
    }
    if (maxStreamsPerClient != null) {
      server.maxStreamsPerConnection(maxStreamsPerClient);
    }
    if (engineThreads != null) {
      server.engineThreads(engineThreads);
    }
    if (engineThreadsPerClient != null) {
      server.engineThreadsPerConnection(engineThreadsPerClient);
    }
    if (overlap != null) {
      server.overlap(overlap);
    }
    if (maxFrameBytes != null) {
      server.maxFrameBytes(maxFrameBytes);
    }
    if (maxSqlBytes != null) {
      server.maxSqlBytes(maxSqlBytes);
    }
    if (maxCreditsPerStream != null) {
      server.maxCreditsPerStream(maxCreditsPerStream);
    }
    if (maxCreditsPerClient != null) {
      server.maxCreditsPerConnection(maxCreditsPerClient);
    }
    if (ioTimeoutMillis != null) {
      server.ioTimeout(java.time.Duration.ofMillis(ioTimeoutMillis));
    }
    if (streamIdleTimeoutMillis != null) {
      server.idleTimeout(java.time.Duration.ofMillis(streamIdleTimeoutMillis));
    }
    if (connectionIdleTimeoutMillis != null) {
      server.connectionIdleTimeout(java.time.Duration.ofMillis(connectionIdleTimeoutMillis));
    }
    return server;
  }

  /** The one admission policy both ports apply. */
  private io.thallus.server.Admission admission() {
    io.thallus.server.Admission.Builder admission = io.thallus.server.Admission.builder();
    if (maxStrangers != null) {
      admission.maxStrangers(maxStrangers);
    }
    if (handshakeTimeoutMillis != null) {
      admission.handshakeTimeout(java.time.Duration.ofMillis(handshakeTimeoutMillis));
    }
    if (maxConnectionsPerCredential != null) {
      admission.maxConnectionsPerCredential(maxConnectionsPerCredential);
    }
    if (maxConnectionsPerAddress != null) {
      admission.maxConnectionsPerAddress(maxConnectionsPerAddress);
    }
    if (maxSessionsPerAddress != null) {
      admission.maxSessionsPerAddress(maxSessionsPerAddress);
    }
    if (maxStatementsPerCredential != null) {
      admission.maxStatementsPerCredential(maxStatementsPerCredential);
    }
    if (maxMemoryPerCredential != null) {
      admission.maxMemoryPerCredential(maxMemoryPerCredential);
    }
    return admission.build();
  }

  /** {@code --overlap}: auto, off, or a number of producer threads. */
  static final class OverlapFlag implements CommandLine.ITypeConverter<Overlap> {
    @Override
    public Overlap convert(String value) {
      return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
        case "auto" -> Overlap.auto();
        case "off" -> Overlap.off();
        default -> {
          try {
            yield Overlap.producers(Integer.parseInt(value.trim()));
          } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException("--overlap takes auto, off or a positive number of "
                + "producer threads, got '" + value + "'");
          }
        }
      };
    }
  }
}
