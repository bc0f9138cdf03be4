package io.thallus.spark.shuffle;

import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.CollationAwareMurmur3Hash;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Murmur3Hash;
import org.apache.spark.sql.catalyst.expressions.Pmod;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.vectorized.ColumnVector;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's hash partition id, {@code pmod(murmur3hash(k1, ..., kn; seed), n)}, computed without a projection where
 * every key is one of the input's columns: the hash folds over the keys (a null key leaves it unchanged), each
 * hashed as Spark's Murmur3Hash does for its type ({@link Murmur3Keys}), and the pmod keeps it non-negative. For an
 * input batch the hash folds key by key over all its rows, reading an Arrow key column's buffers directly (ints and
 * dates, longs and timestamps, decimals of at most 18 digits, strings, binaries) and any other through its getters.
 */
final class Murmur3PartitionIds extends RowPartitionIds {
  private final Murmur3Keys.Key[] keys;
  /** A map task's own: each task makes its ids ({@link ExchangeLayout#partitionIds}). */
  private final Murmur3Keys.Scratch scratch = new Murmur3Keys.Scratch();
  private final int seed;
  private final int partitions;
  /** ceil(2^64 / partitions): the remainder by a multiplication (Lemire's fastmod), not a division per row. */
  private final long inverse;

  private Murmur3PartitionIds(Murmur3Keys.Key[] keys, int seed, int partitions) {
    this.keys = keys;
    this.seed = seed;
    this.partitions = partitions;
    this.inverse = Long.divideUnsigned(-1L, partitions) + 1;
  }

  /**
   * The partition ids of {@code partitionId} over {@code input}'s rows, or null where the expression is not a
   * pmod of a Murmur3 hash of input columns by a literal (the caller then evaluates it with Spark's projection).
   */
  static Murmur3PartitionIds of(Expression partitionId, List<Attribute> input) {
    if (!(partitionId instanceof Pmod pmod && pmod.right() instanceof Literal literal
        && literal.dataType() instanceof IntegerType && literal.value() instanceof Integer partitions
        && partitions > 0)) {
      return null;
    }
    // Spark 4's HashPartitioning hashes with CollationAwareMurmur3Hash, which is Murmur3Hash for every type the
    // exchange claims (strings of the default collation hash their bytes); the tests hold both to Spark's answer.
    int seed;
    Expression hash = pmod.left();
    if (hash instanceof Murmur3Hash murmur3) {
      seed = murmur3.seed();
    } else if (hash instanceof CollationAwareMurmur3Hash collationAware) {
      seed = collationAware.seed();
    } else {
      return null;
    }
    List<Expression> children = CollectionConverters.asJava(hash.children());
    Murmur3Keys.Key[] keys = new Murmur3Keys.Key[children.size()];
    for (int k = 0; k < keys.length; k++) {
      if (!(children.get(k) instanceof AttributeReference key)) {
        return null;
      }
      int ordinal = ordinalOf(key, input);
      DataType type = key.dataType();
      if (ordinal < 0 || !type.equals(input.get(ordinal).dataType())) {
        return null;
      }
      keys[k] = Murmur3Keys.of(type, ordinal);
      if (keys[k] == null) {
        return null;
      }
    }
    return new Murmur3PartitionIds(keys, seed, partitions);
  }

  private static int ordinalOf(AttributeReference key, List<Attribute> input) {
    for (int i = 0; i < input.size(); i++) {
      if (input.get(i).exprId().equals(key.exprId())) {
        return i;
      }
    }
    return -1;
  }

  @Override
  int of(InternalRow row) {
    int hash = seed;
    for (Murmur3Keys.Key key : keys) {
      if (!row.isNullAt(key.ordinal)) {
        hash = key.hash(row, hash);
      }
    }
    return pmod(hash);
  }

  @Override
  void of(ColumnSource[] sources, int rows, int[] into) {
    Arrays.fill(into, 0, rows, seed);
    for (Murmur3Keys.Key key : keys) {
      ColumnSource source = sources[key.ordinal];
      if (key.hashAll(source, rows, into, scratch)) {
        continue; // read from the column's Arrow buffers
      }
      ColumnVector column = source.column;
      boolean nulls = source.nulls;
      for (int i = 0; i < rows; i++) {
        if (!nulls || !column.isNullAt(i)) {
          into[i] = key.hash(column, i, into[i]);
        }
      }
    }
    for (int i = 0; i < rows; i++) {
      into[i] = pmod(into[i]);
    }
  }

  /**
   * Spark's {@code pmod(hash, n)}: the remainder of |hash| by n (exact for every 32-bit |hash| and n), negated back
   * for a negative hash and made non-negative. The partition count is not a constant here as it is in Spark's
   * generated code, and a division per row cost more than the hash.
   */
  int pmod(int hash) {
    long magnitude = Math.abs((long) hash);
    int remainder = (int) Math.unsignedMultiplyHigh(inverse * magnitude, partitions);
    return hash >= 0 || remainder == 0 ? remainder : partitions - remainder;
  }
}
