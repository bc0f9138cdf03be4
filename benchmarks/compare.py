#!/usr/bin/env python3
"""Puts two runs of benchmarks/run.sh side by side: the headline tables of each summary.md, per transport, with the
after/before ratio. Usage: benchmarks/compare.py BEFORE_DIR AFTER_DIR > comparison.md"""
import re
import sys


def tables(path):
    """Every markdown table of a summary.md as (title line, header, rows)."""
    lines = open(path, encoding="utf-8").read().splitlines()
    found, title, i = [], "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|") and i + 1 < len(lines) and set(lines[i + 1]) <= set("|-: "):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip("|").split("|")])
                i += 1
            found.append((title, header, rows))
            continue
        if line.strip():
            title = line.strip()
        i += 1
    return found


def number(text):
    text = text.strip("*x ").replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def main(before_dir, after_dir):
    before = tables(before_dir + "/summary.md")
    after = tables(after_dir + "/summary.md")
    for (title, header, rows_b), (_, header_a, rows_a) in zip(before, after):
        if header != header_a:
            continue
        print(title)
        print()
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row_b, row_a in zip(rows_b, rows_a):
            cells = []
            for k, (b, a) in enumerate(zip(row_b, row_a)):
                nb, na = number(b), number(a)
                if k == 0 or nb is None or na is None or nb == 0 or b == a and not re.search(r"\d", b):
                    cells.append(a if k else row_a[0])
                else:
                    cells.append(f"{b} → {a} ({na / nb:.2f})")
            print("| " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
