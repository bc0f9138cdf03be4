package io.thallus.cli;

import io.thallus.ThallusException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code thallus serve | query | demo | bench}: the command-line face of Thallus. */
@Command(name = "thallus", mixinStandardHelpOptions = true, versionProvider = ThallusCli.Version.class,
    description = "Moves Apache Arrow query results from DuckDB to JVM clients without serializing them.",
    subcommands = {ServeCommand.class, QueryCommand.class, DemoCommand.class, BenchCommand.class})
public final class ThallusCli {
  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs a command line and returns its exit code: 0 done, 1 bad usage, 2 the command failed. */
  private static int run(String... args) {
    CommandLine commandLine = new CommandLine(new ThallusCli());
    commandLine.setExecutionExceptionHandler((error, cmd, parsed) -> {
      if (error instanceof ThallusException thallus) {
        cmd.getErr().println("thallus: " + thallus.getMessage());
        return 2;
      }
      throw error;
    });
    return commandLine.execute(args);
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = ThallusCli.class.getPackage().getImplementationVersion();
      return new String[] {"thallus " + (version == null ? "(development build)" : version)};
    }
  }
}
