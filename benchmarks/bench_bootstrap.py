"""Cost of the confidence intervals: the streaming Poisson bootstrap and the batch compare.

1. Streaming. A stream of documents (units) of ``6 + Poisson(6)`` elements with a few clusters
   each, labels ``(document, cluster)``, a system that keeps 80% of the labels right. Timed: one
   :class:`~streameval.Evaluator` (one table) over the stream, and a
   :class:`~streameval.BootstrapEvaluator` with ``B`` replicas over the same stream, both with the
   metrics ELM, BCubed, AdjustedRand and NormalizedMutualInfo. The goal: an update costs at most
   10 times the one table's at B = 200 (each element updates the observed table and its unit's
   table; the replicas' sums follow at the next read by a multiply-add of the touched units'
   changes). The read (``get()`` after the whole stream, and after one more element) is reported
   apart.
2. Scale. ``streameval.compare`` of two systems over 10⁵ and 10⁶ elements (10⁴ and 10⁵ units),
   1,000 resamples, the default metrics: CPU seconds, and the ratio of the two (linear: 10).
3. Batch. ``streameval.compare`` over the 34 BERT test streams of the ELM paper and the three
   baselines (unit = stream), 10,000 resamples, ELM and BCubed, both aggregates, both tests.
   Needs ``../shared/data/pss`` (or ``--data``); skipped without it.

Writes ``docs/benchmarks/bootstrap.md`` (keeping its calibration section, which
``benchmarks/calibration_bootstrap.py`` writes). Instruction counts through the shared
``benchmarks/instructions.py``.

    PYTHONPATH=. python benchmarks/bench_bootstrap.py [--elements 20000] [--replicas 10 50 200]
        [--scale 100000 1000000]
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

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "pss"


def make_stream(n_elements: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    doc = 0
    while len(out) < n_elements:
        m = 6 + int(rng.poisson(6))
        k = int(rng.integers(1, m // 3 + 2))
        for _ in range(m):
            t = int(rng.integers(0, k))
            p = t if rng.random() < 0.8 else int(rng.integers(0, k + 1))
            out.append((doc, (doc, t), (doc, p)))
        doc += 1
    return out[:n_elements]


def cells_per_row(stream) -> float:
    """The stream's table's non-zero cells per true cluster."""
    return len({(t, p) for _, t, p in stream}) / len({t for _, t, _ in stream})


def metrics():
    return [se.ELM(), se.BCubed(), se.AdjustedRand(), se.NormalizedMutualInfo()]


def cpu() -> float:
    return time.process_time()


def time_single(stream) -> float:
    """CPU time of one table over the stream (the best of five passes: it is short)."""
    best = None
    for _ in range(5):
        ev = se.Evaluator(metrics())
        c0 = cpu()
        for _, t, p in stream:
            ev.update(t, p)
        c = cpu() - c0
        best = c if best is None else min(best, c)
    return best


METHODS = ("percentile", "studentized", "hybrid", "adaptive", "bca")


def time_bootstrap(stream, b: int) -> tuple:
    """(update CPU seconds, live units, CPU of the first get(), {method: CPU of intervals(method)
    after one more element})."""
    bs = se.BootstrapEvaluator(metrics(), n_replicas=b, seed=1)
    c0 = cpu()
    for u, t, p in stream:
        bs.update(t, p, unit=u)
    seconds = cpu() - c0
    c1 = cpu()
    bs.get()
    first = cpu() - c1
    again = {}
    u, t, p = stream[-1]
    for method in METHODS:
        bs.update(t, p, unit=u)
        c2 = cpu()
        bs.intervals(method)
        again[method] = cpu() - c2
    return seconds, bs.units, first, again


def child_callgrind(m: int) -> None:
    """The calls measured under callgrind (:func:`instructions.measured`), in order: ``m``
    updates of a fresh ``Evaluator``, ``m`` updates of a fresh ``BootstrapEvaluator`` (B = 200),
    then, method by method, one more element (not measured) and one ``intervals(method)`` read."""
    from instructions import measured

    stream = make_stream(m)
    ev, bs = se.Evaluator(metrics()), se.BootstrapEvaluator(metrics(), n_replicas=200, seed=1)
    bs.get()  # the read's code paths warmed up (imports) before anything is measured

    def single():
        for _, t, p in stream:
            ev.update(t, p)

    def bootstrap():
        for u, t, p in stream:
            bs.update(t, p, unit=u)

    measured(single)
    measured(bootstrap)
    bs.get()  # settles the whole stream (the first read), not measured
    u, t, p = stream[-1]
    for method in METHODS:
        bs.update(t, p, unit=u)
        measured(bs.intervals, method)


def callgrind(m: int) -> dict:
    """``{"evaluator", "bootstrap": instructions per element; method: instructions of a read}``
    (empty without valgrind)."""
    import instructions

    if not instructions.available():
        return {}
    cases = ["evaluator", "bootstrap", *METHODS]
    totals = dict(zip(cases, instructions.counts(
        [sys.executable, __file__, "--child-callgrind", str(m)], len(cases),
        env={**os.environ, "PYTHONPATH": str(ROOT)})))
    return {c: (v / m if c in ("evaluator", "bootstrap") else v) for c, v in totals.items()}


def scale_data(n: int) -> tuple:
    """``(y_true, a, b, units)`` of the scale run: N elements in N/10 units, two systems."""
    rng = np.random.default_rng(0)
    units = np.sort(rng.integers(0, n // 10, n))
    t = units * 5 + rng.integers(0, 4, n)
    a = np.where(rng.random(n) < 0.8, t, units * 5 + rng.integers(0, 5, n))
    b = np.where(rng.random(n) < 0.7, t, units * 5 + rng.integers(0, 5, n))
    return t, a, b, units


def labels_cells_per_row(units, t, p) -> float:
    """The table's non-zero cells per true cluster, labels taken within their unit."""
    return len(set(zip(units, t, p))) / len(set(zip(units, t)))


