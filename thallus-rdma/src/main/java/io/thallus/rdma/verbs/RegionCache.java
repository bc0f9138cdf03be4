package io.thallus.rdma.verbs;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Registrations of memory that is not the pool's own (DuckDB's exported result buffers, say), kept and reused: a
 * lookup finds the region that already covers an address range; a miss registers the whole aligned chunk around
 * it, so neighbouring buffers of later batches hit. Thread-safe. Deregisters everything on close, and a range can
 * be dropped when its memory goes back to its owner ({@link #evict}).
 */
public final class RegionCache implements AutoCloseable {
  private final ProtectionDomain domain;
  private final Set<MemoryRegion.Access> access;
  private final long chunk;
  private final TreeMap<Long, MemoryRegion> byStart = new TreeMap<>();
  private long hits;
  private long misses;

  /** {@code chunk}: the alignment and size registered on a miss (a power of two, e.g. 64 MiB). */
  public RegionCache(ProtectionDomain domain, Set<MemoryRegion.Access> access, long chunk) {
    if (Long.bitCount(chunk) != 1) {
      throw new IllegalArgumentException("chunk must be a power of two, got " + chunk);
    }
    this.domain = domain;
    this.access = EnumSet.copyOf(access);
    this.chunk = chunk;
  }

  /**
   * The region covering {@code [address, address + length)}, registering one on a miss. The caller must know the
   * whole chunk is mapped memory it may expose; a range that is not is registered exactly instead.
   */
  public synchronized MemoryRegion regionFor(long address, long length, boolean wholeChunkIsMapped) {
    Map.Entry<Long, MemoryRegion> floor = byStart.floorEntry(address);
    if (floor != null && floor.getValue().contains(address, length)) {
      hits++;
      return floor.getValue();
    }
    misses++;
    long start = wholeChunkIsMapped ? address & -chunk : address;
    long end = wholeChunkIsMapped ? (address + length + chunk - 1) & -chunk : address + length;
    MemoryRegion region = domain.register(start, end - start, access);
    byStart.put(start, region);
    return region;
  }

  /** Deregisters every cached region that overlaps {@code [address, address + length)}. */
  public synchronized void evict(long address, long length) {
    var it = byStart.entrySet().iterator();
    while (it.hasNext()) {
      MemoryRegion region = it.next().getValue();
      if (region.address() < address + length && address < region.address() + region.length()) {
        region.close();
        it.remove();
      }
    }
  }

  public synchronized long hits() {
    return hits;
  }

  public synchronized long misses() {
    return misses;
  }

  @Override
  public synchronized void close() {
    byStart.values().forEach(MemoryRegion::close);
    byStart.clear();
  }
}
