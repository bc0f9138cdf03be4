package io.thallus.benchmarks.soak;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.thallus.server.Authentication;
import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.MessageCodec;
import io.thallus.internal.protocol.Protocol;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The hardening soak: strangers, greedy clients and honest clients against one running server on loopback, for a
 * bounded time, while the server process's memory, threads, descriptors and log are watched.
 *
 * <ul>
 *   <li>idle strangers: sockets to the control port that never send a byte (reconnected when closed);
 *   <li>data-port strangers: the same against the tcp transport's data port;
 *   <li>greedy clients: authenticated, open streams of endless results with the most credits allowed, never read;
 *   <li>honest clients: query in a loop over every transport and check each result against its known value.
 * </ul>
 *
 * <p>Passes when every honest query succeeded with the right result, the server's RSS stayed under the stated
 * bound, its descriptor count came back to where it started, and no log line repeated more than a few times a
 * second. Usage (see {@code harness/soak.sh}, which starts the server):
 * {@code Soak HOST PORT TOKEN_FILE SERVER_PID SERVER_LOG SECONDS RSS_BOUND_MB [idle] [data] [greedy] [honest]}.
 */
public final class Soak {
  private static final long HONEST_ROWS = 2_000_000;
  private static final int MAX_LOG_REPEATS_PER_SECOND = 5;

  private final String host;
  private final int port;
  private final String token;
  private final long deadlineNanos;
  private final AtomicLong honestOk = new AtomicLong();
  private final AtomicLong honestFailed = new AtomicLong();
  private final AtomicReference<String> firstFailure = new AtomicReference<>();
  private final AtomicLong strangersClosed = new AtomicLong();
  private final AtomicLong greedyRounds = new AtomicLong();
  private final Doors doors;
  /** Set when the server process dies: every actor stops, and the soak has failed. */
  private volatile boolean serverGone;
  private final ClientOptions honestOptions;
  private final Tally tally = new Tally();
  private final DoorActors actors;
  private final AtomicLong ledgerAcknowledged = new AtomicLong();

  private Soak(String host, int port, String token, Duration length, Doors doors) {
    this.host = host;
    this.port = port;
    this.token = token;
    this.deadlineNanos = System.nanoTime() + length.toNanos();
    this.doors = doors;
    this.honestOptions = doors.honestUser() == null ? ClientOptions.builder().token(token).build()
        : ClientOptions.builder().user(doors.honestUser(), doors.honestPassword()).build();
    this.actors = new DoorActors(host, port, token, honestOptions,
        doors.honestUser() == null ? DoorActors.bearer(token)
            : DoorActors.basic(doors.honestUser(), doors.honestPassword()), this::running, tally);
  }

  public static void main(String[] args) throws Exception {
    List<String> positional = new ArrayList<>();
    Map<String, String> named = new HashMap<>();
    for (String arg : args) {
      int equals = arg.indexOf('=');
      if (equals > 0) {
        named.put(arg.substring(0, equals), arg.substring(equals + 1));
      } else {
        positional.add(arg);
      }
    }
    String host = positional.get(0);
    int port = Integer.parseInt(positional.get(1));
    String token = Files.readAllLines(Path.of(positional.get(2))).getFirst().strip();
    long pid = Long.parseLong(positional.get(3));
    Path log = Path.of(positional.get(4));
    Duration length = Duration.ofSeconds(Long.parseLong(positional.get(5)));
    long rssBoundBytes = Long.parseLong(positional.get(6)) << 20;
    int idle = positional.size() > 7 ? Integer.parseInt(positional.get(7)) : 1000;
    int data = positional.size() > 8 ? Integer.parseInt(positional.get(8)) : 1000;
    int greedy = positional.size() > 9 ? Integer.parseInt(positional.get(9)) : 4;
    int honest = positional.size() > 10 ? Integer.parseInt(positional.get(10)) : 4;
    Soak soak = new Soak(host, port, token, length, Doors.of(named, token));
    System.exit(soak.run(new ProcessProbe(pid), log, rssBoundBytes, idle, data, greedy, honest) ? 0 : 1);
  }

