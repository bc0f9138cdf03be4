package io.thallus.benchmarks;

import java.math.BigDecimal;
import java.math.MathContext;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * TPC-H Q1 as Spark runs it over a sharded lineitem: each shard answers a partial aggregate (the sums and the count
 * per group; AVG as SUM and COUNT), merged here into the final rows, and Q1 whole (one query over every file), both
 * compared with one another and with DuckDB run directly over all the files.
 */
final class Q1Partials {
  private Q1Partials() {}

  private static final String WHERE_GROUP = " FROM %s WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL 90 DAY "
      + "GROUP BY l_returnflag, l_linestatus";

  /** Each shard's part of Q1, over the request's dataset. */
  static final String PARTIAL = "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, "
      + "sum(l_extendedprice) AS sum_base_price, sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
      + "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, sum(l_discount) AS sum_disc, "
      + "count(*) AS count_order" + WHERE_GROUP.formatted("dataset");

  /** Q1 whole over {@code from} (a dataset, or read_parquet of every file). */
  static String whole(String from) {
    return "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price, "
        + "sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
        + "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, sum(l_discount) AS sum_disc, "
        + "count(*) AS count_order" + WHERE_GROUP.formatted(from) + " ORDER BY l_returnflag, l_linestatus";
  }

  /** One group of Q1: its sums and count (the averages follow from them). */
  record Group(String flag, String status, BigDecimal sumQty, BigDecimal sumBase, BigDecimal sumDiscPrice,
      BigDecimal sumCharge, BigDecimal sumDisc, long count) {
    Group plus(Group other) {
      return new Group(flag, status, sumQty.add(other.sumQty), sumBase.add(other.sumBase),
          sumDiscPrice.add(other.sumDiscPrice), sumCharge.add(other.sumCharge), sumDisc.add(other.sumDisc),
          count + other.count);
    }

    BigDecimal avgQty() {
      return sumQty.divide(BigDecimal.valueOf(count), MathContext.DECIMAL64);
    }
  }

  /** Groups of an answer in key order, merged where a key repeats (several shards' partials). */
  static final class Answer {
    private final Map<String, Group> groups = new TreeMap<>();

    void add(Group group) {
      groups.merge(group.flag() + "|" + group.status(), group, Group::plus);
    }

    /** Adds the rows of one batch of a partial or whole answer. */
    void add(VectorSchemaRoot batch) {
      for (int i = 0; i < batch.getRowCount(); i++) {
        add(new Group(batch.getVector("l_returnflag").getObject(i).toString(),
            batch.getVector("l_linestatus").getObject(i).toString(), decimal(batch, "sum_qty", i),
            decimal(batch, "sum_base_price", i), decimal(batch, "sum_disc_price", i),
            decimal(batch, "sum_charge", i), decimal(batch, "sum_disc", i),
            ((Number) batch.getVector("count_order").getObject(i)).longValue()));
      }
    }

    /** Adds the rows DuckDB's own driver answers {@link #whole} with. */
    void add(ResultSet rows) throws SQLException {
      while (rows.next()) {
        add(new Group(rows.getString(1), rows.getString(2), rows.getBigDecimal(3), rows.getBigDecimal(4),
            rows.getBigDecimal(5), rows.getBigDecimal(6), rows.getBigDecimal(7), rows.getLong(8)));
      }
    }

    List<Group> groups() {
      return new ArrayList<>(groups.values());
    }

    /** Equal sums and counts, group by group (decimal sums compared by value, not scale). */
    boolean sameAs(Answer other) {
      List<Group> a = groups();
      List<Group> b = other.groups();
      if (a.size() != b.size()) {
        return false;
      }
      for (int i = 0; i < a.size(); i++) {
        Group x = a.get(i);
        Group y = b.get(i);
        if (!x.flag().equals(y.flag()) || !x.status().equals(y.status()) || x.count() != y.count()
            || x.sumQty().compareTo(y.sumQty()) != 0 || x.sumBase().compareTo(y.sumBase()) != 0
            || x.sumDiscPrice().compareTo(y.sumDiscPrice()) != 0 || x.sumCharge().compareTo(y.sumCharge()) != 0
            || x.sumDisc().compareTo(y.sumDisc()) != 0) {
          return false;
        }
      }
      return true;
    }

    @Override
    public String toString() {
      StringBuilder text = new StringBuilder();
      for (Group g : groups()) {
        text.append(g.flag()).append(' ').append(g.status()).append(": count ").append(g.count())
            .append(", sum_qty ").append(g.sumQty().toPlainString()).append(", avg_qty ")
            .append(g.avgQty().toPlainString()).append(", sum_charge ").append(g.sumCharge().toPlainString())
            .append('\n');
      }
      return text.toString();
    }
  }

  private static BigDecimal decimal(VectorSchemaRoot batch, String column, int row) {
    Object value = batch.getVector(column).getObject(row);
    return value instanceof BigDecimal d ? d : new BigDecimal(value.toString());
  }
}
