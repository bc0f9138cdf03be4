package io.thallus.cli;

import io.thallus.ThallusException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code thallus serve | query | load | demo | bench}: the command-line face of Thallus. */
@Command(name = "thallus", mixinStandardHelpOptions = true, versionProvider = ThallusCli.Version.class,
    description = "Moves Apache Arrow query results from DuckDB to JVM clients without serializing them.",
    subcommands = {ServeCommand.class, QueryCommand.class, LoadCommand.class, DemoCommand.class, BenchCommand.class})
public final class ThallusCli {
  private static final java.util.Set<String> LOG_LEVELS = java.util.Set.of("error", "warn", "info", "debug", "trace",
      "off");
  /**
   * gRPC (the Flight SQL port) logs through java.util.logging, with a stack trace for every stream a client resets and
   * every message it sends over a limit: per-client noise that a flood of bad clients would turn into a flood of log,
   * shown only at debug and trace. Held here: java.util.logging keeps its loggers weakly.
   */
  private static final java.util.logging.Logger GRPC_LOG = java.util.logging.Logger.getLogger("io.grpc");

  @CommandLine.Option(names = "--log-level", scope = CommandLine.ScopeType.INHERIT, paramLabel = "LEVEL",
      description = "Log level: error, warn, info, debug, trace or off (default: warn). Logs go to stderr.")
  String logLevel;

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs a command line and returns its exit code: 0 done, 1 bad usage, 2 the command failed. */
  private static int run(String... args) {
    // The logging backend reads its level once, when the first logger is made: before anything is parsed or run.
    String level = valueOf(args, "--log-level");
    if (level != null) {
      if (!LOG_LEVELS.contains(level)) {
        System.err.println("thallus: --log-level must be one of " + new java.util.TreeSet<>(LOG_LEVELS) + ", not "
            + level);
        return 1;
      }
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", level);
    }
    GRPC_LOG.setLevel("debug".equals(level) || "trace".equals(level) ? java.util.logging.Level.FINE
        : java.util.logging.Level.SEVERE);
    CommandLine commandLine = new CommandLine(new ThallusCli());
    String config = valueOf(args, "--config");
    if (config != null) {
      try {
        commandLine.getSubcommands().get("serve").setDefaultValueProvider(
            ConfigFile.load(java.nio.file.Path.of(config), commandLine.getSubcommands().get("serve")));
      } catch (ThallusException e) {
        System.err.println("thallus: " + e.getMessage());
        return 1;
      }
    }
    commandLine.setExecutionExceptionHandler((error, cmd, parsed) -> {
      if (error instanceof ThallusException thallus) {
        cmd.getErr().println("thallus: " + thallus.getMessage());
        return 2;
      }
      throw error;
    });
    return commandLine.execute(args);
  }

  /** The value of {@code --name VALUE} or {@code --name=VALUE} on a command line, or null. */
  private static String valueOf(String[] args, String name) {
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals(name) && i + 1 < args.length) {
        return args[i + 1];
      }
      if (args[i].startsWith(name + "=")) {
        return args[i].substring(name.length() + 1);
      }
    }
    return null;
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = ThallusCli.class.getPackage().getImplementationVersion();
      return new String[] {"thallus " + (version == null ? "(development build)" : version)};
    }
  }
}
