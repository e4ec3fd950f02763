#!/usr/bin/env python3
"""The side-by-side table from bench/device/run.sh's output folders.

Usage: side_by_side.py OUT_DIR [OUT_DIR...]
Each folder holds one device call's xla.tsv and xlite.tsv (rounds as the first column); a
program is compared within the folder that has XLA:CPU's figure for it (the same machine, the
same call), medians over the rounds. Prints a markdown table and the geometric means.
"""
import collections
import math
import os
import statistics
import sys

IMPLS = ("xla-cpu@2t", "xla-compile@1t", "xlite-cpu@2t", "xlite-compile@1t")


def read(folder):
    values = collections.defaultdict(list)
    for name in ("xla.tsv", "xlite.tsv"):
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            continue
        for line in open(path):
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 4 and cols[2] in IMPLS:
                values[(cols[1], cols[2])].append(float(cols[3]))
    return values


def fmt(ms):
    if ms is None:
        return "-"
    return "%.4f" % ms if ms < 1 else "%.3f" % ms if ms < 10 else "%.1f" % ms


def main():
    runs = [read(folder) for folder in sys.argv[1:]]
    programs = sorted({key[0] for run in runs for key in run})
    print("| program | XLA:CPU ms | xlite ms | xlite / XLA | XLA compile ms | xlite compile ms | xlite / XLA |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    ratios = {"run": [], "compile": []}
    for program in programs:
        # The call that timed XLA:CPU on it, else the last that timed xlite.
        run = next((r for r in runs if (program, "xla-cpu@2t") in r), None)
        run = run or next(r for r in reversed(runs) if any(k[0] == program for k in r))
        med = {impl: statistics.median(run[(program, impl)]) if (program, impl) in run else None
               for impl in IMPLS}
        cells = []
        for kind, xla, xlite in (("run", "xla-cpu@2t", "xlite-cpu@2t"),
                                 ("compile", "xla-compile@1t", "xlite-compile@1t")):
            ratio = med[xlite] / med[xla] if med[xla] and med[xlite] else None
            if ratio is not None:
                ratios[kind].append(ratio)
            cells += [fmt(med[xla]), fmt(med[xlite]), "-" if ratio is None else "%.2f" % ratio]
        print("| %s | %s |" % (program, " | ".join(cells)))
    for kind, values in ratios.items():
        if values:
            geomean = math.exp(sum(map(math.log, values)) / len(values))
            print("\n%s: geometric mean %.3f over %d programs, largest %.2f" %
                  (kind, geomean, len(values), max(values)))


if __name__ == "__main__":
    main()
