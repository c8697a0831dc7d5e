"""Benchmark: coreference metrics (MUC, BLANC, LEA) per element, and the on-demand metrics
(CEAF-e, CEAF-m, ClusterAccuracy, AdjustedMutualInfo) per get(), against the number of clusters K.

Run from the repository root:

    python benchmarks/bench_coreference.py

It writes docs/benchmarks/coreference.md. Data: N = 10·K elements, true labels uniform over K
clusters, predictions equal to the truth except 10% drawn uniformly at random (seeded): about 1.9
cells per true cluster (row), the page states the measured number. Times are CPU time
(``time.process_time``); beside them, instructions from ``valgrind --tool=callgrind`` (each
measured loop or get() alone inside ``functools.reduce``, the only code collected:
``benchmarks/instructions.py``), stable on a loaded machine; skipped without valgrind.

- O(1) metrics: the table is filled with the N elements, then one metric alone takes `STEPS`
  update + get() pairs; reported in µs per element. The peer is recomputing the batch twin over
  the same N elements (what a batch scorer does after each change), reported as one call's time.
- On-demand metrics: one update, then one get() (cache invalidated), median of a few repeats; the
  peers are scikit-learn's `adjusted_mutual_info_score` and SciPy's dense `linear_sum_assignment`
  on the K×K contingency matrix (CEAF-m / cluster accuracy), where it fits in memory.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import streameval as se  # noqa: E402
from streameval import batch  # noqa: E402

STEPS = 10_000
REPEATS = 3  # the O(1) timings report the fastest of REPEATS runs (the machine may be shared)


def data(k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 10 * k
    t = rng.integers(0, k, n)
    p = t.copy()
    noise = rng.random(n) < 0.1
    p[noise] = rng.integers(0, k, int(noise.sum()))
    return t, p


def bench_o1(k: int) -> dict:
    t, p = data(k)
    extra_t, extra_p = data(k, seed=1)
    steps = list(zip(extra_t[:STEPS].tolist(), extra_p[:STEPS].tolist()))
    out = {}
    for cls in (getattr(se, name) for name in O1):
        best = float("inf")
        for _ in range(REPEATS):
            m = cls()
            m.table.update_many(t, p)
            update, get = m.update, m.get
            start = time.process_time()
            for a, b in steps:
                update(a, b)
                get()
            best = min(best, time.process_time() - start)
        out[cls.__name__] = best / len(steps) * 1e6
    for name, fn in (("MUC", batch.muc_score), ("BLANC", batch.blanc_score), ("LEA", batch.lea_score)):
        start = time.process_time()
        fn(t, p)
        out[name + " batch"] = (time.process_time() - start) * 1e6
    return out


def one_get(metric, t, p, repeats: int) -> float:
    """Median seconds of one get() right after an update (the cache is invalid each time)."""
    metric.table.update_many(t, p)
    times = []
    for i in range(repeats):
        metric.update(int(t[i]), int(p[i]))
        start = time.process_time()
        metric.get()
        times.append(time.process_time() - start)
    return statistics.median(times)


def bench_on_demand(k: int) -> dict:
    t, p = data(k)
    repeats = 5 if k <= 10_000 else 1
    out = {
        **{name: one_get(make(), t, p, repeats) for name, make in ON_DEMAND.items()},
    }
    if k <= 1_000:  # scikit-learn loops over every pair of clusters: 80 s at K = 10,000
        from sklearn.metrics import adjusted_mutual_info_score

        start = time.process_time()
        adjusted_mutual_info_score(t, p)
        out["sklearn AMI"] = time.process_time() - start
    if k <= 2_000:
        from scipy.optimize import linear_sum_assignment

        start = time.process_time()
        dense = np.zeros((k, k))
        np.add.at(dense, (t, p), 1)
        linear_sum_assignment(dense, maximize=True)
        out["dense LSA"] = time.process_time() - start
    return out


O1 = ("MUC", "BLANC", "LEA", "AdjustedRand")
ON_DEMAND = {"CEAF-e": lambda: se.CEAF(), "CEAF-m": lambda: se.CEAF(variant="mention"),
             "ClusterAccuracy": lambda: se.ClusterAccuracy(), "AMI": lambda: se.AdjustedMutualInfo()}
CG_STEPS = 2_000  # update + get() pairs of each O(1) metric under callgrind
CG_ON_DEMAND_MAX_K = 10_000  # above, filling the table under valgrind takes too long on a shared machine


def child_callgrind(kind: str, k: int) -> None:
    """Under callgrind: the measured loops (``o1``: CG_STEPS update + get() pairs per metric) or
    calls (``od``: one get() after an update per on-demand metric), each inside functools.reduce."""
    from instructions import measured

    t, p = data(k)
    if kind == "o1":
        extra_t, extra_p = data(k, seed=1)
        steps = list(zip(extra_t[:CG_STEPS].tolist(), extra_p[:CG_STEPS].tolist()))
        metrics = []
        for name in O1:
            m = getattr(se, name)()
            m.table.update_many(t, p)
            metrics.append(m)

        def loop(m):
            update, get = m.update, m.get
            for a, b in steps:
                update(a, b)
                get()

        for m in metrics:
            measured(loop, m)
        return
    metrics = []
    for make in ON_DEMAND.values():
        m = make()
        m.table.update_many(t, p)
        m.get()
        m.update(int(t[0]), int(p[0]))  # the cache is invalid: the next get() computes
        metrics.append(m)
    for m in metrics:
        measured(m.get)


def callgrind(kind: str, k: int) -> dict:
    """``{metric: instructions}`` per element (``o1``) or per get() (``od``); ``{}`` without valgrind."""
    import instructions

    if not instructions.available():
        return {}
    names = O1 if kind == "o1" else tuple(ON_DEMAND)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    totals = instructions.counts([sys.executable, __file__, "--child-callgrind", kind, k], len(names), env=env)
    per = min(CG_STEPS, 10 * k) if kind == "o1" else 1  # the second stream holds N = 10·K elements
    out = {name: total / per for name, total in zip(names, totals)}
    print(f"  callgrind {kind} K={k:,}: " + ", ".join(f"{n} {v:,.0f}" for n, v in out.items()), file=sys.stderr)
    return out


def cells_per_row(k: int) -> float:
    table = se.Contingency()
    table.update_many(*data(k))
    return table.cells / table.k_true


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child-callgrind", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_callgrind:
        child_callgrind(args.child_callgrind[0], int(args.child_callgrind[1]))
        return
    o1_ks = [10, 100, 1_000, 100_000]
    od_ks = [10, 100, 1_000, 10_000, 100_000]
    o1 = {k: bench_o1(k) for k in o1_ks}
    od = {k: bench_on_demand(k) for k in od_ks}
    density = {k: cells_per_row(k) for k in sorted(set(o1_ks) | set(od_ks))}
    cg_o1 = {k: callgrind("o1", k) for k in o1_ks}
    cg_od = {k: callgrind("od", k) for k in od_ks if k <= CG_ON_DEMAND_MAX_K}

    cmd = "python benchmarks/bench_coreference.py"
    lines = [
        "# Benchmark: coreference and on-demand matching metrics",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {np.__version__}. Command: `{cmd}` (from the repository root). Data: N = 10·K "
        "elements, uniform true labels over K clusters, predictions equal to the truth except 10% "
        "drawn at random (seeded): "
        + ", ".join(f"{density[k]:.2f} cells per row at K = {k:,}" for k in (10, 100_000))
        + " (the column `cells per row`). Times are CPU time on a shared machine: read the ratios; "
        "the instruction counts (`valgrind --tool=callgrind`, each measured loop or get() alone "
        "inside `functools.reduce`, the only code collected) are stable under load.",
        "",
        "## MUC, BLANC, LEA: µs per element (one update + one get()) against K",
        "",
        f"The table holds N = 10·K elements; one metric alone then takes min({STEPS:,}, N) update "
        f"+ get() pairs (instructions: min({CG_STEPS:,}, N) pairs). The last columns give one call of the batch "
        "twin over the same N elements (what re-scoring with a batch scorer costs after every "
        "change) and its ratio to the streaming step.",
        "",
        "| K | cells per row | MUC µs | BLANC µs | LEA µs | AdjustedRand µs (core, for scale) | MUC / BLANC / LEA / AdjustedRand instructions per element | batch MUC µs (one call) | batch / streaming MUC |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k, r in o1.items():
        cg = " / ".join(f"{cg_o1[k][n]:,.0f}" for n in O1) if cg_o1.get(k) else "–"
        lines.append(
            f"| {k:,} | {density[k]:.2f} | {r['MUC']:.2f} | {r['BLANC']:.2f} | {r['LEA']:.2f} | "
            f"{r['AdjustedRand']:.2f} | {cg} | {r['MUC batch']:,.0f} | {r['MUC batch'] / r['MUC']:,.0f}× |"
        )
    spread = {
        name: max(r[name] for r in o1.values()) / min(r[name] for r in o1.values())
        for name in ("MUC", "BLANC", "LEA", "AdjustedRand")
    }
    lines += [
        "",
        "Slowest / fastest step across K = 10 … 100,000: "
        + ", ".join(f"{name} {x:.2f}×" for name, x in spread.items())
        + ". The work per step does not depend on K (one cell, one row and one column change; a "
        "read is a few integer operations). The core's AdjustedRand grows the same way, so the "
        "growth belongs to the shared table (dicts of up to a million cells, memory and cache "
        "effects) and to timing noise on a shared machine, not to these views.",
        "",
        "## On-demand metrics: ms for one get() after an update, against K",
        "",
        "Peers: scikit-learn's `adjusted_mutual_info_score` over the N labels (only where "
        "K ≤ 1,000: it loops over every pair of clusters, 80 s at K = 10,000); SciPy's dense "
        "`linear_sum_assignment` on the K×K matrix (only where K ≤ 2,000: it needs K² floats).",
        "",
        "| K | cells per row | CEAF-e ms | CEAF-m ms | ClusterAccuracy ms | AMI ms | CEAF-e / CEAF-m / ClusterAccuracy / AMI instructions per get() | sklearn AMI ms | AMI ratio | dense LSA ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k, r in od.items():
        cg = (" / ".join(f"{cg_od[k][n]:,.0f}" for n in ON_DEMAND) if cg_od.get(k)
              else f"– (K > {CG_ON_DEMAND_MAX_K:,}: not run under valgrind)" if k > CG_ON_DEMAND_MAX_K else "–")
        dense = f"{r['dense LSA'] * 1e3:,.1f}" if "dense LSA" in r else "—"
        sk = f"{r['sklearn AMI'] * 1e3:,.1f}" if "sklearn AMI" in r else "—"
        ratio = f"{r['sklearn AMI'] / r['AMI']:,.0f}× faster" if "sklearn AMI" in r else "—"
        lines.append(
            f"| {k:,} | {density[k]:.2f} | {r['CEAF-e'] * 1e3:,.1f} | {r['CEAF-m'] * 1e3:,.1f} | "
            f"{r['ClusterAccuracy'] * 1e3:,.1f} | {r['AMI'] * 1e3:,.2f} | {cg} | "
            f"{sk} | {ratio} | {dense} |"
        )
    lines += [
        "",
        "AMI's get() costs O(kT + kP) for the two size histograms plus the expected-MI terms over "
        "*distinct* sizes only, so it grows with K mostly through the histograms. CEAF and cluster "
        "accuracy first fix every cell that outweighs the best alternatives in its row and column "
        "together (provably in some optimal matching; here nearly every cluster), then solve a "
        "sparse assignment (LAPJVsp) on what is left: near-linear in the cells when most clusters "
        "have one dominant partner, up to cubic in the clusters left over when none does. The "
        "dominant cost at large K is reading the table's cells into arrays. A repeated get() on an "
        "unchanged table is a cache hit (O(1)).",
        "",
    ]
    out = ROOT / "docs" / "benchmarks" / "coreference.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