  /**
   * The doors beyond the native port, and the honest actors' own login: {@code flight=PORT} (Flight SQL),
   * {@code metrics=PORT}, {@code users=FILE} (its first {@code user:password} line is the honest actors' login, so
   * per-credential quotas can tell them from the attackers, who hold the token; its second, the native session
   * hoarder's, so that filling its own quota does not also stop the token's other attackers), {@code ledger=FILE} (where the
   * ledger writer's last acknowledged id is written), {@code corrupt=false} (no corrupt batches: to see what else
   * a server that dies of the first one would do).
   */
  record Doors(int flightPort, int metricsPort, String honestUser, String honestPassword, Path ledger,
      boolean corrupt, Map<String, String> hoarder) {
    static Doors of(Map<String, String> named, String token) throws IOException {
      String user = null;
      String password = null;
      Map<String, String> hoarder = Map.of(Authentication.TOKEN, token);
      if (named.containsKey("users")) {
        List<String> lines = Files.readAllLines(Path.of(named.get("users")));
        String line = lines.getFirst().strip();
        user = line.substring(0, line.indexOf(':'));
        password = line.substring(line.indexOf(':') + 1);
        if (lines.size() > 1) {
          String second = lines.get(1).strip();
          hoarder = Map.of(Authentication.USER, second.substring(0, second.indexOf(':')), Authentication.PASSWORD,
              second.substring(second.indexOf(':') + 1));
        }
      }
      return new Doors(Integer.parseInt(named.getOrDefault("flight", "0")),
          Integer.parseInt(named.getOrDefault("metrics", "0")), user, password,
          named.containsKey("ledger") ? Path.of(named.get("ledger")) : null,
          Boolean.parseBoolean(named.getOrDefault("corrupt", "true")), hoarder);
    }
  }

  private boolean running() {
    return !serverGone && System.nanoTime() < deadlineNanos;
  }

