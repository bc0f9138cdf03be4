package io.thallus.spark;

/**
 * Thrown while writing a plan as DuckDB SQL when some part has no DuckDB form that gives Spark's answer: the subtree
 * then stays in Spark. The message says which part and why (the whole-plan tests read it).
 */
final class PlanRefused extends RuntimeException {
  private static final long serialVersionUID = 1L;

  PlanRefused(String reason) {
    super(reason, null, false, false);
  }
}
