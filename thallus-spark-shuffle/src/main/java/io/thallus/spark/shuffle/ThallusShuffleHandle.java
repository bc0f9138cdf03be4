package io.thallus.spark.shuffle;

import org.apache.spark.shuffle.BaseShuffleHandle;

/** The handle of a shuffle that {@link ThallusShuffleManager} serves itself. */
final class ThallusShuffleHandle extends BaseShuffleHandle<Object, Object, Object> {
  private static final long serialVersionUID = 1L;

  ThallusShuffleHandle(int shuffleId, ArrowShuffleDependency dependency) {
    super(shuffleId, dependency);
  }

  ArrowShuffleDependency arrowDependency() {
    return (ArrowShuffleDependency) dependency();
  }
}
