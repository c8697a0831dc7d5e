"""Batch label metrics on 10⁶ integer labels: ``streameval.batch`` beside scikit-learn, one run.

The labels: N = 10⁶ elements, K true clusters, the prediction equal to the truth with probability
0.7 and otherwise one of 1.2·K clusters (numpy int64 arrays, seed 0). Per function, the CPU time
(``time.process_time``) of one call on the same arrays, the least of ``--repeat`` calls, and its
ratio to scikit-learn's (below 1: streameval is faster). Beside them, the native streaming path
that reads both values from one table, ``Evaluator([AdjustedRand(), NormalizedMutualInfo()])``
with ``update_many`` then ``get()``. The batch functions are the independent numpy twins (the
tests' oracle): each labelling factorised once, the cells counted once.

Writes ``docs/benchmarks/batch.md``. Default run: under a minute.

    PYTHONPATH=. python benchmarks/bench_batch.py [--n 1000000] [--repeat 5] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from sklearn import metrics as skm

import streameval as se
from streameval import batch

FUNCTIONS = [  # (name, streameval's, scikit-learn's)
    ("adjusted_rand_score", batch.adjusted_rand_score, skm.adjusted_rand_score),
    ("normalized_mutual_info_score", batch.normalized_mutual_info_score, skm.normalized_mutual_info_score),
    ("mutual_info_score", batch.mutual_info_score, skm.mutual_info_score),
    ("homogeneity_completeness_v_measure", batch.homogeneity_completeness_v_measure,
     skm.homogeneity_completeness_v_measure),
    ("fowlkes_mallows_score", batch.fowlkes_mallows_score, skm.fowlkes_mallows_score),
    ("pair_confusion_matrix", batch.pair_confusion_matrix, skm.cluster.pair_confusion_matrix),
    ("contingency_matrix(sparse=True)", lambda t, p: batch.contingency_matrix(t, p, sparse=True),
     lambda t, p: skm.cluster.contingency_matrix(t, p, sparse=True)),
]


def labels(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, int(1.2 * k), n))
    return t, p


def cpu(f, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        f()
        best = min(best, time.process_time() - start)
    return best


def native_both(t, p):
    ev = se.Evaluator([se.AdjustedRand(), se.NormalizedMutualInfo()])
    ev.update_many(t, p)
    return ev.get()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "batch.md"))
    args = ap.parse_args(argv)
    rows = []
    for k in (10, 1000):
        t, p = labels(args.n, k)
        for name, ours, theirs in FUNCTIONS:
            a, b = ours(t, p), theirs(t, p)  # the same values (and warm caches)
            if name.startswith("contingency"):
                assert (a != b).nnz == 0
            else:
                assert np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-9, atol=1e-12), name
            s, k_ = cpu(lambda: ours(t, p), args.repeat), cpu(lambda: theirs(t, p), args.repeat)  # noqa: B023
            rows.append((k, f"`{name}`", s, k_))
            print(k, name, f"{s:.3f} {k_:.3f} {s / k_:.2f}x", file=sys.stderr)
        values = native_both(t, p)
        assert abs(values["AdjustedRand"] - skm.adjusted_rand_score(t, p)) < 1e-9
        s = cpu(lambda: native_both(t, p), args.repeat)  # noqa: B023
        both = cpu(lambda: (skm.adjusted_rand_score(t, p), skm.normalized_mutual_info_score(t, p)),  # noqa: B023
                   args.repeat)
        rows.append((k, "ARI and NMI, native Evaluator: `update_many` + `get()` (against both scikit-learn calls)", s, both))
    lines = [
        "# Benchmarks: batch label metrics against scikit-learn",
        "",
        f"{args.n:,} integer labels (numpy int64), K true clusters, the prediction equal to the truth "
        "with probability 0.7, else one of 1.2·K clusters. CPU seconds of one call (the least of "
        f"{args.repeat}), and the ratio streameval / scikit-learn (below 1: streameval is faster). "
        "Every pair of values was checked equal before timing.",
        "",
        f"Run: `PYTHONPATH=. python benchmarks/bench_batch.py` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {__import__('sklearn').__version__}; a shared, loaded machine, so the ratios "
        "matter more than the seconds.",
        "",
        "| K | function | streameval (s) | scikit-learn (s) | ratio |",
        "|---|---|---|---|---|",
    ]
    for k, name, s, their in rows:
        lines.append(f"| {k:,} | {name} | {s:.3f} | {their:.3f} | {s / their:.2f}× |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    # the page's chart (docs/benchmarks/img/batch.png), drawn from the table just written
    import charts

    charts.main(["batch"])
    print(f"written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
