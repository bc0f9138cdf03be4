package io.thallus.exchange;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the endpoint tests share: one allocator per test that must close clean (nothing leaked), a spill folder, and
 * endpoints started on them; map outputs of {@link #PARTITIONS} partitions, {@link #BATCHES} batches each.
 */
abstract class EndpointFixture {
  static final int PARTITIONS = 6;
  static final int BATCHES = 3;

  @TempDir
  Path spill;
  BufferAllocator allocator;

  @BeforeEach
  void allocator() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void noLeak() {
    allocator.close();
  }

  /** An endpoint on this test's allocator and spill folder that asks its peers over {@code transport}. */
  ExchangeEndpoint endpoint(String transport, UnaryOperator<EndpointOptions.Builder> more) {
    return ExchangeEndpoint.start(more.apply(EndpointOptions.builder(allocator, spill).peerTransport(transport))
        .build());
  }

  /** No push target for any partition: the output waits for pulls. */
  static List<EndpointAddress> none() {
    return Collections.nCopies(PARTITIONS, null);
  }

  /** Every partition pushed to {@code target}. */
  static List<EndpointAddress> all(EndpointAddress target) {
    return Collections.nCopies(PARTITIONS, target);
  }
}
