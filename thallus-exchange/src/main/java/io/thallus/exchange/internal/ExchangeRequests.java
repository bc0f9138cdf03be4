package io.thallus.exchange.internal;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.Base64;

/**
 * The exchange's two typed requests and their one codec. A pull travels as the one {@code byte[]} parameter of a
 * Thallus query whose text is {@link #PULL_STATEMENT}; a push's header travels in the schema metadata of a Thallus
 * ingest under {@link #PUSH_HEADER_KEY} (Base64 of the same codec's bytes). Nothing else carries meaning.
 *
 * <pre>
 * pull:  u8 version=2 | u8 kind=1 | i32 shuffle | i32 n | n x (i32 partition | i32 m | m x i64 map id)
 *        partitions strictly ascending, each with at least one map; at most MAX_ENTRIES partitions and
 *        MAX_ENTRIES map ids in all
 * push:  u8 version=2 | u8 kind=2 | i32 shuffle | i64 map | i32 sequence | u8 last | i64 bytes
 *        | i32 n | n x (i32 partition, i32 rows)      rows of the push's batches, in this order
 * </pre>
 */
public final class ExchangeRequests {
  /** The query text of every pull; the request itself is the parameter. */
  public static final String PULL_STATEMENT = "thallus-exchange pull";
  /** The schema metadata key of a push's header. */
  public static final String PUSH_HEADER_KEY = "thallus.exchange.push";
  /** The table name every push names (an ingest needs one; it means nothing). */
  public static final String PUSH_TABLE = "thallus_exchange_push";
  /** At most this many map ids in one pull, or partition runs in one push. */
  public static final int MAX_ENTRIES = 1 << 20;

  /** 2: a pull names a range of partitions, each with its maps (1 named one partition); versions do not mix. */
  private static final int VERSION = 2;
  private static final int PULL = 1;
  private static final int PUSH = 2;

  private ExchangeRequests() {}

  /**
   * The maps that a reducer pulls from one endpoint for a range of partitions, in the order it wants them: partitions
   * ascending, and for each partition its maps ({@code mapIds[i]} for {@code partitions[i]}), so one request serves a
   * reduce task that reads several partitions (Spark's coalesced ones), each with its own maps if they differ.
   */
  public record Pull(int shuffleId, int[] partitions, long[][] mapIds) {
    public Pull {
      if (partitions.length != mapIds.length) {
        throw new IllegalArgumentException(partitions.length + " partitions but " + mapIds.length + " map lists");
      }
      partitions = partitions.clone();
      mapIds = mapIds.clone();
      for (int i = 0; i < mapIds.length; i++) {
        mapIds[i] = mapIds[i].clone();
      }
    }

    /** A pull of one partition's maps. */
    public Pull(int shuffleId, int partition, long[] mapIds) {
      this(shuffleId, new int[] {partition}, new long[][] {mapIds});
    }

    @Override
    public int[] partitions() {
      return partitions.clone();
    }

    /** The maps of the {@code index}-th partition. */
    public long[] mapIds(int index) {
      return mapIds[index].clone();
    }

    @Override
    public long[][] mapIds() {
      long[][] copy = mapIds.clone();
      for (int i = 0; i < copy.length; i++) {
        copy[i] = copy[i].clone();
      }
      return copy;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Pull p && p.shuffleId == shuffleId && Arrays.equals(p.partitions, partitions)
          && Arrays.deepEquals(p.mapIds, mapIds);
    }

    @Override
    public int hashCode() {
      return 31 * (31 * shuffleId + Arrays.hashCode(partitions)) + Arrays.deepHashCode(mapIds);
    }

    @Override
    public String toString() {
      return "Pull[shuffle=" + shuffleId + ", partitions=" + Arrays.toString(partitions) + ", maps="
          + Arrays.deepToString(mapIds) + "]";
    }
  }

  /**
   * One push of a map's rows to one endpoint: the push {@code sequence} of that map to that endpoint (0, 1, ...),
   * whether it is the map's {@code last} one there, the bytes it reserves in the receiver's buffer, and the rows of its
   * batches as runs of {@code (partition, rows)}.
   */
  public record PushHeader(int shuffleId, long mapId, int sequence, boolean last, long bytes, int[] partitions,
      int[] rows) {
    public PushHeader {
      if (partitions.length != rows.length) {
        throw new IllegalArgumentException("partitions and rows differ in length");
      }
      partitions = partitions.clone();
      rows = rows.clone();
    }

    public long totalRows() {
      long total = 0;
      for (int r : rows) {
        total += r;
      }
      return total;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof PushHeader h && h.shuffleId == shuffleId && h.mapId == mapId && h.sequence == sequence
          && h.last == last && h.bytes == bytes && Arrays.equals(h.partitions, partitions)
          && Arrays.equals(h.rows, rows);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(new long[] {shuffleId, mapId, sequence, last ? 1 : 0, bytes})
          + 31 * Arrays.hashCode(partitions) + Arrays.hashCode(rows);
    }

    @Override
    public String toString() {
      return "Push[shuffle=" + shuffleId + ", map=" + mapId + ", sequence=" + sequence + ", last=" + last + ", bytes="
          + bytes + ", runs=" + partitions.length + "]";
    }
  }

