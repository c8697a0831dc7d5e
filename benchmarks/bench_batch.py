"""Batch label metrics on 10⁶ labels: ``streameval.batch`` beside scikit-learn, one run.

The labels: N = 10⁶ elements, K true clusters (K = 10 and 1,000), the prediction equal to the truth
with probability 0.7 and otherwise one of 1.2·K clusters (seed 0): about 12 cells per true cluster
at K = 10 and 270 at K = 1,000 (the page states the measured number). Two kinds of labels: numpy
int64 arrays, and the same labels as strings (numpy unicode arrays, ``"17"``; a subset of the
functions); one more row with pandas-style object arrays of Python strings. Per function:

- the CPU time (``time.process_time``) of one call on the same arrays, the least of ``--repeat``
  calls, and its ratio to scikit-learn's (below 1: streameval is faster);
- instructions per element from ``valgrind --tool=callgrind`` on ``--cg-n`` labels drawn the same
  way (one process per label kind and K, each call inside ``functools.reduce``, the only code
  collected: ``benchmarks/instructions.py``), and their ratio.

The batch functions count both labellings natively in one ``update_many`` and read the streaming
metrics' exact sums (``streameval.batch.labels``); ``contingency_matrix`` numbers integer labels by
counting and builds its CSR matrix directly. Beside them, ``Evaluator([AdjustedRand(),
NormalizedMutualInfo()])`` with ``update_many`` then ``get()`` (both values from one table), against
both scikit-learn calls.

Writes ``docs/benchmarks/batch.md``. Default run: a few minutes (most of it under valgrind).

    PYTHONPATH=. python benchmarks/bench_batch.py [--n 1000000] [--repeat 3] [--cg-n 100000] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from sklearn import metrics as skm

import streameval as se
from streameval import batch

FUNCTIONS = [  # (name, streameval's, scikit-learn's, run on string labels too)
    ("adjusted_rand_score", batch.adjusted_rand_score, skm.adjusted_rand_score, True),
    ("rand_score", batch.rand_score, skm.rand_score, False),
    ("normalized_mutual_info_score", batch.normalized_mutual_info_score, skm.normalized_mutual_info_score,
     True),
    ("mutual_info_score", batch.mutual_info_score, skm.mutual_info_score, False),
    ("homogeneity_completeness_v_measure", batch.homogeneity_completeness_v_measure,
     skm.homogeneity_completeness_v_measure, True),
    ("fowlkes_mallows_score", batch.fowlkes_mallows_score, skm.fowlkes_mallows_score, False),
    ("pair_confusion_matrix", batch.pair_confusion_matrix, skm.cluster.pair_confusion_matrix, False),
    ("contingency_matrix(sparse=True)", lambda t, p: batch.contingency_matrix(t, p, sparse=True),
     lambda t, p: skm.cluster.contingency_matrix(t, p, sparse=True), True),
]
BOTH = "ARI and NMI, native Evaluator: `update_many` + `get()` (against both scikit-learn calls)"


def labels(n: int, k: int, kind: str = "int", seed: int = 0):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, int(1.2 * k), n))
    if kind == "str":
        return t.astype(str), p.astype(str)
    if kind == "object":
        return t.astype(str).astype(object), p.astype(str).astype(object)
    return t, p


def cases(kind: str) -> list:
    """``[(row name, streameval's call, scikit-learn's call)]`` measured for a kind of labels."""
    out = [(f"`{name}`", ours, theirs) for name, ours, theirs, strings in FUNCTIONS
           if kind == "int" or (kind == "str" and strings)
           or (kind == "object" and name == "adjusted_rand_score")]
    if kind == "int":
        out.append((BOTH, native_both,
                    lambda t, p: (skm.adjusted_rand_score(t, p), skm.normalized_mutual_info_score(t, p))))
    return out


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


def same(a, b) -> bool:
    """The two libraries' results agree (a CSR matrix cell for cell, values to 1e-9)."""
    if hasattr(a, "nnz"):
        return (a != b).nnz == 0
    if isinstance(a, dict):
        a = [a["AdjustedRand"], a["NormalizedMutualInfo"]]
    return bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-9, atol=1e-12))


def child_callgrind(k: int, kind: str, n: int) -> None:
    """Under callgrind: each case's two calls, each inside ``functools.reduce``."""
    from instructions import measured

    t, p = labels(n, k, kind)
    for _name, ours, theirs in cases(kind):  # warm: imports and first-call caches stay out
        ours(t, p), theirs(t, p)
    for _name, ours, theirs in cases(kind):  # then only the measured calls
        measured(ours, t, p)
        measured(theirs, t, p)


