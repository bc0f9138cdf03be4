package io.thallus.rdma.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.testing.JvmFlags;
import java.io.BufferedReader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs the {@code rdma-device}-tagged tests of a package inside a User-Mode Linux guest with Soft-RoCE
 * ({@code harness/rxe-vm.sh}): the build stays on the host, only the test JVM runs in the guest. The harness builds
 * its kernel once (8-30 min, cached in ~/.cache/rxe-vm). Where it cannot start (not Linux x86-64, no apt, no
 * room), the calling test is skipped and says why; with {@code -Dthallus.rdma.direct=true} (a machine with an RDMA
 * NIC) the tagged tests run directly instead. {@link #runConformanceAcrossTwoHosts} does the same with two guests.
 */
public final class SoftRoceGuest {
  /** rxe-vm.sh's exit status when the guest itself could not be set up or started. */
  private static final int HARNESS_FAILED = 125;
  /**
   * System property: run only these guest tests ({@code CLASS} or {@code CLASS#METHOD}, fully qualified,
   * comma-separated) instead of every tagged test of the packages, while working on a few (a full guest run takes
   * many minutes): {@code ./mvnw -pl thallus-rdma -am verify -Dtest=RxeGuestTest
   * -Dsurefire.failIfNoSpecifiedTests=false -Dthallus.rdma.guestTests=io.thallus.rdma.transport.IngestRingTest}.
   */
  public static final String ONLY_PROPERTY = "thallus.rdma.guestTests";
  /** Each guest test's limit (JUnit's duration syntax). */
  private static final String GUEST_TEST_TIMEOUT = "5m";

  private SoftRoceGuest() {}

  public static void runTaggedTests(String... selectPackages) throws Exception {
    Path harness = harness("rxe-vm.sh");
    List<String> command = new ArrayList<>();
    command.add(harness.toString());
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(JvmFlags.forChild());
    ManagementFactory.getRuntimeMXBean().getInputArguments().stream().filter(f -> f.startsWith("-Xmx"))
        .forEach(command::add);
    // The rdma transport's settings, where this run set them: the guest tests then run with them (say the whole
    // conformance suite with ingest by WRITE: -Dthallus.rdma.ingestTransfer=by-size).
    for (String setting : List.of("thallus.rdma.ingestTransfer", "thallus.rdma.pushRingBytes",
        "thallus.rdma.inPlaceBytes")) {
      String value = System.getProperty(setting, "");
      if (!value.isBlank()) {
        command.add("-D" + setting + "=" + value);
      }
    }
    command.addAll(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp", System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
        "org.junit.platform.console.ConsoleLauncher", "execute", "--include-tag=rdma-device"));
    String only = System.getProperty(ONLY_PROPERTY, "").strip();
    if (only.isEmpty()) {
      for (String selectPackage : selectPackages) {
        command.add("--select-package=" + selectPackage);
      }
    } else {
      // A developer's run of a few guest tests: CLASS or CLASS#METHOD, comma-separated.
      for (String selector : only.split(",")) {
        command.add((selector.contains("#") ? "--select-method=" : "--select-class=") + selector.strip());
      }
    }
    command.addAll(List.of("--disable-banner", "--disable-ansi-colors", "--details=flat", "--fail-if-no-tests",
        // A guest test that hangs fails alone, named, with every thread's stack, instead of holding the whole guest
        // run (and the build) until its 40-minute limit: the slowest took 22 s on a quiet box and ten times that
        // under load.
        "--config=junit.jupiter.execution.timeout.default=" + GUEST_TEST_TIMEOUT,
        "--config=junit.jupiter.execution.timeout.threaddump.enabled=true"));
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().put("RXE_VM_TIMEOUT", "2400");
    Finished guest = run(builder);
    assertThat(guest.output()).contains("tests successful").contains("0 tests failed");
    assertThat(guest.exitValue()).as(guest.output()).isZero();
  }

  /**
   * Runs the rdma conformance suite across two guests as two hosts ({@code harness/rdma-conformance-2hosts.sh}): one
   * serves, the other runs the suite against it in its remote mode. Both run on this JVM's class path, which must
   * hold thallus-cli, thallus-rdma's tests and JUnit's ConsoleLauncher.
   */
  public static void runConformanceAcrossTwoHosts() throws Exception {
    ProcessBuilder builder = new ProcessBuilder(harness("rdma-conformance-2hosts.sh").toString());
    builder.environment().put("CONFORMANCE_CLASSPATH",
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
    Finished guests = run(builder);
    assertThat(guests.output()).contains("ALL TESTS SUCCESSFUL");
    assertThat(guests.exitValue()).as(guests.output()).isZero();
  }

  /** The harness script {@code name}, beside rxe-vm.sh; the calling test is skipped where no guest can run. */
  private static Path harness(String name) {
    Assumptions.assumeFalse(Boolean.getBoolean("thallus.rdma.direct"), "device tests run directly on this machine");
    Assumptions.assumeTrue(System.getProperty("os.name").equals("Linux")
        && System.getProperty("os.arch").equals("amd64"), "the Soft-RoCE harness needs Linux on x86-64");
    Path harness = Path.of(System.getProperty("thallus.rdma.harness", "../harness/rxe-vm.sh")).toAbsolutePath()
        .normalize().resolveSibling(name);
    Assumptions.assumeTrue(Files.isExecutable(harness), "no harness at " + harness);
    return harness;
  }

  private record Finished(int exitValue, String output) {}

  /**
   * Runs a harness script to its end (45 minutes at most) and skips the calling test when the guests could not be
   * set up here and no test ran. What the guest prints is echoed as it comes, each line with the seconds since the
   * start, so that the build's log shows which guest test runs and how long each step took, even if the run never
   * ends.
   */
  private static Finished run(ProcessBuilder builder) throws Exception {
    Process guest = builder.redirectErrorStream(true).start();
    long start = System.nanoTime();
    StringBuilder output = new StringBuilder();
    Thread echo = Thread.ofPlatform().daemon().name("soft-roce-guest-output").start(() -> {
      try (BufferedReader lines = guest.inputReader(StandardCharsets.UTF_8)) {
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
          synchronized (output) {
            output.append(line).append('\n');
          }
          System.out.printf("[guest %5ds] %s%n", TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), line);
        }
      } catch (IOException e) {
        System.out.println("[guest] output stopped: " + e);
      }
    });
    if (!guest.waitFor(45, TimeUnit.MINUTES)) {
      guest.destroyForcibly();
      throw new AssertionError("the Soft-RoCE guest did not finish in 45 minutes");
    }
    echo.join(Duration.ofSeconds(30));
    String all;
    synchronized (output) {
      all = output.toString();
    }
    Assumptions.assumeTrue(guest.exitValue() != HARNESS_FAILED || all.contains("Test run finished"),
        () -> "the Soft-RoCE guest could not start here: " + lastLines(all));
    return new Finished(guest.exitValue(), all);
  }

  private static String lastLines(String output) {
    String[] lines = output.strip().split("\n");
    return String.join(" | ", List.of(lines).subList(Math.max(0, lines.length - 3), lines.length));
  }
}
