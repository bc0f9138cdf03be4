package io.thallus.testing;

import java.lang.management.ManagementFactory;
import java.util.List;

/** The flags a test's child JVM needs from this one: the ones Arrow and the FFM binding need on JDK 25. */
public final class JvmFlags {
  private JvmFlags() {}

  public static List<String> forChild() {
    return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(flag -> flag.startsWith("--add-opens") || flag.startsWith("--enable-native-access")
            || flag.startsWith("--sun-misc"))
        .toList();
  }
}
