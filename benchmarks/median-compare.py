#!/usr/bin/env python3
"""Puts several runs of benchmarks/run.sh before a change and several after it side by side, one row per point of
the suite: the median over the runs of each point's own figure (a time, so lower is better; or a JMH score, whose
unit says which way is better), the after/before ratio, and the spread of each side's runs (max/min), so a reader
sees which differences stand above the run-to-run noise.

Usage: benchmarks/median-compare.py --before DIR [DIR ...] --after DIR [DIR ...] > comparison.md
Each DIR is an --out folder of benchmarks/run.sh (results.json, ingest.md, flight-sql.md, jdbc-session.md, jmh.json;
any that a run lacks is left out of that run). Points are taken from:
  results.json  every peer of every point: median seconds of a pull (µs per batch for the batch-size points)
  jdbc rows of results.json: one-row query median µs and full-read median ms per driver
  *.md tables of the other benches: every cell whose column says ms, µs or s (times)
  jmh.json      each benchmark and parameter set: its score (with its unit)
"""
import json
import os
import re
import statistics
import sys


def results_points(folder, points):
    path = os.path.join(folder, "results.json")
    if not os.path.exists(path):
        return
    data = json.load(open(path, encoding="utf-8"))
    for point in data.get("points", []):
        where = "{experiment} {setting} {table} {rows}x{columns} b{batchRows}".format(**point)
        for peer in point["peers"]:
            if peer.get("medianSeconds") is not None:
                points[("suite", where, peer["name"], "median ms")] = peer["medianSeconds"] * 1e3
    for driver in data.get("jdbc", []) or []:
        points[("suite jdbc", driver["name"], "one-row query", "median µs")] = driver["oneRowQueryMedianMicros"]
        points[("suite jdbc", driver["name"], "full read", "median ms")] = driver["readMedianMillis"]


TIME_COLUMN = re.compile(r"^((median|mean) )?(s|ms|µs|us|seconds|median)$|^(µs|ms) per ")


def markdown_points(folder, name, points):
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return
    title = ""
    lines = open(path, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|") and i + 1 < len(lines) and set(lines[i + 1]) <= set("|-: "):
            header = [c.strip() for c in line.strip("|").split("|")]
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in lines[i].strip("|").split("|")]
                for column, cell in zip(header[1:], cells[1:]):
                    if not TIME_COLUMN.search(column) or "p90" in column:
                        continue
                    value = number(cell)
                    if value is not None:
                        points[(name, title, cells[0], column)] = value
                i += 1
            continue
        if line.strip():
            title = line.strip().lstrip("#").strip()
        i += 1


def number(text):
    text = text.strip("*x ").replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def jmh_points(folder, points):
    path = os.path.join(folder, "jmh.json")
    if not os.path.exists(path):
        return
    try:
        runs = json.load(open(path, encoding="utf-8"))
    except ValueError:
        return  # a JMH run still writing, or one that did not finish
    for run in runs:
        params = ",".join(f"{k}={v}" for k, v in sorted((run.get("params") or {}).items()))
        metric = run["primaryMetric"]
        points[("jmh", run["benchmark"].rsplit(".", 2)[-2] + "." + run["benchmark"].rsplit(".", 1)[-1], params,
                metric["scoreUnit"])] = metric["score"]


def load(folder):
    points = {}
    results_points(folder, points)
    for name in ("ingest.md", "flight-sql.md", "jdbc-session.md"):
        markdown_points(folder, name, points)
    jmh_points(folder, points)
    return points


REFERENCES = ("ceiling", "memcpy", "DuckDB export", "DuckDB JDBC in-process", "DuckDB ingest in-process",
              "DuckDB appender in-process", "DuckDB")


def reference_of(key, keys):
    """The row of the same table (same JMH benchmark and parameters but the peer) that measures code this project
    does not own: how fast the machine was during the run."""
    def group(k):
        if k[0] == "jmh":
            return (k[0], k[1], ",".join(p for p in k[2].split(",") if not p.startswith("peer=")), k[3])
        return (k[0], k[1], k[3])
    mine = group(key)
    same = [k for k in keys if group(k) == mine]
    # An exact name first: "DuckDB export" (the engine's) is also part of "plain DuckDB export" (DuckDB run plainly).
    for name in REFERENCES:
        for k in same:
            if name == k[2]:
                return k
    for name in REFERENCES:
        for k in same:
            if name in k[2]:
                return k
    return None


def higher_is_better(unit):
    return "/s" in unit or unit.endswith("/op") is False and "ops" in unit


def main(argv):
    if "--before" not in argv or "--after" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    b, a = argv.index("--before"), argv.index("--after")
    before_dirs = argv[b + 1:a] if b < a else argv[b + 1:]
    after_dirs = argv[a + 1:] if b < a else argv[a + 1:b]
    before = [load(d) for d in before_dirs]
    after = [load(d) for d in after_dirs]
    keys = [k for k in after[0] if any(k in run for run in before)]

    def median_of(runs, key):
        found = [run[key] for run in runs if key in run]
        return statistics.median(found) if found else None

    ratios = {k: median_of(after, k) / median_of(before, k) for k in keys if median_of(before, k)}
    print(f"Medians of {len(before_dirs)} runs before and {len(after_dirs)} after; ratio = after / before of the time "
          "(above 1: slower), or of the score for JMH throughput units (above 1: faster); spread = max/min of one "
          "side's runs. \"vs reference\" divides the ratio by the same table's reference row's ratio (memcpy, "
          "DuckDB's own export, ingest or driver in process: code the change did not touch), which takes out how "
          "fast the machine itself was during each run.\n")
    print("| bench | point | peer / row | figure | before | after | after/before | vs reference | spread before |"
          " spread after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    outside = outside_normalized = 0
    for key in keys:
        bs = [run[key] for run in before if key in run]
        as_ = [run[key] for run in after if key in run]
        mb, ma = statistics.median(bs), statistics.median(as_)
        ratio = ma / mb if mb else float("nan")
        better_high = key[0] == "jmh" and higher_is_better(key[3])
        reference = reference_of(key, keys)
        normalized = ratio / ratios[reference] if reference in ratios and reference != key else None
        slower = ratio < 0.95 if better_high else ratio > 1.05
        mark = " **slower**" if slower else ""
        outside += slower
        norm_text = "" if normalized is None else f"{normalized:.3f}"
        if normalized is not None and (normalized < 0.95 if better_high else normalized > 1.05):
            norm_text += " **slower**"
            outside_normalized += 1
        spread_b = max(bs) / min(bs) if min(bs) > 0 else float("nan")
        spread_a = max(as_) / min(as_) if min(as_) > 0 else float("nan")
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {mb:.4g} | {ma:.4g} | {ratio:.3f}{mark} | {norm_text} | "
              f"{spread_b:.2f} ({len(bs)}) | {spread_a:.2f} ({len(as_)}) |")
    print(f"\n{len(keys)} points in both; {outside} more than 5% slower after as measured, {outside_normalized} "
          "against their reference.")
    only_after = [k for k in after[0] if not any(k in run for run in before)]
    if only_after:
        print(f"\n{len(only_after)} points only after (new benchmarks or ones that did not finish before): "
              + "; ".join(" ".join(map(str, k)) for k in only_after[:40]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
