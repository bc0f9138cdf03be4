package org.apache.spark.sql.execution.exchange;

import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.UnaryExecNode;

/**
 * Compile-time view of Spark's {@code Exchange}, never compiled into a class (see the pom): Spark's class declares
 * {@code withNewChildrenInternal} final with an erased Scala signature that javac reads as returning a
 * {@code TreeNode}, so javac refuses any Java subclass of it. Against this view, with the same final members,
 * javac compiles {@code ThallusShuffleExchangeExec}; at run time its superclass is Spark's own {@code Exchange}.
 */
public abstract class Exchange extends SparkPlan implements UnaryExecNode {
  @Override
  public final SparkPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<SparkPlan> children) {
    throw new UnsupportedOperationException("compile-time view");
  }

  @Override
  public final scala.collection.immutable.Seq<SparkPlan> children() {
    throw new UnsupportedOperationException("compile-time view");
  }

  @Override
  public final scala.collection.immutable.Seq<scala.Enumeration.Value> nodePatterns() {
    throw new UnsupportedOperationException("compile-time view");
  }
}