  private boolean run(ProcessProbe server, Path log, long rssBound, int idle, int data, int greedy, int honest)
      throws Exception {
    String[] transports = {"tcp", "ipc", "shm", "cma"};
    warmUp(transports);
    Thread.sleep(500);
    long fdsAtStart = server.fds();
    List<String> fdTargetsAtStart = server.fdTargets();
    java.util.Set<String> socketsAtStart = server.sockets();
    System.out.printf("server pid %d at start: RSS %d MB, %d threads, %d fds%n", server.pid, server.rss() >> 20,
        server.threads(), fdsAtStart);
    int dataPort = dataPort();
    System.out.printf("server ports: native %d, tcp data %d, flight sql %d, metrics %d%n", port, dataPort,
        doors.flightPort(), doors.metricsPort());
    LogWatch logWatch = new LogWatch(log);
    List<Thread> threads = new ArrayList<>();
    threads.add(Thread.ofPlatform().name("idle-strangers").start(() -> strangers(port, idle, Attackers.NATIVE_STRANGERS)));
    threads.add(Thread.ofPlatform().name("data-strangers").start(() -> strangers(dataPort, data, Attackers.DATA_STRANGERS)));
    for (int i = 0; i < greedy; i++) {
      threads.add(Thread.ofPlatform().name("greedy-" + i).start(this::greedy));
    }
    for (int i = 0; i < honest; i++) {
      String transport = transports[i % transports.length];
      threads.add(Thread.ofPlatform().name("honest-" + transport).start(() -> honest(transport)));
    }
    threads.addAll(startDoorActors(transports));
    long maxRss = 0;
    int maxThreads = 0;
    long maxFds = 0;
    long second = 0;
    while (running()) {
      Thread.sleep(1000);
      try {
        maxRss = Math.max(maxRss, server.rss());
        maxThreads = Math.max(maxThreads, server.threads());
        maxFds = Math.max(maxFds, server.fds());
      } catch (IOException gone) {
        // Checked just below.
      }
      logWatch.poll();
      if (!server.alive()) {
        System.out.println(second + " s: the server process is gone");
        serverGone = true;
        break;
      }
      if (++second % 30 == 0) {
        System.out.printf("%4d s: RSS %d MB (max %d), %d threads (max %d), %d fds (max %d); honest %d ok %d failed;"
                + " strangers closed by the server %d; greedy rounds %d; other doors honest %d ok %d failed%n", second,
            server.rss() >> 20, maxRss >> 20,
            server.threads(), maxThreads, server.fds(), maxFds, honestOk.get(), honestFailed.get(),
            strangersClosed.get(), greedyRounds.get(), tally.honestOk(), tally.honestFailed());
      }
    }
    for (Thread thread : threads) {
      thread.join(30_000);
    }
    for (Thread thread : threads) {
      // An honest actor stuck in a call counts as failed, not as an actor with nothing to report.
      if (thread.isAlive() && thread.getName().matches("honest.*|ledger|health-probe")) {
        tally.honestFailed(thread.getName(), new IllegalStateException("still in a call 30 s after the soak ended"));
      }
    }
    if (doors.ledger() != null) {
      Files.writeString(doors.ledger(), ledgerAcknowledged.get() + "\n");
      System.out.println("ledger: the server acknowledged ids 1.." + ledgerAcknowledged.get());
    }
    if (serverGone) {
      System.out.printf("honest queries: %d correct, %d failed; server RSS max %d MB (bound %d MB)%n", honestOk.get(),
          honestFailed.get(), maxRss >> 20, rssBound >> 20);
      System.out.print("at the other doors:\n" + tally.report());
      System.out.println("SOAK FAILED: the server died (its log's last lines follow)");
      List<String> lines = Files.readAllLines(log);
      lines.subList(Math.max(0, lines.size() - 15), lines.size()).forEach(line -> System.out.println("  " + line));
      return false;
    }
    long fdsAtEnd = server.fds();
    for (int i = 0; i < 30 && fdsAtEnd > fdsAtStart; i++) {
      Thread.sleep(1000);
      fdsAtEnd = server.fds();
    }
    logWatch.poll();
    boolean honestAllOk = honestFailed.get() == 0 && honestOk.get() > 0 && tally.honestFailed() == 0;
    boolean rssOk = maxRss <= rssBound;
    List<String> left = new ArrayList<>(server.fdTargets());
    fdTargetsAtStart.forEach(left::remove);
    // The JDK starts its virtual-thread pollers (one epoll instance each, a fixed number per carrier thread) the
    // first time a virtual thread waits on a socket on that carrier: they stay for the JVM's life, not a leak.
    // DuckDB opens its write-ahead log at the first commit and closes it at a checkpoint: the ledger's, not a leak.
    List<String> leaked = left.stream().filter(target -> !target.equals("anon_inode:[eventpoll]")
        && !target.endsWith(".duckdb.wal")).toList();
    boolean fdsOk = leaked.isEmpty();
    if (!left.isEmpty()) {
      Map<String, Long> byTarget = new java.util.TreeMap<>();
      left.forEach(target -> byTarget.merge(target, 1L, Long::sum));
      System.out.println("descriptors open at the end that were not at the start (target: count): " + byTarget);
      // Which connections they are, and who in this JVM might still hold their other ends.
      java.util.Set<String> sockets = server.sockets();
      sockets.removeAll(socketsAtStart);
      Map<String, String> connections = SocketTable.read();
      for (String inode : sockets) {
        System.out.println("  left open: socket " + inode + " " + connections.getOrDefault(inode, "(not tcp)"));
      }
      for (Thread thread : threads) {
        if (thread.isAlive()) {
          System.out.println("  soak actor still running: " + thread.getName() + " at "
              + java.util.Arrays.stream(thread.getStackTrace()).limit(12).map(Object::toString).toList());
        }
      }
    }
    boolean logOk = logWatch.maxRepeatsPerSecond <= MAX_LOG_REPEATS_PER_SECOND;
    System.out.printf("honest queries: %d correct, %d failed%s%n", honestOk.get(), honestFailed.get(),
        firstFailure.get() == null ? "" : " (first: " + firstFailure.get() + ")");
    System.out.printf("server RSS max %d MB (bound %d MB), threads max %d, fds %d at start, max %d, %d at end%n",
        maxRss >> 20, rssBound >> 20, maxThreads, fdsAtStart, maxFds, fdsAtEnd);
    System.out.printf("strangers closed by the server: %d; greedy rounds: %d; log lines: %d, most repeats of one "
        + "line in one second: %d (%s)%n", strangersClosed.get(), greedyRounds.get(), logWatch.lines,
        logWatch.maxRepeatsPerSecond, logWatch.mostRepeated);
    System.out.print("at the other doors:\n" + tally.report());
    if (tally.firstFailure() != null) {
      System.out.println("first honest failure at the other doors: " + tally.firstFailure());
    }
    boolean pass = honestAllOk && rssOk && fdsOk && logOk;
    System.out.println(pass ? "SOAK PASSED" : "SOAK FAILED: honest " + honestAllOk + ", rss " + rssOk + ", fds "
        + fdsOk + ", log " + logOk);
    return pass;
  }