def callgrind(k: int, kind: str, n: int) -> list:
    """``[(streameval, scikit-learn) instructions per element]`` per case, or ``[]`` without valgrind."""
    import instructions

    if not instructions.available():
        return []
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]) + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    totals = instructions.counts([sys.executable, __file__, "--child-callgrind", k, kind, n],
                                 expected=2 * len(cases(kind)), env=env)
    return [(totals[i] / n, totals[i + 1] / n) for i in range(0, len(totals), 2)]


def cells_per_row(k: int, n: int) -> float:
    table = se.Contingency()
    table.update_many(*labels(n, k))
    return table.cells / table.k_true


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cg-n", type=int, default=100_000, help="labels of the callgrind runs (0: none)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "batch.md"))
    ap.add_argument("--child-callgrind", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_callgrind:
        k, kind, n = args.child_callgrind
        child_callgrind(int(k), kind, int(n))
        return
    sections = {}
    density = {}
    for kind in ("int", "str", "object"):
        rows = []
        for k in (10, 1000) if kind != "object" else (1000,):
            density[k] = cells_per_row(k, args.n)
            t, p = labels(args.n, k, kind)
            cg = callgrind(k, kind, args.cg_n) if args.cg_n else []
            for j, (name, ours, theirs) in enumerate(cases(kind)):
                assert same(ours(t, p), theirs(t, p)), name  # the same values (and warm caches)
                s, their = cpu(lambda: ours(t, p), args.repeat), cpu(lambda: theirs(t, p), args.repeat)  # noqa: B023
                rows.append((k, name, s, their, *(cg[j] if cg else (None, None))))
                print(kind, k, name, f"{s:.3f} {their:.3f} {s / their:.2f}x",
                      cg[j] if cg else "", file=sys.stderr)
        sections[kind] = rows
    head = ("| K | function | streameval (s) | scikit-learn (s) | ratio | streameval instructions "
            "per element | scikit-learn instructions per element | instructions ratio |")
    rule = "|---|---|---|---|---|---|---|---|"

    def table(rows) -> list:
        out = [head, rule]
        for k, name, s, their, ci, ct in rows:
            instr = (f"{ci:,.0f} | {ct:,.0f} | {ci / ct:.2f}×" if ci is not None else "– | – | –")
            out.append(f"| {k:,} | {name} | {s:.3f} | {their:.3f} | {s / their:.2f}× | {instr} |")
        return out

    cg_note = (f"Instructions per element: `valgrind --tool=callgrind` on {args.cg_n:,} labels drawn "
               "the same way, each call alone inside `functools.reduce` (the only code collected), "
               "after a warm-up call." if args.cg_n else "Instructions: not measured (`--cg-n 0`).")
    lines = [
        "# Benchmarks: batch label metrics against scikit-learn",
        "",
        f"{args.n:,} labels, K true clusters, the prediction equal to the truth with probability 0.7, "
        f"else one of 1.2·K clusters (seed 0): **{density[10]:.1f} cells per true cluster (row) at "
        f"K = 10, {density[1000]:.1f} at K = 1,000**. CPU seconds of one call (the least of "
        f"{args.repeat}), and the ratio streameval / scikit-learn (below 1: streameval is faster); "
        "beside them the instructions per element of each call, stable under load. Every pair of "
        "values was checked equal before timing. The batch functions count both labellings "
        "natively in one bulk call and read the streaming metrics' exact sums (the same bits as "
        "the streaming metric); `contingency_matrix` numbers integer labels by counting them "
        "(no sort) and builds the CSR matrix directly.",
        "",
        f"Run: `PYTHONPATH=. python benchmarks/bench_batch.py` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {__import__('sklearn').__version__}; a shared, loaded machine, so the ratios "
        f"matter more than the seconds. {cg_note}",
        "",
        "## Integer labels (numpy int64)",
        "",
        *table(sections["int"]),
        "",
        "## String labels",
        "",
        "The same labels as numpy unicode arrays (`\"17\"`): streameval numbers them in one "
        "dictionary pass over the Python strings, scikit-learn sorts the fixed-width strings "
        "(`numpy.unique`); numbering the labels is most of either's time.",
        "",
        *table(sections["str"]),
        "",
        "Pandas-style object arrays of Python strings (scikit-learn sorts the Python objects):",
        "",
        *table(sections["object"]),
    ]
    Path(args.out).write_text("\n".join(lines) + "\n")
    # the page's chart (docs/benchmarks/img/batch.png), drawn from the page's first table
    import charts

    charts.main(["batch"])
    print(json.dumps({"written": args.out}), file=sys.stderr)


if __name__ == "__main__":
    main()
