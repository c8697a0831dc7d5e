"""Windowed evaluation cost per element: streameval's CountWindow vs River's Rolling, one run.

A sliding window of the last W elements over a stream with K true and K predicted clusters
(prediction = truth with probability 0.7, else a random cluster). Per element: one update (the
oldest element leaves by revert) and one read of every metric of the suite, the metrics both
libraries define: AdjustedRand, Rand, MutualInfo, NormalizedMutualInfo, Homogeneity,
Completeness, VBeta, FowlkesMallows. Timed after the window is full.

Contenders:
- ``streameval CountWindow``: one shared contingency table for the whole suite.
- ``River Rolling(streameval metric)``: ``river.utils.Rolling`` around each streameval metric
  (one table per metric: River's wrappers do not share).
- ``River Rolling(river metric)``: ``river.utils.Rolling`` around each of River's own metrics,
  River's idiomatic way.
- ``River shared cm``: one ``Rolling(ConfusionMatrix)`` read by all of River's metrics (River's
  own sharing, its fastest set-up).

Times are CPU time (``time.process_time``). Beside them, instructions per element from ``valgrind
--tool=callgrind`` over ``--cg-m`` elements after the window is full (one process per K, each
contender's loop alone inside ``functools.reduce``, the only code collected:
``benchmarks/instructions.py``), for the contenders below ``CG_MAX_US`` µs per element (slower
ones would take hours under valgrind's emulation). The page states the window's cells per row.

Writes ``docs/benchmarks/window.md``. Default run: a few minutes on two cores.

    PYTHONPATH=. python benchmarks/bench_window.py [--window 2000] [--budget 4] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path

import river
from river import metrics as rm
from river import utils

import streameval as se

SUITE = [
    ("AdjustedRand", se.AdjustedRand, rm.AdjustedRand),
    ("Rand", se.Rand, rm.Rand),
    ("MutualInfo", se.MutualInfo, rm.MutualInfo),
    ("NormalizedMutualInfo", se.NormalizedMutualInfo, rm.NormalizedMutualInfo),
    ("Homogeneity", se.Homogeneity, rm.Homogeneity),
    ("Completeness", se.Completeness, rm.Completeness),
    ("VBeta", se.VBeta, rm.VBeta),
    ("FowlkesMallows", se.FowlkesMallows, rm.FowlkesMallows),
]


def stream(k: int, n: int, seed: int = 0):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        t = rng.randrange(k)
        out.append((t, t if rng.random() < 0.7 else rng.randrange(k)))
    return out


def contenders(window: int) -> dict:
    """name -> (update(y_true, y_pred), read() -> list of values)."""

    def streameval_window():
        w = se.CountWindow(window, [cls() for _, cls, _ in SUITE])
        return w.update, lambda: list(w.get().values())

    def rolling_of(kind):
        def build():
            rolls = [utils.Rolling(cls, window_size=window) for cls in kind]

            def update(y, p):
                for r in rolls:
                    r.update(y, p)

            return update, lambda: [r.get() for r in rolls]

        return build

    def river_shared():
        cm = utils.Rolling(rm.ConfusionMatrix, window_size=window)
        ms = [cls(cm=cm.obj) for _, _, cls in SUITE]
        return cm.update, lambda: [m.get() for m in ms]

    return {
        "streameval CountWindow": streameval_window,
        "River Rolling(streameval metric)": rolling_of([c for _, c, _ in SUITE]),
        "River Rolling(river metric)": rolling_of([c for _, _, c in SUITE]),
        "River shared cm": river_shared,
    }


def measure(build, data, window: int, budget: float):
    """Seconds per element (update + read of the suite) once the window is full, and the values."""
    update, read = build()
    for y, p in data[:window]:
        update(y, p)
    timed = data[window:]
    count = 0
    first = None
    start = time.process_time()
    for y, p in timed:
        update(y, p)
        values = read()
        if first is None:
            first = values
        count += 1
        if count >= 3 and time.process_time() - start > budget:
            break
    elapsed = time.process_time() - start
    return elapsed / count, count, first


CG_MAX_US = 2_000  # contenders slower than this per element are not run under callgrind


def child_callgrind(k: int, window: int, m: int, names: list) -> None:
    """Under callgrind: each named contender's loop of ``m`` update + read pairs after the window
    is full, inside functools.reduce (built and filled first, uncounted)."""
    from instructions import measured

    data = stream(k, window + m, seed=k)
    built = []
    for name in names:
        update, read = contenders(window)[name]()
        for y, p in data[:window]:
            update(y, p)
        built.append((update, read))

    def loop(update, read):
        for y, p in data[window:]:
            update(y, p)
            read()

    for update, read in built:
        measured(loop, update, read)


def callgrind(k: int, window: int, m: int, names: list) -> dict:
    """``{contender: instructions per element}``; ``{}`` without valgrind."""
    import instructions

    if not names or not instructions.available():
        return {}
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]) + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    totals = instructions.counts([sys.executable, __file__, "--child-callgrind", k, window, m, *names],
                                 len(names), env=env)
    return {name: total / m for name, total in zip(names, totals)}


def cells_per_row(k: int, window: int) -> float:
    """Cells per true cluster of the window's table (its first full window)."""
    table = se.Contingency()
    for y, p in stream(k, window, seed=k):
        table.update(y, p)
    return table.cells / table.k_true


def cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=2000)
    parser.add_argument("--timed", type=int, default=5000, help="max timed elements per case")
    parser.add_argument("--budget", type=float, default=4.0, help="max seconds per case")
    parser.add_argument("--ks", default="10,100,1000")
    parser.add_argument("--cg-m", type=int, default=500, help="elements of the callgrind loops (0: none)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1]
                        / "docs" / "benchmarks" / "window.md")
    parser.add_argument("--child-callgrind", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_callgrind:
        k, window, m, *names = args.child_callgrind
        child_callgrind(int(k), int(window), int(m), names)
        return
    ks = [int(k) for k in args.ks.split(",")]
    rows = []
    for k in ks:
        data = stream(k, args.window + args.timed, seed=k)
        results = {}
        for name, build in contenders(args.window).items():
            sec, count, values = measure(build, data, args.window, args.budget)
            results[name] = (sec, count, values)
            print(f"K={k:>5} {name:<34} {sec * 1e6:>12.1f} us/element ({count} timed)", flush=True)
        # the contenders read the same first window: check they agree before comparing speed
        ref = results["streameval CountWindow"][2]
        for name, (_, _, values) in results.items():
            assert all(abs(a - b) < 1e-6 for a, b in zip(values, ref)), (name, values, ref)
        fast = [name for name, (sec, _, _) in results.items() if sec * 1e6 <= CG_MAX_US]
        cg = callgrind(k, args.window, args.cg_m, fast) if args.cg_m else {}
        print(f"K={k:>5} callgrind: " + ", ".join(f"{n} {v:,.0f}" for n, v in cg.items()), flush=True)
        rows.append((k, results, cg, cells_per_row(k, args.window)))
    write(args, rows)


def write(args, rows) -> None:
    names = list(rows[0][1])
    lines = [
        "# Windowed evaluation: streameval vs River's `Rolling`",
        "",
        "Cost per element of one update (the oldest element leaves by revert) plus one read of a",
        f"suite of {len(SUITE)} metrics that both libraries define ("
        + ", ".join(n for n, _, _ in SUITE) + "),",
        f"over a sliding window of the last {args.window:,} elements, once the window is full.",
        "Stream: K true and K predicted clusters, prediction = truth with probability 0.7: "
        + ", ".join(f"{c:.1f} cells per row at K = {k:,}" for k, _, _, c in rows)
        + " in a full window (the column `cells per row`).",
        "The contenders' values on the first timed window are checked equal (1e-6) before timing",
        "is reported. Ratios are River's time over streameval's `CountWindow` (higher = streameval",
        "faster).",
        "",
        f"- Machine: {cpu()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}, Python {sys.version.split()[0]}, river {river.__version__}",
        "- Command: `PYTHONPATH=. python benchmarks/bench_window.py"
        + (f" --window {args.window}" if args.window != 2000 else "")
        + (f" --ks {args.ks}" if args.ks != "10,100,1000" else "") + "`",
        f"- Each case timed over up to {args.timed:,} elements, stopping after {args.budget:g} s "
        "(at least 3 elements; the `timed` column); CPU time.",
        f"- Instructions per element: `valgrind --tool=callgrind` over {args.cg_m:,} elements after "
        "the window is full, each contender's loop alone inside `functools.reduce` (the only code "
        f"collected); stable under load. Contenders slower than {CG_MAX_US:,} µs per element are "
        "not run under valgrind (–): its emulation would take hours.",
        "",
        "| K | cells per row | contender | µs / element | timed | ratio vs CountWindow | instructions / element | instructions ratio |",
        "|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for k, results, cg, density in rows:
        base = results["streameval CountWindow"][0]
        cg_base = cg.get("streameval CountWindow")
        for name in names:
            sec, count, _ = results[name]
            instr = (f"{cg[name]:,.0f} | {cg[name] / cg_base:,.1f}×" if name in cg and cg_base
                     else "– | –")
            lines.append(
                f"| {k:,} | {density:.1f} | {name} | {sec * 1e6:,.1f} | {count:,} | {sec / base:,.1f}× | {instr} |"
            )
    lines += [
        "",
        "Reading: streameval's cost per element does not grow with K (every sum is O(1) to update",
        "and to read). River's metrics read their confusion matrix in O(K²) (`MutualInfo` and the",
        "metrics built on it loop over all pairs of classes ever seen, also those that left the",
        "window), so the gap widens with K.",
        "`Rolling(streameval metric)` keeps one table per metric, so it pays one table update per",
        "metric; the `CountWindow` shares one table across the suite.",
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