  /** The actors at the doors other than the native port's control connection, as {@link Doors} names them. */
  private List<Thread> startDoorActors(String[] transports) {
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; doors.corrupt() && i < transports.length; i++) {
      String transport = transports[i];
      threads.add(Thread.ofPlatform().name("corrupt-" + transport).start(() -> actors.corruptIngests(transport)));
    }
    threads.add(Thread.ofPlatform().name("native-hoarder").start(() -> actors.nativeSessionHoarder(doors.hoarder())));
    if (doors.ledger() != null) {
      threads.add(Thread.ofPlatform().name("ledger").start(() -> actors.ledgerWriter(ledgerAcknowledged)));
    }
    int flight = doors.flightPort();
    if (flight > 0) {
      threads.add(Thread.ofPlatform().name("flight-strangers").start(() -> strangers(flight, 500, Attackers.FLIGHT_STRANGERS)));
      for (int i = 0; i < 2; i++) {
        threads.add(Thread.ofPlatform().name("honest-flight-" + i).start(() -> actors.honestFlight(flight)));
      }
      threads.add(Thread.ofPlatform().name("flight-hoarder").start(() -> actors.flightSessionHoarder(flight)));
      threads.add(Thread.ofPlatform().name("unread-doget").start(() -> actors.unreadDoGets(flight, 32)));
      threads.add(Thread.ofPlatform().name("huge-flight").start(() -> actors.hugeFlightMessages(flight)));
      if (doors.corrupt()) {
        threads.add(Thread.ofPlatform().name("corrupt-doput").start(() -> actors.corruptDoPuts(flight)));
      }
    }
    int metrics = doors.metricsPort();
    if (metrics > 0) {
      threads.add(Thread.ofPlatform().name("slowloris").start(() -> actors.metricsSlowloris(metrics, 100)));
      threads.add(Thread.ofPlatform().name("health-probe").start(() -> actors.healthProbe(metrics)));
    }
    return threads;
  }

  /** The tcp transport's data port, from an authenticated handshake's WELCOME. */
  private int dataPort() throws IOException {
    try (RawConnection raw = new RawConnection(host, port)) {
      raw.send(new Message.Hello(Protocol.VERSION, "soak", List.of("tcp"), Map.of(),
          Map.of(Authentication.TOKEN, token)));
      Message.Welcome welcome = (Message.Welcome) raw.receive();
      return Integer.parseInt(welcome.parameters().get("tcp.port"));
    }
  }

  /** Keeps {@code count} silent sockets open to {@code target}, opening a new one for each the server closes. */
  private void strangers(int target, int count, String local) {
    try (Selector selector = Selector.open()) {
      ByteBuffer sink = ByteBuffer.allocate(4096);
      int open = 0;
      while (running()) {
        // At most 200 new sockets a round, so a server that closes them all does not become a connect loop.
        for (int i = 0; open < count && i < 200; i++) {
          try {
            SocketChannel channel = SocketChannel.open();
            channel.bind(new InetSocketAddress(local, 0));
            channel.configureBlocking(false);
            channel.connect(new InetSocketAddress(host, target));
            channel.register(selector, SelectionKey.OP_CONNECT);
            open++;
          } catch (IOException e) {
            break;
          }
        }
        selector.select(100);
        for (SelectionKey key : selector.selectedKeys()) {
          SocketChannel channel = (SocketChannel) key.channel();
          try {
            if (key.isConnectable()) {
              channel.finishConnect();
              key.interestOps(SelectionKey.OP_READ);
            } else if (key.isReadable()) {
              sink.clear();
              if (channel.read(sink) < 0) {
                throw new IOException("closed by the server");
              }
            }
          } catch (IOException closed) {
            key.cancel();
            closeQuietly(channel);
            strangersClosed.incrementAndGet();
            tally.count("strangers closed by the server on port " + target);
            open--;
          }
        }
        selector.selectedKeys().clear();
      }
      for (SelectionKey key : selector.keys()) {
        closeQuietly(key.channel());
      }
    } catch (IOException e) {
      System.err.println("strangers on port " + target + " stopped: " + e);
    }
  }

  /** Authenticates, opens endless streams with the most credits allowed, reads nothing; again every 20 s. */
  private void greedy() {
    while (running()) {
      try (RawConnection raw = new RawConnection(host, port, Attackers.GREEDY)) {
        raw.send(new Message.Hello(Protocol.VERSION, "greedy", List.of("ipc"), Map.of(),
            Map.of(Authentication.TOKEN, token)));
        Message.Welcome welcome = (Message.Welcome) raw.receive();
        int credits = Integer.parseInt(welcome.parameters().getOrDefault(Protocol.SERVER_MAX_CREDITS, "256"));
        for (int s = 0; s < 16; s++) {
          raw.send(new Message.Open(1 + 2 * s, "SELECT * FROM range(10000000000)", "", 65536, credits, 0,
              Map.of()));
        }
        greedyRounds.incrementAndGet();
        long until = Math.min(deadlineNanos, System.nanoTime() + Duration.ofSeconds(20).toNanos());
        while (System.nanoTime() < until) {
          Thread.sleep(200);
        }
      } catch (IOException | RuntimeException e) {
        pause();
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Queries in a loop over one transport; every result is checked against its known value. */
  private void honest(String transport) {
    long expected = HONEST_ROWS * (HONEST_ROWS - 1) / 2 * 3 - HONEST_ROWS;
    String sql = "SELECT i * 3 - 1 AS v FROM range(" + HONEST_ROWS + ") t(i)";
    try (BufferAllocator memory = new RootAllocator()) {
      while (running()) {
        try (ThallusClient client = ThallusClient.connect(memory, Location.of(host, port).withTransport(transport),
            honestOptions)) {
          while (running()) {
            long sum = sum(client, sql);
            if (sum != expected) {
              throw new IllegalStateException(transport + ": sum " + sum + ", expected " + expected);
            }
            honestOk.incrementAndGet();
          }
        } catch (RuntimeException e) {
          honestFailed.incrementAndGet();
          firstFailure.compareAndSet(null, transport + ": " + e);
          pause();
        }
      }
    }
  }

  private static long sum(ThallusClient client, String sql) {
    long sum = 0;
    try (ThallusStream stream = client.query(QueryRequest.builder(sql).batchRows(65536).build())) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          BigIntVector values = (BigIntVector) batch.getVector(0);
          for (int i = 0; i < batch.getRowCount(); i++) {
            sum += values.get(i);
          }
        }
      }
    }
    return sum;
  }

  /**
   * One query over each transport before the baseline is taken: the server's first use of a transport starts what
   * stays for its lifetime (the JDK's pollers for virtual threads' sockets), which is not a leak.
   */
  private void warmUp(String[] transports) {
    try (BufferAllocator memory = new RootAllocator()) {
      for (String transport : transports) {
        try (ThallusClient client = ThallusClient.connect(memory, Location.of(host, port).withTransport(transport),
            ClientOptions.builder().token(token).build())) {
          sum(client, "SELECT 1::BIGINT");
        }
      }
    }
  }

  private static void pause() {
    try {
      Thread.sleep(200);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void closeQuietly(java.io.Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException ignored) {
      // Already gone.
    }
  }

  /** The server process as /proc shows it. */
  private record ProcessProbe(long pid) {
    boolean alive() {
      return Files.exists(Path.of("/proc", Long.toString(pid), "status"));
    }

    long rss() throws IOException {
      return status("VmRSS:") << 10;
    }

    int threads() throws IOException {
      return (int) status("Threads:");
    }

    long fds() throws IOException {
      try (var entries = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
        return entries.count();
      }
    }

    /** What each open descriptor is (a file's path, socket:[inode], anon_inode:...), to name what was left open. */
    List<String> fdTargets() throws IOException {
      try (var entries = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
        return entries.map(fd -> {
          try {
            return Files.readSymbolicLink(fd).toString().replaceAll("\\[\\d+\\]", "[#]");
          } catch (IOException closed) {
            return "closed";
          }
        }).sorted().toList();
      }
    }

    /** The inodes of the sockets the process has open. */
    java.util.Set<String> sockets() throws IOException {
      java.util.Set<String> inodes = new java.util.HashSet<>();
      try (var entries = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
        for (Path fd : entries.toList()) {
          try {
            String target = Files.readSymbolicLink(fd).toString();
            if (target.startsWith("socket:[")) {
              inodes.add(target.substring(8, target.length() - 1));
            }
          } catch (IOException closed) {
            // Closed while listed.
          }
        }
      }
      return inodes;
    }

    private long status(String field) throws IOException {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]);
        }
      }
      return -1;
    }
  }

  /** This host's TCP connections by socket inode, from /proc/net/tcp and tcp6: "local -> remote state". */
  private static final class SocketTable {
    private static final String[] STATES = {"?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
        "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING"};

    static Map<String, String> read() throws IOException {
      Map<String, String> byInode = new HashMap<>();
      for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
        List<String> lines = Files.exists(Path.of(table)) ? Files.readAllLines(Path.of(table)) : List.of();
        for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
          String[] f = line.trim().split("\\s+");
          int state = Integer.parseInt(f[3], 16);
          byInode.put(f[9], port(f[1]) + " -> " + port(f[2]) + " " + (state < STATES.length ? STATES[state] : f[3]));
        }
      }
      return byInode;
    }

    /** An address as /proc shows it (hex address, little-endian for IPv4, and hex port) as a.b.c.d:port. */
    private static String port(String hex) {
      String address = hex.substring(0, hex.indexOf(':'));
      int portNumber = Integer.parseInt(hex.substring(hex.indexOf(':') + 1), 16);
      if (address.length() != 8) {
        return "[" + address + "]:" + portNumber;
      }
      long ip = Long.parseLong(address, 16);
      return (ip & 0xff) + "." + (ip >> 8 & 0xff) + "." + (ip >> 16 & 0xff) + "." + (ip >> 24 & 0xff) + ":" + portNumber;
    }
  }

  /** Reads the server's log as it grows and finds the line repeated most within one second. */
  private static final class LogWatch {
    private final Path log;
    private long offset;
    long lines;
    int maxRepeatsPerSecond;
    String mostRepeated = "none";

    LogWatch(Path log) {
      this.log = log;
    }

    void poll() throws IOException {
      if (!Files.exists(log)) {
        return;
      }
      Map<String, Integer> thisSecond = new HashMap<>();
      try (RandomAccessFile file = new RandomAccessFile(log.toFile(), "r")) {
        file.seek(offset);
        byte[] rest = new byte[(int) Math.min(64 << 20, file.length() - offset)];
        file.readFully(rest);
        offset += rest.length;
        for (String line : new String(rest, StandardCharsets.UTF_8).split("\n")) {
          if (line.isBlank()) {
            continue;
          }
          lines++;
          // Numbers (ids, ports, counts) differ between repeats of the same complaint.
          int repeats = thisSecond.merge(line.replaceAll("\\d+", "#"), 1, Integer::sum);
          if (repeats > maxRepeatsPerSecond) {
            maxRepeatsPerSecond = repeats;
            mostRepeated = line;
          }
        }
      }
    }
  }

  /** A blocking socket speaking the control protocol, as a client that reads only when it chooses to. */
  static final class RawConnection implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    RawConnection(String host, int port) throws IOException {
      this(host, port, null);
    }

    /** From {@code local} (an address of this host, such as another loopback address), or any when null. */
    RawConnection(String host, int port, String local) throws IOException {
      socket = local == null ? new Socket(host, port)
          : new Socket(java.net.InetAddress.getByName(host), port, java.net.InetAddress.getByName(local), 0);
      socket.setSoTimeout(10_000);
      in = new DataInputStream(socket.getInputStream());
      out = socket.getOutputStream();
    }

    /** Says HELLO with these credentials; whether the server answered WELCOME. */
    boolean hello(String name, Map<String, String> credentials) throws IOException {
      send(new Message.Hello(Protocol.VERSION, name, List.of("ipc"), Map.of(), credentials));
      return receive() instanceof Message.Welcome;
    }

    void send(Message message) throws IOException {
      ByteBuf buf = Unpooled.buffer();
      try {
        MessageCodec.Encoder.encode(message, buf);
        buf.setInt(0, buf.readableBytes() - 4);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        out.write(bytes);
        out.flush();
      } finally {
        buf.release();
      }
    }

    Message receive() throws IOException {
      byte[] body = new byte[in.readInt()];
      in.readFully(body);
      return MessageCodec.Decoder.decode(Unpooled.wrappedBuffer(body));
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
