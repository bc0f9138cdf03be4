package io.thallus.benchmarks;

import io.thallus.internal.batch.BatchValidator;
import io.thallus.testing.SampleBatches;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the check of every incoming batch costs: {@link BatchValidator} on one 64K-row batch of one column of each
 * kind, as the receiver rebuilt it (each buffer exactly its bytes). Set against IngestBench's transport-only time per
 * batch (benchmarks/results/2026-11-26-validator).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class ValidatorBenchmark {
  @Param({"BIGINT", "DOUBLE", "VARCHAR", "LIST", "STRUCT", "DICTIONARY", "DECIMAL", "TIMESTAMP", "BOOLEAN",
      "VIEW_VARCHAR"})
  public String kind;

  @Param("65536")
  public int rows;

  private BufferAllocator allocator;
  private SampleBatches.Sample sample;

  @Setup(Level.Trial)
  public void setUp() {
    allocator = new RootAllocator();
    sample = SampleBatches.of(SampleBatches.Kind.valueOf(kind), rows, allocator);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    sample.close();
    allocator.close();
  }

  /** One stream's first batch: the validator is made from the schema, then checks dictionaries and records. */
  @Benchmark
  public BatchValidator validate() {
    BatchValidator validator = new BatchValidator(sample.schema());
    validator.check(sample.contents());
    return validator;
  }
}
