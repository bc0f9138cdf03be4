package io.thallus.rdma.testing;

import static org.assertj.core.api.Assertions.assertThat;

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
 * NIC) the tagged tests run directly instead.
 */
public final class SoftRoceGuest {
  /** rxe-vm.sh's exit status when the guest itself could not be set up or started. */
  private static final int HARNESS_FAILED = 125;

  private SoftRoceGuest() {}

  public static void runTaggedTests(String... selectPackages) throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("thallus.rdma.direct"), "device tests run directly on this machine");
    Assumptions.assumeTrue(System.getProperty("os.name").equals("Linux")
        && System.getProperty("os.arch").equals("amd64"), "the Soft-RoCE harness needs Linux on x86-64");
    Path harness = Path.of(System.getProperty("thallus.rdma.harness", "../harness/rxe-vm.sh")).toAbsolutePath()
        .normalize();
    Assumptions.assumeTrue(Files.isExecutable(harness), "no harness at " + harness);

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
    Path log = Files.createTempFile("rxe-guest", ".log");
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().put("RXE_VM_TIMEOUT", "2400");
    Process guest = builder.start();
    if (!guest.waitFor(45, TimeUnit.MINUTES)) {
      guest.destroyForcibly();
      throw new AssertionError("the Soft-RoCE guest did not finish in 45 minutes");
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    Files.deleteIfExists(log);
    System.out.println(output);
    Assumptions.assumeTrue(guest.exitValue() != HARNESS_FAILED || output.contains("Test run finished"),
        () -> "the Soft-RoCE guest could not start here: " + lastLines(output));
    assertThat(output).contains("tests successful").contains("0 tests failed");
    assertThat(guest.exitValue()).as(output).isZero();
  }

  private static String lastLines(String output) {
    String[] lines = output.strip().split("\n");
    return String.join(" | ", List.of(lines).subList(Math.max(0, lines.length - 3), lines.length));
  }
}
