package io.thallus.rdma.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.testing.JvmFlags;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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

  private SoftRoceGuest() {}

  public static void runTaggedTests(String... selectPackages) throws Exception {
    Path harness = harness("rxe-vm.sh");
    List<String> command = new ArrayList<>();
    command.add(harness.toString());
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(JvmFlags.forChild());
    ManagementFactory.getRuntimeMXBean().getInputArguments().stream().filter(f -> f.startsWith("-Xmx"))
        .forEach(command::add);
    command.addAll(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp", System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
        "org.junit.platform.console.ConsoleLauncher", "execute", "--include-tag=rdma-device"));
    for (String selectPackage : selectPackages) {
      command.add("--select-package=" + selectPackage);
    }
    command.addAll(List.of("--disable-banner", "--disable-ansi-colors", "--details=tree", "--fail-if-no-tests"));
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
   * Runs a harness script to its end (45 minutes at most), prints what it printed, and skips the calling test when
   * the guests could not be set up here and no test ran.
   */
  private static Finished run(ProcessBuilder builder) throws Exception {
    Path log = Files.createTempFile("rxe-guest", ".log");
    Process guest = builder.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!guest.waitFor(45, TimeUnit.MINUTES)) {
      guest.destroyForcibly();
      throw new AssertionError("the Soft-RoCE guest did not finish in 45 minutes");
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    Files.deleteIfExists(log);
    System.out.println(output);
    Assumptions.assumeTrue(guest.exitValue() != HARNESS_FAILED || output.contains("Test run finished"),
        () -> "the Soft-RoCE guest could not start here: " + lastLines(output));
    return new Finished(guest.exitValue(), output);
  }

  private static String lastLines(String output) {
    String[] lines = output.strip().split("\n");
    return String.join(" | ", List.of(lines).subList(Math.max(0, lines.length - 3), lines.length));
  }
}
