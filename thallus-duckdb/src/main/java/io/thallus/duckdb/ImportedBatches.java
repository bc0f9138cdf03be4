package io.thallus.duckdb;

import io.thallus.spi.BatchContents;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.memory.OwnershipTransferResult;
import org.apache.arrow.memory.ReferenceManager;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Where DuckDB's batches come in through Arrow's C data import, and how they reach the stream's budget. Arrow's
 * import takes a reference to the exported array before it accounts each buffer; when the accounting is refused (a
 * budget used up) that reference is never given back, so the array's 128-byte struct stays allocated and DuckDB's
 * release callback never runs (its memory for the batch stays too). So the import never meets a budget: it runs in
 * an allocator of its own with no limit below the root's, and each batch is then moved whole into the stream's
 * allocator. A batch that does not fit there is freed (DuckDB's memory released with it) and fails with
 * {@link OutOfMemoryException}, as an allocation would.
 */
final class ImportedBatches {
  private static final AtomicLong NAMES = new AtomicLong();

  private ImportedBatches() {}

  /**
   * Where one result's import runs: a child of {@code target}'s root, with no limit of its own. Each imported batch
   * keeps a 128-byte struct there (Arrow's copy of DuckDB's array) until the batch's last buffer is released, which
   * may be after the result has ended (a client still reading it): the allocator closes itself when the result has
   * {@linkplain Importing#finish finished} and the last of them is gone.
   */
  static Importing open(BufferAllocator target) {
    BufferAllocator root = target.getRoot();
    Importing importing = new Importing();
    importing.allocator = root.newChildAllocator("duckdb-import-" + NAMES.incrementAndGet(), importing, 0,
        root.getLimit());
    return importing;
  }

  /** One result's import allocator, which closes once the result is done with it and nothing is left in it. */
  static final class Importing implements org.apache.arrow.memory.AllocationListener {
    private BufferAllocator allocator;
    private volatile boolean finished;

    BufferAllocator allocator() {
      return allocator;
    }

    /** The result reads no more: the allocator closes now if empty, else with the release of its last struct. */
    void finish() {
      finished = true;
      closeIfEmpty();
    }

    @Override
    public void onRelease(long size) {
      if (finished) {
        closeIfEmpty();
      }
    }

    private void closeIfEmpty() {
      // Closing is idempotent and synchronized; once finished, nothing is allocated here any more.
      if (allocator.getAllocatedMemory() == 0) {
        allocator.close();
      }
    }
  }

  /** {@code batch} accounted in {@code target} instead; {@code batch} is closed whatever happens. */
  static BatchContents moveTo(BatchContents batch, BufferAllocator target) {
    try (batch) {
      List<ArrowDictionaryBatch> dictionaries = new ArrayList<>(batch.dictionaries().size());
      try {
        boolean fits = true;
        for (ArrowDictionaryBatch dictionary : batch.dictionaries()) {
          Moved moved = move(dictionary.getDictionary(), target);
          dictionaries.add(new ArrowDictionaryBatch(dictionary.getDictionaryId(), moved.batch, dictionary.isDelta()));
          fits &= moved.fits;
        }
        Moved records = move(batch.records(), target);
        BatchContents result = new BatchContents(dictionaries, records.batch);
        if (!fits || !records.fits) {
          long bytes = result.bufferBytes();
          result.close();
          throw new OutOfMemoryException("a batch of " + bytes + " bytes from DuckDB does not fit in "
              + target.getName() + " (" + target.getAllocatedMemory() + " of " + target.getLimit()
              + " bytes in use, its budgets above included)");
        }
        return result;
      } catch (RuntimeException e) {
        dictionaries.forEach(ArrowDictionaryBatch::close);
        throw e;
      }
    }
  }

  private record Moved(ArrowRecordBatch batch, boolean fits) {}

  /**
   * A batch on the same memory, accounted in {@code target}. The accounting moves even when {@code target} has no
   * room (Arrow forces a transfer); {@code fits} says whether it had.
   */
  private static Moved move(ArrowRecordBatch batch, BufferAllocator target) {
    List<ArrowBuf> moved = new ArrayList<>(batch.getBuffers().size());
    boolean fits = true;
    try {
      for (ArrowBuf buffer : batch.getBuffers()) {
        ReferenceManager owner = buffer.getReferenceManager();
        if (owner == ReferenceManager.NO_OP) {
          // An empty buffer belongs to no allocator: it goes as it is.
          owner.retain();
          moved.add(buffer);
          continue;
        }
        OwnershipTransferResult transfer = owner.transferOwnership(buffer, target);
        moved.add(transfer.getTransferredBuffer());
        fits &= transfer.getAllocationFit();
      }
      // The batch takes a reference of its own to each buffer; the ones taken here are given back below.
      return new Moved(new ArrowRecordBatch(batch.getLength(), batch.getNodes(), moved, batch.getBodyCompression(),
          batch.getVariadicBufferCounts(), true), fits);
    } finally {
      moved.forEach(ArrowBuf::close);
    }
  }
}
