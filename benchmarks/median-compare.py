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


TIME_COLUMN = re.compile(r"(^|\b)(median |mean )?(ms|µs|us|s)\b|median (ms|µs|s)|µs per|ms per")


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
    for run in json.load(open(path, encoding="utf-8")):
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
    print(f"Medians of {len(before_dirs)} runs before and {len(after_dirs)} after; ratio = after / before of the time "
          "(above 1: slower), or of the score for JMH throughput units (above 1: faster); spread = max/min of one "
          "side's runs.\n")
    print("| bench | point | peer / row | figure | before | after | after/before | spread before | spread after |")
    print("|---|---|---|---|---|---|---|---|---|")
    outside = 0
    for key in keys:
        bs = [run[key] for run in before if key in run]
        as_ = [run[key] for run in after if key in run]
        mb, ma = statistics.median(bs), statistics.median(as_)
        ratio = ma / mb if mb else float("nan")
        slower = ratio < 0.95 if key[0] == "jmh" and higher_is_better(key[3]) else ratio > 1.05
        faster = ratio > 1.05 if key[0] == "jmh" and higher_is_better(key[3]) else ratio < 0.95
        mark = " **slower**" if slower else (" faster" if faster else "")
        outside += slower
        spread_b = max(bs) / min(bs) if min(bs) > 0 else float("nan")
        spread_a = max(as_) / min(as_) if min(as_) > 0 else float("nan")
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {mb:.4g} | {ma:.4g} | {ratio:.3f}{mark} | "
              f"{spread_b:.2f} ({len(bs)}) | {spread_a:.2f} ({len(as_)}) |")
    print(f"\n{len(keys)} points in both; {outside} more than 5% slower after.")
    only_after = [k for k in after[0] if not any(k in run for run in before)]
    if only_after:
        print(f"\n{len(only_after)} points only after (new benchmarks or ones that did not finish before): "
              + "; ".join(" ".join(map(str, k)) for k in only_after[:40]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
