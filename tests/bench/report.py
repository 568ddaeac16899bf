#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""report.py - the statistics of `make bench` (tests/bench/bench.sh).

  report.py results RAW     raw.tsv (workload, target, rep, seconds, kib) ->
                            results.tsv on stdout: the same rows, each with
                            its ratio to native in the same repetition
  report.py report DIR TARGETS PEERS
                            DIR/results.tsv, DIR/workloads.tsv (and
                            DIR/header.md, DIR/footer.md) -> results.md on
                            stdout: a cell is the median (min-max) over the
                            repetitions; a column per target of TARGETS
                            that ran, in its order (the first, native, is
                            what the ratios are to); the best of PEERS

The numbers MUST come out as they did when this was an awk program inside
bench.sh (results.md files of old runs are compared with new ones): awk
turns a computed number into text with "%.6g" when it joins it to a string
(CONVFMT), and "%d" truncates; both are kept below (awk_str, int()).
"""
import os
import re
import sys

_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def awk_num(s):
    """A string as awk reads it as a number: its numeric prefix, else 0."""
    m = _NUMBER.match(s)
    return float(m.group(0)) if m else 0.0


def awk_str(v):
    """A computed number as awk writes it into a string (CONVFMT %.6g)."""
    return "%d" % v if v == int(v) and abs(v) < 2**31 else "%.6g" % v


def rows(path):
    """The tab-separated fields of each line of PATH."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f]


def field(r, i):
    return r[i] if i < len(r) else ""


def results(raw):
    """results.tsv from raw.tsv: the ratio is to native's time in the same repetition."""
    recs = rows(raw)
    native = {}
    for r in recs:
        if field(r, 1) == "native" and field(r, 3) not in ("FAIL", "NA"):
            native[(field(r, 0), field(r, 2))] = field(r, 3)
    print("workload\ttarget\trep\tseconds\tratio\tkib")
    for r in recs:
        w, t, rep, sec, kib = (field(r, i) for i in range(5))
        ratio = "NA"
        nat = native.get((w, rep))
        if sec not in ("FAIL", "NA") and nat is not None and awk_num(nat) > 0:
            ratio = "%.4f" % (awk_num(sec) / awk_num(nat))
        print("\t".join((w, t, rep, sec, ratio, kib)))


def fmt(v):
    """A ratio with two or three significant digits."""
    if v < 10:
        return "%.2f" % v
    if v < 100:
        return "%.1f" % v
    return "%.0f" % v


def stats(values):
    """(n, median, min, max) of a list of numbers in text."""
    a = sorted(awk_num(v) for v in values)
    n = len(a)
    if n == 0:
        return 0, None, None, None
    med = a[(n - 1) // 2] if n % 2 else (a[n // 2 - 1] + a[n // 2]) / 2
    return n, med, a[0], a[-1]


class Runs:
    """results.tsv, gathered per workload and target."""

    def __init__(self, kind, path):
        self.seen = set()
        self.has = set()
        self.fails = {}
        self.values = {}  # (w, t) -> the numbers, as text, that a cell sums up
        self.first = {}  # (w, t) -> MiB after the first repetition
        for r in rows(path)[1:]:
            self.add(kind, r)

    def add(self, kind, r):
        w, t = field(r, 0), field(r, 1)
        self.seen.add(t)
        self.has.add((w, t))
        if field(r, 3) == "FAIL":
            self.fails[(w, t)] = self.fails.get((w, t), 0) + 1
            return
        k = kind.get(w, "")
        v = None
        if k == "time":
            # native's absolute time, every other target's ratio to it
            if t == "native":
                v = field(r, 3)
            elif field(r, 4) != "NA":
                v = field(r, 4)
        elif k == "ms":
            v = awk_str(awk_num(field(r, 3)) * 1000)
        elif k == "mib":
            v = awk_str(awk_num(field(r, 5)) / 1024)
            if awk_num(field(r, 2)) == 1:
                self.first[(w, t)] = awk_num(field(r, 5)) / 1024
        elif k == "count":
            v = field(r, 5)
        if v is not None:
            self.values.setdefault((w, t), []).append(v)

    def stats(self, w, t):
        return stats(self.values.get((w, t), []))


def native_cell(runs, w, k):
    n, med, lo, hi = runs.stats(w, "native") if k == "time" else (0, None, None, None)
    if n > 0:
        if med < 1:
            return "%.1f ms (%.1f–%.1f)" % (med * 1000, lo * 1000, hi * 1000)
        return "%.2f s (%.2f–%.2f)" % (med, lo, hi)
    if k == "time" and runs.fails.get((w, "native")):
        return "fail (%d)" % runs.fails[(w, "native")]
    return "—"


def cell(runs, w, k, t):
    """A target's cell, and the value that ranks it among the peers (None: no runs)."""
    n, med, lo, hi = runs.stats(w, t)
    text, value = "—", None
    if n > 0:
        if k == "time":
            text = fmt(med) + "× (" + fmt(lo) + "–" + fmt(hi) + ")"
        elif k == "ms":
            text = "%.1f ms (%.1f–%.1f)" % (med, lo, hi)
        elif k == "count":
            text = "%d (%d–%d)" % (int(med), int(lo), int(hi))
        elif w == "rss_peak":
            text = "%.1f MiB (after rep 1: %.1f)" % (hi, runs.first.get((w, t), 0.0))
        else:
            text = "%.1f MiB (%.1f–%.1f)" % (med, lo, hi)
        value = hi if w == "rss_peak" else med
    failed = runs.fails.get((w, t))
    if failed:
        text = (text + " " if n > 0 else "") + "**%d failed**" % failed
    return text, value


def best_cell(k, best, v):
    if best is None:
        return "—"
    if k == "time":
        return fmt(v) + "× " + best
    if k == "ms":
        return "%.1f ms " % v + best
    if k == "count":
        return "%d " % int(v) + best
    return "%.1f MiB " % v + best


def table(d, targets, peers):
    """The table of results.md: one row per workload that ran."""
    workloads = rows(os.path.join(d, "workloads.tsv"))
    kind = {field(r, 0): field(r, 2) for r in workloads}
    runs = Runs(kind, os.path.join(d, "results.tsv"))
    shown = [t for t in targets[1:] if t in runs.seen]
    print("| workload | native (absolute) |" + "".join(" %s |" % t for t in shown) +
          " best peer | issue target for awfs |")
    print("| --- | --- |" + " --- |" * len(shown) + " --- | --- |")
    for r in workloads:
        w, label, k, goal = (field(r, i) for i in range(4))
        if not any((w, t) in runs.has for t in targets):
            continue
        row = "| " + label + " | " + native_cell(runs, w, k) + " |"
        best, bestv = None, 0
        for t in shown:
            text, v = cell(runs, w, k, t)
            if v is not None and t in peers and (best is None or v < bestv):
                best, bestv = t, v
            row += " " + text + " |"
        print(row + " " + best_cell(k, best, bestv) + " | " + (goal or "—") + " |")


def report(d, targets, peers):
    """results.md: header.md, the table, footer.md."""
    for part in ("header.md", None, "footer.md"):
        if part is None:
            table(d, targets.split(), peers.split())
        elif os.path.isfile(os.path.join(d, part)):
            with open(os.path.join(d, part), encoding="utf-8") as f:
                sys.stdout.write(f.read())


def main(argv):
    if len(argv) == 3 and argv[1] == "results":
        results(argv[2])
    elif len(argv) == 5 and argv[1] == "report":
        report(argv[2], argv[3], argv[4])
    else:
        sys.stderr.write("usage: report.py results RAW | report.py report DIR TARGETS PEERS\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
