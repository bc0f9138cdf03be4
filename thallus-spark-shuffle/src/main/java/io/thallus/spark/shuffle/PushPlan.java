package io.thallus.spark.shuffle;

import io.thallus.exchange.EndpointAddress;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where a shuffle's reduce partitions are pushed, fixed on the driver when the shuffle's dependency is built: reduce
 * partition {@code p} of {@code P} goes to executor {@code p * n / P} of the {@code n} registered ones, so each
 * executor gets one contiguous range and AQE's coalesced ranges mostly stay on one executor. It travels to the map
 * tasks in the dependency; the reduce tasks prefer the executor their partitions were pushed to.
 *
 * @param targets the executors, in order
 * @param partitions the shuffle's reduce partitions
 * @param commitWaitMillis how long a map task's commit waits for its pushes to be sent (0: not at all)
 */
record PushPlan(List<ExecutorEndpoint> targets, int partitions, long commitWaitMillis) implements Serializable {
  PushPlan {
    if (targets.isEmpty()) {
      throw new IllegalArgumentException("a push plan needs at least one executor");
    }
    if (partitions < 1) {
      throw new IllegalArgumentException("a push plan needs at least one partition, not " + partitions);
    }
    if (commitWaitMillis < 0) {
      throw new IllegalArgumentException("a push plan's commit wait cannot be negative: " + commitWaitMillis);
    }
    targets = List.copyOf(targets);
  }

  /** The executor that reduces {@code partition}. */
  ExecutorEndpoint target(int partition) {
    if (partition < 0 || partition >= partitions) {
      throw new IllegalArgumentException("partition " + partition + " is not one of " + partitions);
    }
    return targets.get((int) ((long) partition * targets.size() / partitions));
  }

  /** Each partition's push target, as the endpoint takes them. */
  List<EndpointAddress> addresses() {
    List<EndpointAddress> addresses = new ArrayList<>(partitions);
    for (int p = 0; p < partitions; p++) {
      addresses.add(target(p).address());
    }
    return addresses;
  }

  /** The executor holding most of the partitions {@code [start, end)}: where a reducer of that range should run. */
  Optional<ExecutorEndpoint> holderOf(int start, int end) {
    if (start < 0 || end > partitions || start >= end) {
      return Optional.empty();
    }
    ExecutorEndpoint best = null;
    int bestCount = 0;
    int p = start;
    while (p < end) {
      ExecutorEndpoint holder = target(p);
      int count = 0;
      while (p < end && target(p).equals(holder)) {
        count++;
        p++;
      }
      if (count > bestCount) {
        best = holder;
        bestCount = count;
      }
    }
    return Optional.ofNullable(best);
  }
}
