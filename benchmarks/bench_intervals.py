"""Cost of compare's interval methods: percentile, BCa, studentized (bootstrap-t), hybrid and
subsampled, side by side, and of the default call, linear in elements and in resamples.

``streameval.compare`` of two systems (the default metrics: ELM, BCubed, ARI, NMI) over ``N``
elements in documents of about 10 elements (units = N/10), 1,000 resamples, the paired bootstrap
test (no randomization rounds, so the rows differ only by their intervals); CPU time of the whole
call, the best of ``--repeat`` runs, and its ratio to the percentile interval's in the same run.
Then the default call (randomization test, studentized interval) at every size, and at the largest
size with ``--resamples`` resamples: its CPU time per element and per resample, which a linear
cost keeps flat.
The studentized interval adds, per resample and system, one gradient (two metric reads per field a
metric reads) and ``O(U · F²)`` (``F`` the 2 to 4 fields a metric reads) for the standard errors,
in one BLAS product; BCa adds a jackknife of at most 1,000 groups of units; the hybrid interval
costs what the studentized one does; the subsampled one (the default's where one unit dominates,
past 49 units) adds ``B`` resamples of ``m = 7 √U`` units: their product, reads and standard
errors.

    PYTHONPATH=. python benchmarks/bench_intervals.py [--sizes 100000 1000000] [--repeat 3]

writes ``docs/benchmarks/intervals.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import streameval as se

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bootstrap import scale_data  # noqa: E402  (the scale run's data: the same stream)

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("percentile", "bca", "studentized", "hybrid", "subsampled")
HISTORY = ("<!-- history:begin -->", "<!-- history:end -->")  # kept when the page is rewritten


def cells_per_row(t, p) -> float:
    """The table's non-zero cells per true cluster (the stream's density)."""
    cells = np.unique(np.stack([t, p]), axis=1).shape[1]
    return cells / len(np.unique(t))


def _cpu(t, a, b, units, n_resamples: int, **kw) -> float:
    c0 = time.process_time()
    se.compare(t, {"A": a, "B": b}, units=units, n_resamples=n_resamples, seed=0, **kw)
    return time.process_time() - c0


def measure(sizes, repeat: int, n_resamples: int = 1000) -> list:
    rows = []
    for n in sizes:
        t, a, b, units = scale_data(n)
        times: dict = {}
        for _ in range(repeat):  # the methods interleaved: a burst of load hits them alike
            for method in METHODS:
                c = _cpu(t, a, b, units, n_resamples, method="paired_bootstrap", interval=method)
                times[method] = min(times.get(method, c), c)
        for method in METHODS:
            rows.append((n, len(np.unique(units)), method, times[method],
                         times[method] / times["percentile"]))
        print(rows[-len(METHODS):], flush=True)
    return rows


def defaults(sizes, resamples, repeat: int) -> list:
    """``(elements, units, resamples, CPU seconds)`` of the default call (randomization test,
    studentized interval): every size at 1,000 resamples, and the largest at each of
    ``resamples``; interleaved, best of ``repeat``."""
    cases = [(n, 1000) for n in sizes] + [(sizes[-1], r) for r in resamples if r != 1000]
    inputs = {n: scale_data(n) for n in sizes}
    times: dict = {}
    for _ in range(repeat):
        for n, r in cases:
            c = _cpu(*inputs[n], r)
            times[n, r] = min(times.get((n, r), c), c)
    out = [(n, len(np.unique(inputs[n][3])), r, times[n, r]) for n, r in sorted(times)]
    print(out, flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--resamples", type=int, nargs="+", default=[500, 1000, 2000],
                    help="resamples of the default call at the largest size")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "intervals.md")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    rows = measure(args.sizes, args.repeat)
    dflt = defaults(args.sizes, args.resamples, args.repeat)
    t, a, b, _ = scale_data(args.sizes[0])
    lines = [
        "# Cost of compare's interval methods",
        "",
        f"Command: `python benchmarks/bench_intervals.py --sizes {' '.join(map(str, args.sizes))} "
        f"--repeat {args.repeat} --resamples {' '.join(map(str, args.resamples))}`. Machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores; Python {platform.python_version()}, numpy {np.__version__}; load "
        f"average {load:.1f} when the run started (other jobs share the machine). Two systems, "
        "the default metrics (ELM, BCubed, ARI, NMI), 1,000 resamples, paired bootstrap test, "
        f"documents of about 10 elements (units = N/10); {cells_per_row(t, a):.1f} cells per row in "
        f"system A's table, {cells_per_row(t, b):.1f} in B's. CPU seconds of the whole call (best of "
        f"{args.repeat}), and the ratio to the percentile interval's in the same run. No "
        "instruction counts: the call's time is in numpy and BLAS, whose instruction counts "
        "depend on the CPU's SIMD path; the ratios are taken within one run.",
        "",
        "| elements | units | interval | CPU time | / percentile |",
        "|---:|---:|---|---:|---:|",
    ]
    for n, u, method, sec, ratio in rows:
        lines.append(f"| {n:,} | {u:,} | {method} | {sec:.2f} s | {ratio:.2f}× |")
    base = next(row for row in dflt if row[0] == args.sizes[-1] and row[2] == 1000)
    lines += ["", "## The default call: linear in elements and in resamples", "",
              "`compare(y, {\"A\": a, \"B\": b}, units=units)` as it is called without options "
              "(randomization test with as many rounds as resamples, studentized intervals): CPU "
              "seconds of the whole call (best of "
              f"{args.repeat}), per element and resample, and the ratio of that to the "
              f"{args.sizes[-1]:,}-element, 1,000-resample row's (a cost linear in elements and in "
              "resamples keeps it near 1; the costs per resample that do not grow with the "
              "elements, a gradient and the metric reads, weigh more on small inputs). The "
              "BLAS products run on one thread (a loaded machine makes OpenBLAS's threads spin).",
              "", "| elements | units | resamples | CPU time | per element · resample | ratio |",
              "|---:|---:|---:|---:|---:|---:|"]
    for n, u, r, sec in dflt:
        per = sec / (n * r) * 1e9
        ratio = per / (base[3] / (base[0] * base[2]) * 1e9)
        lines.append(f"| {n:,} | {u:,} | {r:,} | {sec:.2f} s | {per:.2f} ns | {ratio:.2f}× |")
    big = [row for row in dflt if row[0] == args.sizes[-1]]
    marginal = [(r0, r1, (t1 - t0) / (r1 - r0)) for (_, _, r0, t0), (_, _, r1, t1) in zip(big, big[1:])]
    small = next((row for row in dflt if row[0] == args.sizes[0] and row[2] == 1000), None)
    if small is not None and small is not base:
        lines += ["", f"Elements ×{base[0] / small[0]:g} (at 1,000 resamples): CPU time "
                  f"×{base[3] / small[3]:.2f}."]
    if marginal:
        lines += ["", "Resamples at " + f"{args.sizes[-1]:,}" + " elements: each added resample costs "
                  + ", ".join(f"{c * 1e3:.2f} ms from {r0:,} to {r1:,}" for r0, r1, c in marginal)
                  + " (" + ", ".join(f"{c / args.sizes[-1] * 1e9:.2f} ns" for *_, c in marginal)
                  + " per element); a cost linear in the resamples keeps these equal, on top of a "
                  "fixed part (grouping, the units' statistics), which is why the per-resample "
                  "figure above falls as resamples are added."]
    lines += ["", "The studentized interval's extra cost is one gradient per resample and system "
              "(two O(1) metric reads per field each metric reads) and, for the standard errors, "
              "one product of the multiplicities with the units' centred fields and their "
              "distinct pairwise products (O(U · P) per resample, P the products some metric, "
              "system or pair needs: each metric reads 2 to 4 fields, and the truth's fields are "
              "shared by the systems); no nested bootstrap. The hybrid interval reads the same "
              "resamples and standard errors. The subsampled interval (the default's choice, for "
              "every metric, where one unit dominates and there are more than 49 units; these "
              "documents have no dominant unit, so it is asked for by name here) adds as many "
              "resamples again, each of m = round(7 √U) units: one more product of the "
              "multiplicities with the metrics' fields and their pairwise products, one read and "
              "one gradient per resample and system: linear in resamples and units as well.", ""]
    # the dated before/after notes under the tables are kept from the page being replaced
    old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    if HISTORY[0] in old and HISTORY[1] in old:
        lines += [old[old.index(HISTORY[0]):old.index(HISTORY[1]) + len(HISTORY[1])], ""]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
