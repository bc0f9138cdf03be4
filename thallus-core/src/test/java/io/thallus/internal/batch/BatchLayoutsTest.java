package io.thallus.internal.batch;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.PackedBody;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ViewVarBinaryVector;
import org.apache.arrow.vector.ViewVarCharVector;
import org.junit.jupiter.api.Test;

/** A batch packed as a BATCH frame carries it and rebuilt on the other side loads as it was. */
class BatchLayoutsTest {
  @Test
  void viewColumnsKeepTheirVariadicBufferCountsAndLoadAsTheyWere() {
    try (BufferAllocator allocator = new RootAllocator();
         ViewVarCharVector text = new ViewVarCharVector("text", allocator);
         IntVector between = new IntVector("between", allocator);
         ViewVarBinaryVector bytes = new ViewVarBinaryVector("bytes", allocator)) {
      List<String> values = new ArrayList<>();
      int rows = 3000;
      for (int i = 0; i < rows; i++) {
        // Short values stay in the view, long ones go to data buffers (several of them, for this many rows).
        String value = i % 3 == 0 ? "s" + i : "a value of more than twelve bytes, number " + i;
        values.add(i % 7 == 5 ? null : value);
        if (values.get(i) == null) {
          text.setNull(i);
          bytes.setNull(i);
        } else {
          text.setSafe(i, value.getBytes(StandardCharsets.UTF_8));
          bytes.setSafe(i, value.getBytes(StandardCharsets.UTF_8));
        }
        between.setSafe(i, i);
      }
      text.setValueCount(rows);
      between.setValueCount(rows);
      bytes.setValueCount(rows);
      try (VectorSchemaRoot root = VectorSchemaRoot.of(text, between, bytes)) {
        root.setRowCount(rows);
        BatchContents contents = new BatchContents(List.of(), new VectorUnloader(root).getRecordBatch());
        List<Long> counts = contents.records().getVariadicBufferCounts();
        assertThat(counts).hasSize(2);
        try (contents) {
          PackedBody body = BatchLayouts.pack(contents);
          BatchHeader header = new BatchHeader(1, 1, body.parts());
          assertThat(header.parts().getLast().variadicBufferCounts()).isEqualTo(counts);
          ByteBuf inline = BatchLayouts.copyInline(body, Unpooled.buffer((int) body.length()));
          try (BatchContents rebuilt = BatchLayouts.fromInline(header, inline, allocator);
               VectorSchemaRoot loaded = VectorSchemaRoot.create(root.getSchema(), allocator)) {
            inline.release();
            new BatchValidator(root.getSchema()).check(rebuilt);
            new VectorLoader(loaded).load(rebuilt.records());
            for (int i = 0; i < rows; i++) {
              Object loadedText = loaded.getVector("text").getObject(i);
              assertThat(loadedText == null ? null : loadedText.toString()).as("row %d", i).isEqualTo(values.get(i));
              assertThat(loaded.getVector("between").getObject(i)).isEqualTo(i);
            }
            assertThat(loaded.getVector("bytes").getObject(rows - 1))
                .isEqualTo(values.get(rows - 1).getBytes(StandardCharsets.UTF_8));
            // retain() is a second handle on the same batch: the counts go with it.
            try (BatchContents second = rebuilt.retain()) {
              assertThat(second.records().getVariadicBufferCounts()).isEqualTo(counts);
            }
          }
        }
      }
    }
  }
}