  public static byte[] encode(Pull pull) {
    int maps = 0;
    for (long[] ofPartition : pull.mapIds) {
      maps += ofPartition.length;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(10 + 8 * pull.partitions.length + 8 * maps);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      out.writeByte(PULL);
      out.writeInt(pull.shuffleId);
      out.writeInt(pull.partitions.length);
      for (int i = 0; i < pull.partitions.length; i++) {
        out.writeInt(pull.partitions[i]);
        out.writeInt(pull.mapIds[i].length);
        for (long map : pull.mapIds[i]) {
          out.writeLong(map);
        }
      }
    } catch (IOException impossible) {
      throw new IllegalStateException(impossible);
    }
    return bytes.toByteArray();
  }

  /**
   * Reads a pull, refusing one that lies: counts past the request's bytes or past {@link #MAX_ENTRIES} (in all),
   * negative ids, partitions not strictly ascending, a partition without maps, bytes past the end.
   */
  public static Pull decodePull(byte[] request) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(request))) {
      expectHeader(in, PULL);
      int shuffle = nonNegative(in.readInt(), "shuffle id");
      // Each partition takes at least 16 bytes: its id, its count and one map id.
      int count = count(in.readInt(), "partitions", request.length - 10, 16);
      if (count == 0) {
        throw invalid("a pull names no partition");
      }
      int[] partitions = new int[count];
      long[][] maps = new long[count][];
      int mapsInAll = 0;
      for (int i = 0; i < count; i++) {
        partitions[i] = nonNegative(in.readInt(), "partition");
        if (i > 0 && partitions[i] <= partitions[i - 1]) {
          throw invalid("a pull's partitions are not strictly ascending: " + partitions[i] + " after "
              + partitions[i - 1]);
        }
        int ofPartition = count(in.readInt(), "map ids", in.available(), 8);
        if (ofPartition == 0) {
          throw invalid("a pull names no map for partition " + partitions[i]);
        }
        mapsInAll += ofPartition;
        if (mapsInAll > MAX_ENTRIES) {
          throw invalid("a pull names more than " + MAX_ENTRIES + " map ids in all");
        }
        maps[i] = new long[ofPartition];
        for (int m = 0; m < ofPartition; m++) {
          maps[i][m] = nonNegative(in.readLong(), "map id");
        }
      }
      expectEnd(in);
      return new Pull(shuffle, partitions, maps);
    } catch (IOException truncated) {
      throw invalid("a pull request of " + request.length + " bytes is truncated");
    }
  }

  public static String encode(PushHeader header) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(32 + 8 * header.partitions.length);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      out.writeByte(PUSH);
      out.writeInt(header.shuffleId);
      out.writeLong(header.mapId);
      out.writeInt(header.sequence);
      out.writeByte(header.last ? 1 : 0);
      out.writeLong(header.bytes);
      out.writeInt(header.partitions.length);
      for (int i = 0; i < header.partitions.length; i++) {
        out.writeInt(header.partitions[i]);
        out.writeInt(header.rows[i]);
      }
    } catch (IOException impossible) {
      throw new IllegalStateException(impossible);
    }
    return Base64.getEncoder().encodeToString(bytes.toByteArray());
  }

  public static PushHeader decodePush(String encoded) {
    byte[] request;
    try {
      request = Base64.getDecoder().decode(encoded);
    } catch (IllegalArgumentException notBase64) {
      throw invalid("a push header is not Base64: " + notBase64.getMessage());
    }
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(request))) {
      expectHeader(in, PUSH);
      int shuffle = nonNegative(in.readInt(), "shuffle id");
      long map = nonNegative(in.readLong(), "map id");
      int sequence = nonNegative(in.readInt(), "push sequence");
      int last = in.readUnsignedByte();
      if (last > 1) {
        throw invalid("a push's last flag is " + last + ", not 0 or 1");
      }
      long bytes = in.readLong();
      if (bytes < 0) {
        throw invalid("a push announces " + bytes + " bytes");
      }
      int count = count(in.readInt(), "partition runs", request.length - 31, 8);
      int[] partitions = new int[count];
      int[] rows = new int[count];
      for (int i = 0; i < count; i++) {
        partitions[i] = nonNegative(in.readInt(), "partition");
        rows[i] = nonNegative(in.readInt(), "row count");
      }
      expectEnd(in);
      return new PushHeader(shuffle, map, sequence, last == 1, bytes, partitions, rows);
    } catch (IOException truncated) {
      throw invalid("a push header of " + request.length + " bytes is truncated");
    }
  }

  private static void expectHeader(DataInputStream in, int kind) throws IOException {
    int version = in.readUnsignedByte();
    if (version != VERSION) {
      throw invalid("exchange request version " + version + " is not " + VERSION);
    }
    int actual = in.readUnsignedByte();
    if (actual != kind) {
      throw invalid("exchange request kind " + actual + " is not " + (kind == PULL ? "a pull" : "a push"));
    }
  }

  private static void expectEnd(DataInputStream in) throws IOException {
    if (in.available() > 0) {
      throw invalid("an exchange request has " + in.available() + " bytes past its end");
    }
  }

  private static long nonNegative(long value, String what) {
    if (value < 0) {
      throw invalid("a " + what + " of " + value + " is negative");
    }
    return value;
  }

  private static int nonNegative(int value, String what) {
    if (value < 0) {
      throw invalid("a " + what + " of " + value + " is negative");
    }
    return value;
  }

  private static int count(int value, String what, int bytesLeft, int entryBytes) {
    if (value < 0 || value > MAX_ENTRIES || (long) value * entryBytes > bytesLeft) {
      throw invalid(value + " " + what + " do not fit the request (at most " + MAX_ENTRIES + ")");
    }
    return value;
  }

  private static ThallusException invalid(String message) {
    return ThallusException.of(StatusCode.INVALID_ARGUMENT, message);
  }
}
