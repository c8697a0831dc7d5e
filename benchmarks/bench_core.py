"""Cost per element of the core metrics, side by side with River and scikit-learn, in one run.

For K = 10, 100, 1,000 and 100,000 clusters, a stream whose truth is uniform over K labels and whose
prediction is the truth 90% of the time (else a random label) is first fed, untimed, until the table
holds its steady state (max(20,000, 2K) elements); then the next M elements are timed:

- bare dict counting of the (true, pred) pairs: the floor any Python table pays;
- streameval: ``update`` alone (the table; the table with ELM's or BCubed's element-averaged F
  tracked; the whole suite's shared table), and ``update`` + ``get()`` after every element for each
  metric and for an ``Evaluator`` holding all of them;
- River: each of its equivalent metrics, ``update`` + ``get()`` after every element (time-boxed: its
  ``get()`` grows with K);
- scikit-learn: recomputing the metric from the labels seen so far, once per reading.

Run: ``python benchmarks/bench_core.py`` (``--quick`` for a short run); it writes the tables to
``docs/benchmarks/core.md`` (``--out``) and prints them.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import streameval as se  # noqa: E402
from streameval.metrics import default_metrics  # noqa: E402

RIVER_PEERS = ["Rand", "AdjustedRand", "FowlkesMallows", "MutualInfo", "NormalizedMutualInfo",
               "Homogeneity", "Completeness", "VBeta"]
SKLEARN_PEERS = {
    "Rand": "rand_score", "AdjustedRand": "adjusted_rand_score",
    "FowlkesMallows": "fowlkes_mallows_score", "MutualInfo": "mutual_info_score",
    "NormalizedMutualInfo": "normalized_mutual_info_score", "Homogeneity": "homogeneity_score",
    "Completeness": "completeness_score", "VBeta": "v_measure_score",
}


# River's get() loops over every pair of classes seen: ~1 s per reading at K = 1,000, so a single
# reading at K = 100,000 would take hours (O(K²)); it is not run there.
RIVER_MAX_K = 1000


def make_stream(k: int, n: int, seed: int = 0):
    rng = random.Random(seed)
    ts = [rng.randrange(k) for _ in range(n)]
    ps = [t if rng.random() < 0.9 else rng.randrange(k) for t in ts]
    return ts, ps


def per_element(fn, n: int) -> float:
    """µs per element of ``fn()`` that processes ``n`` elements."""
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) / n * 1e6


def timed_loop(step, items, budget: float) -> float:
    """µs per element of ``step(t, p)`` over ``items``, stopping after ``budget`` seconds."""
    t0 = time.perf_counter()
    done = 0
    for t, p in items:
        step(t, p)
        done += 1
        if time.perf_counter() - t0 > budget:
            break
    return (time.perf_counter() - t0) / done * 1e6


def bench_k(k: int, m: int, budget: float) -> dict:
    warm_n = max(20_000, 2 * k)
    ts, ps = make_stream(k, warm_n + m, seed=k)
    warm_t, warm_p = ts[:warm_n], ps[:warm_n]
    items = list(zip(ts[warm_n:], ps[warm_n:]))
    warm = se.Contingency()
    warm.update_many(np.array(warm_t), np.array(warm_p))
    out = {"cells": warm.cells, "warm": warm_n}

    counts: dict = {}
    for t, p in zip(warm_t, warm_p):
        counts[t, p] = counts.get((t, p), 0) + 1

    def dict_count():
        get = counts.get
        for t, p in items:
            counts[t, p] = get((t, p), 0) + 1

    out["dict"] = per_element(dict_count, m)

    def table_for(metrics):
        ev = se.Evaluator(metrics, table=warm.copy())
        return ev

    for label, metrics in (("table", []), ("table+ELM F", [se.ELM()]),
                           ("table+BCubed F", [se.BCubed()]), ("suite table", None)):
        ev = table_for(metrics)
        upd = ev.update
        out[f"update:{label}"] = per_element(lambda upd=upd: [upd(t, p) for t, p in items], m)

    for metric in default_metrics():
        ev = table_for([metric])
        upd, get = ev.table.update, metric.get

        def step(t, p, upd=upd, get=get):
            upd(t, p)
            get()

        out[f"update+get:{metric.name}"] = timed_loop(step, items, budget)
    ev = table_for(None)

    def suite_step(t, p, upd=ev.update, get=ev.get):
        upd(t, p)
        get()

    out["update+get:suite"] = timed_loop(suite_step, items, budget)

    try:
        import river.metrics as rm
    except ImportError:  # pragma: no cover
        rm = None
    if rm is not None and k <= RIVER_MAX_K:
        for name in RIVER_PEERS:
            metric = getattr(rm, name)()
            for t, p in zip(warm_t, warm_p):
                metric.update(t, p)

            def rstep(t, p, metric=metric):
                metric.update(t, p)
                metric.get()

            out[f"river:{name}"] = timed_loop(rstep, items, budget)
    try:
        import sklearn.metrics as skm
    except ImportError:  # pragma: no cover
        skm = None
    if skm is not None:
        at, ap = np.array(warm_t), np.array(warm_p)
        for name, fname in SKLEARN_PEERS.items():
            f = getattr(skm, fname)
            reps = 3
            out[f"sklearn:{name}"] = per_element(lambda f=f, reps=reps: [f(at, ap) for _ in range(reps)], reps)
    return out


def render(results: dict, m: int, command: str) -> str:
    ks = list(results)
    lines = [
        "# Benchmarks: the core metrics",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {np.__version__}. Command: `{command}`. Timed elements per K: {m} (River's time-boxed).",
        "",
        "All figures are µs per element (lower is better). 'update+get' reads the metric after every",
        "element. scikit-learn's column is the cost of one recomputation from the labels so far (one",
        "reading). The stream: truth uniform over K labels, prediction = truth 90% of the time.",
        "",
        "## Update cost and the whole suite",
        "",
        "| | " + " | ".join(f"K={k:,}" for k in ks) + " |",
        "|---|" + "---|" * len(ks),
        "| non-zero cells in the table | " + " | ".join(f"{results[k]['cells']:,}" for k in ks) + " |",
    ]

    def row(label, key, fmt="{:.2f}"):
        return f"| {label} | " + " | ".join(fmt.format(results[k][key]) for k in ks) + " |"

    lines.append(row("bare dict counting", "dict"))
    for key in [k for k in results[ks[0]] if k.startswith("update:")]:
        lines.append(row(f"streameval update ({key.split(':', 1)[1]})", key))
    lines.append(row("**streameval suite update+get (all metrics)**", "update+get:suite"))
    lines.append("| suite update+get / bare dict counting | " + " | ".join(
        f"{results[k]['update+get:suite'] / results[k]['dict']:.0f}x" for k in ks) + " |")
    lines += ["", "## update + get() per metric, against River and scikit-learn", "",
              "| metric | " + " | ".join(f"K={k:,}" for k in ks) + " | River / streameval at K="
              f"{ks[-2] if len(ks) > 1 else ks[0]:,} |",
              "|---|" + "---|" * (len(ks) + 1)]
    ref = ks[-2] if len(ks) > 1 else ks[0]
    for key in [k for k in results[ks[0]] if k.startswith("update+get:") and k != "update+get:suite"]:
        name = key.split(":", 1)[1]
        cells = " | ".join(f"{results[k][key]:.2f}" for k in ks)
        rkey = f"river:{name}"
        ratio = f"{results[ref][rkey] / results[ref][key]:,.0f}x" if rkey in results[ref] else ""
        lines.append(f"| {name} | {cells} | {ratio} |")
        if rkey in results[ks[0]]:
            lines.append(f"| ↳ River {name} | " + " | ".join(
                f"{results[k][rkey]:,.1f}" if rkey in results[k] else "not run (O(K²))"
                for k in ks) + " | |")
        skey = f"sklearn:{name}"
        if skey in results[ks[0]]:
            lines.append("| ↳ scikit-learn recompute | " + " | ".join(
                f"{results[k][skey]:,.0f}" for k in ks) + " | |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short run (fewer elements, small K)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "core.md"))
    args = ap.parse_args(argv)
    ks = [10, 100, 1000] if args.quick else [10, 100, 1000, 100_000]
    m = 1000 if args.quick else 20_000
    budget = 0.5 if args.quick else 3.0
    results = {}
    for k in ks:
        results[k] = bench_k(k, m, budget)
        print(f"K={k}: done", file=sys.stderr)
    command = "python benchmarks/bench_core.py" + (" --quick" if args.quick else "")
    text = render(results, m, command)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
