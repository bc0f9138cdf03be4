package io.thallus.internal.transport.shm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import io.thallus.spi.PlacedBody;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A connection's shm segments, real files under /dev/shm: they count against the budget they are given (the
 * connection's own, inside its credential's), a segment left empty is let go with its file and its bytes, its reader
 * unmaps it when the next segment comes, and a budget without room leaves nothing behind.
 */
class SegmentWriterTest {
  private static final Deadline SOON = Deadline.after(Duration.ofSeconds(10));
  private static final int ROWS = 100_000; // 800 KB bodies

  private BufferAllocator root;
  private BufferAllocator connection;
  private Path folder;

  @BeforeEach
  void start() {
    root = new RootAllocator();
    connection = root.newChildAllocator("connection", 0, 64L << 20);
    folder = ShmServer.createFolder(ShmServer.base(), new SecureRandom());
  }

  @AfterEach
  void stop() {
    ShmServer.deleteFolder(folder);
    connection.close(); // fails on any byte still accounted
    root.close();
  }

  private PlacedBody place(SegmentWriter writer) {
    try (BatchContents batch = batch()) {
      return writer.place(BatchLayouts.pack(batch), SOON);
    }
  }

  @Test
  void segmentsCountAgainstTheConnectionsBudgetAndAnEmptyOneIsLetGo() {
    try (SegmentWriter writer = new SegmentWriter(folder, ShmServer.RESULTS, false, connection, 64L << 20)) {
      PlacedBody first = place(writer);
      long segments = writer.segmentBytes();
      assertThat(segments).isGreaterThanOrEqualTo(800_000);
      assertThat(connection.getAllocatedMemory()).as("the segment's bytes, in the connection's budget")
          .isEqualTo(segments);
      Path file = folder.resolve("0" + ShmTransport.SEGMENT_SUFFIX);
      assertThat(file).exists();

      writer.releaseIdle(Duration.ZERO);
      assertThat(writer.segmentBytes()).as("a segment with a body in it stays").isEqualTo(segments);

      first.close();
      writer.releaseIdle(Duration.ofHours(1));
      assertThat(writer.segmentBytes()).as("empty for less than the idle time: kept for reuse").isEqualTo(segments);
      assertThat(writer.releaseIdle(Duration.ZERO)).as("the bytes let go, as a waiting stream is told")
          .isEqualTo(segments);
      assertThat(writer.segmentBytes()).isZero();
      assertThat(connection.getAllocatedMemory()).isZero();
      assertThat(file).doesNotExist();

      PlacedBody next = place(writer);
      assertThat(next.parts().getFirst().buffers().getFirst().key()).as("a new segment, under a new id").isEqualTo(1);
      assertThat(folder.resolve("1" + ShmTransport.SEGMENT_SUFFIX)).exists();
      next.close();
    }
    assertThat(connection.getAllocatedMemory()).isZero();
  }

  @Test
  void theReaderUnmapsASegmentTheWriterLetGoWhenTheNextOneComes() {
    try (SegmentWriter writer = new SegmentWriter(folder, ShmServer.RESULTS, false, connection, 64L << 20);
         SegmentReader reader = new SegmentReader(folder, ShmServer.RESULTS)) {
      PlacedBody first = place(writer);
      FetchedBody fetched = reader.fetch(new BatchHeader(1, 0, first.parts()));
      fetched.release();
      first.close();
      assertThat(reader.mappedCount()).isEqualTo(1);
      writer.releaseIdle(Duration.ZERO);

      PlacedBody second = place(writer);
      FetchedBody again = reader.fetch(new BatchHeader(1, 1, second.parts()));
      assertThat(reader.mappedCount()).as("segment 0's file is gone and no batch borrows from it").isEqualTo(1);
      again.release();
      second.close();
    }
  }

  @Test
  void aBudgetWithoutRoomForASegmentLeavesNoFileAndNoBytes() {
    try (BufferAllocator small = connection.newChildAllocator("small", 0, 256 << 10);
         SegmentWriter writer = new SegmentWriter(folder, ShmServer.RESULTS, false, small, 64L << 20)) {
      assertThatThrownBy(() -> place(writer)).isInstanceOfSatisfying(ThallusException.class, e -> {
        assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
        assertThat(e.getMessage()).contains("no room in the memory budget");
      });
      assertThat(small.getAllocatedMemory()).isZero();
      try (var files = Files.list(folder)) {
        assertThat(files.toList()).isEmpty();
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private BatchContents batch() {
    try (BigIntVector values = new BigIntVector("v", root)) {
      values.allocateNew(ROWS);
      for (int i = 0; i < ROWS; i++) {
        values.set(i, i);
      }
      values.setValueCount(ROWS);
      try (VectorSchemaRoot batch = VectorSchemaRoot.of(values)) {
        return new BatchContents(List.of(), new VectorUnloader(batch).getRecordBatch());
      }
    }
  }
}
