package io.thallus.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BenchmarkListTest {
  /** Without the annotation processor on its path the build still passes but generates no benchmark at all. */
  @Test
  void theJmhAnnotationProcessorGeneratedEveryBenchmark() throws IOException {
    try (InputStream list = getClass().getResourceAsStream("/META-INF/BenchmarkList")) {
      assertThat(list).as("META-INF/BenchmarkList in the built classes").isNotNull();
      String text = new String(list.readAllBytes(), StandardCharsets.UTF_8);
      assertThat(text).isNotBlank().contains("TransportPullBenchmark_pull_jmhTest").contains("OneRowQueryBenchmark_query_jmhTest");
    }
  }
}
