"""Benchmark: coreference metrics (MUC, BLANC, LEA) per element, and the on-demand metrics
(CEAF-e, CEAF-m, ClusterAccuracy, AdjustedMutualInfo) per get(), against the number of clusters K.

Run from the repository root:

    python benchmarks/bench_coreference.py

It writes docs/benchmarks/coreference.md. Data: N = 10·K elements, true labels uniform over K
clusters, predictions equal to the truth except 10% drawn uniformly at random (seeded).

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
    for cls in (se.MUC, se.BLANC, se.LEA, se.AdjustedRand):
        best = float("inf")
        for _ in range(REPEATS):
            m = cls()
            m.table.update_many(t, p)
            update, get = m.update, m.get
            start = time.perf_counter()
            for a, b in steps:
                update(a, b)
                get()
            best = min(best, time.perf_counter() - start)
        out[cls.__name__] = best / len(steps) * 1e6
    for name, fn in (("MUC", batch.muc_score), ("BLANC", batch.blanc_score), ("LEA", batch.lea_score)):
        start = time.perf_counter()
        fn(t, p)
        out[name + " batch"] = (time.perf_counter() - start) * 1e6
    return out


def one_get(metric, t, p, repeats: int) -> float:
    """Median seconds of one get() right after an update (the cache is invalid each time)."""
    metric.table.update_many(t, p)
    times = []
    for i in range(repeats):
        metric.update(int(t[i]), int(p[i]))
        start = time.perf_counter()
        metric.get()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_on_demand(k: int) -> dict:
    t, p = data(k)
    repeats = 5 if k <= 10_000 else 1
    out = {
        "CEAF-e": one_get(se.CEAF(), t, p, repeats),
        "CEAF-m": one_get(se.CEAF(variant="mention"), t, p, repeats),
        "ClusterAccuracy": one_get(se.ClusterAccuracy(), t, p, repeats),
        "AMI": one_get(se.AdjustedMutualInfo(), t, p, repeats),
    }
    if k <= 1_000:  # scikit-learn loops over every pair of clusters: 80 s at K = 10,000
        from sklearn.metrics import adjusted_mutual_info_score

        start = time.perf_counter()
        adjusted_mutual_info_score(t, p)
        out["sklearn AMI"] = time.perf_counter() - start
    if k <= 2_000:
        from scipy.optimize import linear_sum_assignment

        start = time.perf_counter()
        dense = np.zeros((k, k))
        np.add.at(dense, (t, p), 1)
        linear_sum_assignment(dense, maximize=True)
        out["dense LSA"] = time.perf_counter() - start
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    o1_ks = [10, 100, 1_000, 100_000]
    od_ks = [10, 100, 1_000, 10_000, 100_000]
    o1 = {k: bench_o1(k) for k in o1_ks}
    od = {k: bench_on_demand(k) for k in od_ks}

    cmd = "python benchmarks/bench_coreference.py"
    lines = [
        "# Benchmark: coreference and on-demand matching metrics",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {np.__version__}. Command: `{cmd}` (from the repository root). Data: N = 10·K "
        "elements, uniform true labels over K clusters, predictions equal to the truth except 10% "
        "drawn at random (seeded). Timings are wall-clock on a shared machine: read the ratios.",
        "",
        "## MUC, BLANC, LEA: µs per element (one update + one get()) against K",
        "",
        f"The table holds N = 10·K elements; one metric alone then takes {STEPS:,} update + get() "
        "pairs. The last columns give one call of the batch twin over the same N elements (what "
        "re-scoring with a batch scorer costs after every change) and its ratio to the streaming "
        "step.",
        "",
        "| K | MUC µs | BLANC µs | LEA µs | AdjustedRand µs (core, for scale) | batch MUC µs (one call) | batch / streaming MUC |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k, r in o1.items():
        lines.append(
            f"| {k:,} | {r['MUC']:.2f} | {r['BLANC']:.2f} | {r['LEA']:.2f} | {r['AdjustedRand']:.2f} | "
            f"{r['MUC batch']:,.0f} | {r['MUC batch'] / r['MUC']:,.0f}× |"
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
        "| K | CEAF-e ms | CEAF-m ms | ClusterAccuracy ms | AMI ms | sklearn AMI ms | AMI ratio | dense LSA ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k, r in od.items():
        dense = f"{r['dense LSA'] * 1e3:,.1f}" if "dense LSA" in r else "—"
        sk = f"{r['sklearn AMI'] * 1e3:,.1f}" if "sklearn AMI" in r else "—"
        ratio = f"{r['sklearn AMI'] / r['AMI']:,.0f}× faster" if "sklearn AMI" in r else "—"
        lines.append(
            f"| {k:,} | {r['CEAF-e'] * 1e3:,.1f} | {r['CEAF-m'] * 1e3:,.1f} | "
            f"{r['ClusterAccuracy'] * 1e3:,.1f} | {r['AMI'] * 1e3:,.2f} | "
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