def scale(sizes, n_resamples: int = 1000) -> list:
    """CPU seconds of compare over N elements in N/10 units, two systems (best of three)."""
    rows = []
    for n in sizes:
        t, a, b, units = scale_data(n)
        for method in ("paired_bootstrap", "randomization"):
            best = None
            for _ in range(3):  # the best of three: the machine is shared
                c0 = cpu()
                se.compare(t, {"A": a, "B": b}, units=units, n_resamples=n_resamples, seed=0,
                           method=method, interval="percentile")
                c = cpu() - c0
                best = c if best is None else min(best, c)
            rows.append((n, n // 10, method, best))
    return rows


def streaming(n_elements: int, replicas, repeat: int) -> list:
    stream = make_stream(n_elements)
    single = min(time_single(stream) for _ in range(repeat))
    rows = [("one table (Evaluator)", 0, single, None, 1.0, None, None)]
    for b in replicas:
        best = None
        for _ in range(repeat):
            r = time_bootstrap(stream, b)
            best = r if best is None or r[0] < best[0] else best
        seconds, units, first, again = best
        rows.append((f"BootstrapEvaluator, B = {b}", b, seconds, units, seconds / single, first, again))
    return rows


def batch(data: Path, n_resamples: int) -> list:
    from streameval.pss import BASELINES, flags_to_labels, load_json

    gold = load_json(data / "test.json")
    bert = load_json(data / "bert_predictions_test.json")
    systems = {"BERT": bert}
    for name, fn in BASELINES.items():
        systems[name] = {s: fn(f) for s, f in gold.items()}
    units, y = [], []
    preds = {k: [] for k in systems}
    for sid, flags in gold.items():
        t = flags_to_labels(flags, original_make_index=True).tolist()
        units += [sid] * len(t)
        y += t
        for k, streams in systems.items():
            preds[k] += flags_to_labels(streams[sid], original_make_index=True).tolist()
    rows = []
    for aggregate in ("mean", "pooled"):
        for method in ("paired_bootstrap", "randomization"):
            t0, c0 = time.perf_counter(), cpu()
            se.compare(y, preds, units=units, metrics=["ELM", "BCubed"], method=method,
                       n_resamples=n_resamples, seed=0, aggregate=aggregate, labels="per_unit")
            rows.append((aggregate, method, time.perf_counter() - t0, cpu() - c0))
    density = {k: labels_cells_per_row(units, y, p) for k, p in preds.items()}
    return rows, len(y), density


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--elements", type=int, default=20000)
    ap.add_argument("--replicas", type=int, nargs="+", default=[10, 50, 200])
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--scale", type=int, nargs="*", default=[100_000, 1_000_000],
                    help="element counts of the compare scale run (none: skip it)")
    ap.add_argument("--callgrind", type=int, default=3000, metavar="M",
                    help="elements of the callgrind runs (0: skip)")
    ap.add_argument("--child-callgrind", type=int, metavar="M", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "bootstrap.md")
    args = ap.parse_args(argv)
    if args.child_callgrind:
        child_callgrind(args.child_callgrind)
        return 0

    load = os.getloadavg()[0]
    rows = streaming(args.elements, args.replicas, args.repeat)
    lines = [
        "# Cost of confidence intervals: online Poisson bootstrap and batch compare",
        "",
        f"Command: `python benchmarks/bench_bootstrap.py` (best of {args.repeat}). Machine: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}, numpy {np.__version__}; load "
        f"average {load:.1f} when the run started (other jobs share the machine). Times are CPU "
        "seconds (user + system) of this process.",
        "",
        "## Streaming: BootstrapEvaluator with B replicas against one table",
        "",
        f"{args.elements:,} elements in documents of 6 + Poisson(6) elements (unit = document; "
        f"{cells_per_row(make_stream(args.elements)):.1f} cells per row), "
        "metrics ELM, BCubed, AdjustedRand, NormalizedMutualInfo (the element-averaged F of ELM and "
        "BCubed tracked). CPU times from `time.process_time`; the one table is the best of five "
        "passes, and every row is measured in the same run.",
        "",
        "| set-up | update CPU time | per element | time / one table | first get() | "
        + " | ".join(f"{m} read" for m in METHODS) + " |",
        "|---|---:|---:|---:|---:|" + "---:|" * len(METHODS),
    ]
    ok = True
    for name, b, seconds, _units, ratio, first, again in rows:
        if b == 200:
            ok &= ratio <= 10
        lines.append(f"| {name} | {seconds:.2f} s | {seconds / args.elements * 1e6:.2f} µs | {ratio:.1f}× | "
                     + (f"{first * 1000:.1f} ms | " + " | ".join(f"{again[m] * 1000:.2f} ms" for m in METHODS)
                        + " |" if first is not None else " | ".join(["–"] * (len(METHODS) + 1)) + " |"))
    lines += [
        "",
        "Goal: an update at most 10× the one table's at B = 200: "
        + ("met." if ok else "**not met** (see the table)."),
        "An update touches the observed table and its unit's table, whatever B; the replicas' "
        "sums catch up at the next read, by adding each touched unit's change of statistics times "
        "its B multiplicities (the first get(), adaptive, settles every unit of the stream at "
        "once). The method columns: `intervals(method)` after one more element (one unit to "
        "settle, then B reads of every metric). The percentile interval sorts the B values; the "
        "studentized one adds each replica's linearization standard error (a gradient: two metric "
        "reads per field a metric reads, 28 reads per replica for these four metrics) and one BLAS "
        "product of the B × U multiplicities with the live units' fields and their pairwise "
        "products; the hybrid one reads the same and adds a percentile interval; adaptive is one "
        "of the two (here studentized: no unit holds 15% of the pairs), chosen from the largest "
        "unit's share kept current (no scan of the units); BCa adds the leave-one-unit-out reads "
        "(U per metric, at most 1,000 groups).",
        "",
    ]
    cg = callgrind(args.callgrind) if args.callgrind else {}
    if cg:
        units = time_bootstrap(make_stream(args.callgrind), 1)[1]
        lines += [
            f"Instructions (`valgrind --tool=callgrind`, {args.callgrind:,} updates of a fresh "
            "object, only the measured calls collected: `benchmarks/instructions.py`; stable on a "
            "loaded machine). Update, per element: "
            f"Evaluator {cg['evaluator']:,.0f}, BootstrapEvaluator (B = 200) "
            f"{cg['bootstrap']:,.0f}: **{cg['bootstrap'] / cg['evaluator']:.1f}×**. "
            f"A read after one more element ({units:,} live units, B = 200, four metrics): "
            + ", ".join(f"{m} {cg[m] / 1e6:,.1f} M" for m in METHODS)
            + " (" + ", ".join(f"{m} {cg[m] / cg['percentile']:.1f}×" for m in METHODS[1:])
            + " the percentile read).",
            "",
        ]
    if args.scale:
        srows = scale(args.scale)
        t, a, b, units = scale_data(args.scale[0])
        lines += [
            "## Scale: compare over 10⁵ and 10⁶ elements",
            "",
            "Two systems, the default metrics (ELM, BCubed, ARI, NMI), 1,000 resamples, documents "
            f"of about 10 elements (units = N/10; {labels_cells_per_row(units, t, a):.1f} cells per "
            f"row in system A's table, {labels_cells_per_row(units, t, b):.1f} in B's), percentile "
            "intervals (the studentized default costs more: [intervals](intervals.md)); CPU time of "
            "the whole call (grouping, unit statistics, resamples, reads), the best of three. No "
            "instruction counts: the call's time is in numpy and BLAS, whose instruction counts "
            "depend on the CPU's SIMD path; the ratio is taken within one run.",
            "",
            "| elements | units | test | CPU time |",
            "|---:|---:|---|---:|",
        ]
        for n, u, method, c in srows:
            lines.append(f"| {n:,} | {u:,} | {method} | {c:.2f} s |")
        if len(args.scale) >= 2:
            by = {(n, m): c for n, _, m, c in srows}
            lo, hi = args.scale[0], args.scale[-1]
            lines += ["", "Ratio of the largest run to the smallest (elements ×"
                      f"{hi // lo}): " + ", ".join(
                          f"{m} {by[hi, m] / by[lo, m]:.1f}×"
                          for m in ("paired_bootstrap", "randomization")) + "."]
        lines.append("")
    if (args.data / "test.json").is_file():
        brows, n, density = batch(args.data, args.resamples)
        lines += [
            "## Batch: compare over the 34 BERT test streams",
            "",
            f"`streameval.compare` of BERT and the three baselines (4 systems, 6 pairs) over the 34 "
            f"test streams ({n:,} pages, unit = stream), ELM and BCubed, {args.resamples:,} resamples "
            "(and as many randomization rounds), seed 0. Cells per row (true document): "
            + ", ".join(f"{k} {v:.2f}" for k, v in density.items()) + ". No instruction counts, "
            "as above: the time is in numpy and BLAS.",
            "",
            "| aggregate | test | wall time | CPU time |",
            "|---|---|---:|---:|",
        ]
        for aggregate, method, wall, c in brows:
            lines.append(f"| {aggregate} | {method} | {wall:.2f} s | {c:.2f} s |")
        lines += [
            "",
            "Resamples never revisit the pages: the per-stream statistics are combined by one exact "
            "integer matrix product, then each metric reads the combined sums.",
            "",
        ]
    else:
        lines += [f"The page-stream data was not found at `{args.data}`: no batch figures.", ""]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    from calibration_bootstrap import section

    # the calibration section (benchmarks/calibration_bootstrap.py writes it) is kept as it was
    kept = section(args.out.read_text(encoding="utf-8")) if args.out.is_file() else ""
    args.out.write_text("\n".join(lines) + (f"\n{kept}\n" if kept else ""), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
