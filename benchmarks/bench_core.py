"""Cost per element of the core table and metrics, beside bare dict counting, River and scikit-learn.

One run measures, and writes to one Markdown page (``--out``, default ``docs/benchmarks/core.md``)
with a chart next to it (``img/<page name>.png``):

1. **Per element, K = 10, 1,000 and 100,000 clusters.** A stream whose truth is uniform over K
   labels and whose prediction is the truth 90% of the time (else a random label) is fed, untimed,
   until the table holds its steady state (max(20,000, 2K) elements); then the next M elements are
   timed (CPU time, best of two runs on fresh copies of the warm table): bare dict counting of the
   (true, pred) pairs (the floor any Python table pays); ``Contingency.update``; one O(1) metric
   (``AdjustedRand``) update + ``get()``; ``Evaluator()`` (every O(1) metric) update, and update +
   ``get()`` after every element; ``ELM()`` and ``BCubed()`` update (element-averaged F); River's
   ``AdjustedRand`` update alone and update + ``get()`` (time-boxed: its ``get()`` is O(K²)); then
   every metric's update + ``get()`` beside River and a scikit-learn recomputation.
2. **The degenerate baselines of the element-averaged F** (ELM and BCubed), per element from an empty
   table to 10³, 10⁴, 10⁵ and 10⁶ elements: everything in one predicted cluster (truth: documents of
   random lengths); all predicted singletons against one giant true cluster; the page-stream "one
   document" baseline (eight streams of documents of random lengths, each stream predicted as one
   document). A size that exceeds the time budget is stopped and reported as timed out (larger sizes
   are then not run).
3. **Instructions per element** from ``valgrind --tool=callgrind`` (stable on a loaded machine):
   each case runs in a fresh subprocess whose measured loop is the only code inside
   ``functools.reduce``, and only that function is collected (``--toggle-collect``); an empty loop's
   count is subtracted; also for ``ELM()`` on each degenerate baseline at 10⁴ and 10⁶ elements.
   Skipped when valgrind is absent.
4. **Memory**: resident bytes per non-zero cell (native allocations included: the RSS of a fresh
   subprocess before and after filling a table by ``update``), for 10⁶ cells over 10⁵ × 10⁵
   clusters, and for 10⁶ cells where every cell brings two new clusters.
5. **Bulk**: ``update_many`` against numpy's own unique-counting of the same integer arrays (one
   ``np.unique(..., return_counts=True)`` over the combined pair codes), 10⁷ elements in 10⁶ true
   clusters, each the best of two in one fresh subprocess (``--only-bulk`` runs just this).
6. **Density sweep of the element-averaged F**: tables of K true clusters with exactly c cells per
   row (c = 1, 5, 25, 60, 200; K = 10, 10³ and 10⁵; the columns then hold about c cells each), then a
   stream staying on those cells (``density_state``). Per element: ``ELM()`` and ``Evaluator()``
   update, the same followed by one reading at the end of the timed run (the F sums are settled
   lazily: the reading pays for every cluster the updates touched), and ``Evaluator()`` update +
   ``get()`` after every element; CPU µs as ratios to bare dict counting on a dict holding the same
   cells, and callgrind instructions per element, both from one fresh subprocess per (K, c)
   (``--only-density`` runs just this).

The targets in the tables are those of the native core's issue; the ratios are to bare dict
counting at the same K. ``--pure-python`` measures the pure-Python reference table
(:class:`streameval.reference.ReferenceContingency`, the package's fallback without its native
extension: the extension's import is made to fail, in the children too).

Run::

    python benchmarks/bench_core.py                          # full run, writes docs/benchmarks/core.md
    python benchmarks/bench_core.py --pure-python --out docs/benchmarks/core-python.md --skip detail density --callgrind-ks 10 1000
    python benchmarks/bench_core.py --quick --out /tmp/core.md   # smoke run, small sizes (~1 min)
    python benchmarks/bench_core.py --skip density   # the rest rerun; the page's density section kept
    python benchmarks/bench_core.py --only-density --out /tmp/density.md   # the density sweep only
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# --pure-python: streameval without its native extension (Contingency is then the reference table);
# the children inherit it through the environment
PURE = "--pure-python" in sys.argv[1:] or os.environ.get("STREAMEVAL_BENCH_PURE_PYTHON") == "1"
if PURE:
    os.environ["STREAMEVAL_BENCH_PURE_PYTHON"] = "1"
    sys.modules["streameval._native"] = None  # type: ignore[assignment]  # its import fails

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

# The headline rows: (key, label, target as a multiple of bare dict counting, where it applies)
HEADLINE = [
    ("update:table", "`Contingency.update`", 2, "≤ 2×"),
    ("update+get:one", "one O(1) metric (`AdjustedRand`) update + `get()`", 4, "≤ 4×"),
    ("update:suite", "`Evaluator()` update", 4, "≤ 4×, flat in K"),
    ("update+get:suite", "`Evaluator()` update + `get()` after every element", 15, "≤ 15×, flat in K"),
    ("get:suite", "↳ of which `get()` (the difference)", None, ""),
    ("update:ELM", "`ELM()` update (element-averaged F)", 4, "≤ 4× at K = 1,000"),
    ("update:BCubed", "`BCubed()` update (element-averaged F)", 4, "≤ 4× at K = 1,000"),
    ("river:update:AdjustedRand", "River `AdjustedRand` update", None, "(peer)"),
    ("river:AdjustedRand", "River `AdjustedRand` update + `get()`", None, "(peer)"),
]
BASELINES = {
    "one_cluster": "everything in one predicted cluster",
    "giant_true": "all predicted singletons, one giant true cluster",
    "one_document": "page streams, each predicted as one document",
}
CG_CASES = {
    "dict": "bare dict counting",
    "update": "`Contingency.update`",
    "suite": "`Evaluator()` update",
    "suite+get": "`Evaluator()` update + `get()`",
    "elm": "`ELM()` update",
}


# ---------------------------------------------------------------------------------- streams
def make_stream(k: int, n: int, seed: int = 0):
    rng = random.Random(seed)
    ts = [rng.randrange(k) for _ in range(n)]
    ps = [t if rng.random() < 0.9 else rng.randrange(k) for t in ts]
    return ts, ps


def warm_state(k: int, m: int):
    """(warm-up labels as arrays, the timed items) for K = ``k``."""
    warm_n = max(20_000, 2 * k)
    ts, ps = make_stream(k, warm_n + m, seed=k)
    return np.array(ts[:warm_n]), np.array(ps[:warm_n]), list(zip(ts[warm_n:], ps[warm_n:]))


def doc_lengths(rng: random.Random, total: int):
    """Document lengths (pages) summing to ``total``: 1 + exponential of mean 3, a long tail."""
    out = []
    left = total
    while left > 0:
        d = min(left, 1 + int(rng.expovariate(1 / 3)))
        out.append(d)
        left -= d
    return out


def degenerate_stream(kind: str, n: int):
    """The (true, pred) labels of one degenerate baseline of ``n`` elements, as a generator."""
    rng = random.Random(n)
    if kind == "giant_true":
        for i in range(n):
            yield 0, i
    elif kind == "one_cluster":
        for doc, length in enumerate(doc_lengths(rng, n)):
            for _ in range(length):
                yield doc, 0
    elif kind == "one_document":
        streams = 8
        doc = 0
        for s in range(streams):
            size = n // streams + (s < n % streams)
            for length in doc_lengths(rng, size):
                for _ in range(length):
                    yield doc, s
                doc += 1
    else:  # pragma: no cover
        raise ValueError(kind)


# ---------------------------------------------------------------------------------- timing
def cpu_us(fn, n: int, reps: int = 1) -> float:
    """Best CPU µs per element of ``fn()`` over ``reps`` runs, each processing ``n`` elements."""
    best = float("inf")
    for _ in range(reps):
        gc.collect()
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best / n * 1e6


def boxed_us(step, items, budget: float) -> float:
    """CPU µs per element of ``step(t, p)`` over ``items``, stopping after ``budget`` seconds.

    The clock is read after chunks of 1, 2, 4, ... 256 elements, so a slow step (River's O(K²)
    reading) stops after about the budget and a fast one pays almost nothing for the checks.
    """
    t0 = time.process_time()
    done, chunk = 0, 1
    while done < len(items):
        for t, p in items[done:done + chunk]:
            step(t, p)
        done = min(len(items), done + chunk)
        if time.process_time() - t0 > budget:
            break
        chunk = min(2 * chunk, 256)
    return (time.process_time() - t0) / done * 1e6


def bench_k(k: int, m: int, budget: float, detail: bool) -> dict:
    wt, wp, items = warm_state(k, m)
    warm = se.Contingency()
    warm.update_many(wt, wp)
    out = {"cells": warm.cells, "warm": len(wt)}

    def fresh_counts():
        counts: dict = {}
        for t, p in zip(wt.tolist(), wp.tolist()):
            counts[t, p] = counts.get((t, p), 0) + 1
        return counts

    def dict_run():
        counts = fresh_counts()
        get = counts.get
        t0 = time.process_time()
        for t, p in items:
            counts[t, p] = get((t, p), 0) + 1
        return time.process_time() - t0

    out["dict"] = min(dict_run() for _ in range(3)) / m * 1e6

    def run_update(make):
        best = float("inf")
        for _ in range(2):
            upd = make()
            gc.collect()
            t0 = time.process_time()
            for t, p in items:
                upd(t, p)
            best = min(best, time.process_time() - t0)
        return best / m * 1e6

    out["update:table"] = run_update(lambda: warm.copy().update)
    out["update:suite"] = run_update(lambda: se.Evaluator(table=warm.copy()).update)
    for cls in (se.ELM, se.BCubed):
        out[f"update:{cls.__name__}"] = run_update(
            lambda cls=cls: se.Evaluator([cls()], table=warm.copy()).update)

    def run_update_get(make):
        best = float("inf")
        for _ in range(2):
            upd, get = make()

            def step(t, p, upd=upd, get=get):
                upd(t, p)
                get()

            best = min(best, boxed_us(step, items, budget))
        return best

    def one():
        metric = se.AdjustedRand()
        se.Evaluator([metric], table=warm.copy())
        return metric.table.update, metric.get

    def suite():
        ev = se.Evaluator(table=warm.copy())
        return ev.update, ev.get

    out["update+get:one"] = run_update_get(one)
    out["update+get:suite"] = run_update_get(suite)
    out["get:suite"] = max(0.0, out["update+get:suite"] - out["update:suite"])

    try:
        import river.metrics as rm
    except ImportError:  # pragma: no cover
        rm = None
    if rm is not None:
        metric = rm.AdjustedRand()
        for t, p in zip(wt.tolist(), wp.tolist()):
            metric.update(t, p)
        out["river:update:AdjustedRand"] = cpu_us(
            lambda: [metric.update(t, p) for t, p in items], m)
    if detail:
        for metric in default_metrics():
            ev = se.Evaluator([metric], table=warm.copy())
            upd, get = ev.table.update, metric.get

            def step(t, p, upd=upd, get=get):
                upd(t, p)
                get()

            out[f"update+get:{metric.name}"] = boxed_us(step, items, budget)
    if rm is not None and k <= RIVER_MAX_K:
        for name in RIVER_PEERS if detail else ["AdjustedRand"]:
            metric = getattr(rm, name)()
            for t, p in zip(wt.tolist(), wp.tolist()):
                metric.update(t, p)

            def rstep(t, p, metric=metric):
                metric.update(t, p)
                metric.get()

            out[f"river:{name}"] = boxed_us(rstep, items, budget)
    if detail:
        try:
            import sklearn.metrics as skm
        except ImportError:  # pragma: no cover
            skm = None
        if skm is not None:
            for name, fname in SKLEARN_PEERS.items():
                f = getattr(skm, fname)
                out[f"sklearn:{name}"] = cpu_us(lambda f=f: f(wt, wp), 1, reps=2)
    return out


def bench_degenerate(sizes, budget: float) -> dict:
    """``{(baseline, metric): {size: µs per element, or None when timed out / not run}}``."""
    out = {}
    for kind in BASELINES:
        for cls in (se.ELM, se.BCubed):
            row = {}
            stop = False
            for n in sizes:
                if stop:
                    row[n] = None
                    continue
                pairs = list(degenerate_stream(kind, n))
                ts, ps = [t for t, _ in pairs], [p for _, p in pairs]
                del pairs
                metric = cls()
                upd = metric.update
                gc.collect()
                done = 0
                t0 = time.process_time()
                while done < n:
                    hi = min(n, done + 512)
                    for t, p in zip(ts[done:hi], ps[done:hi]):
                        upd(t, p)
                    done = hi
                    spent = time.process_time() - t0
                    if done < n and spent > budget:
                        break
                if done == n:
                    row[n] = spent / n * 1e6
                else:
                    row[n] = None
                    row[f"stopped:{n}"] = (done, spent)
                    stop = True
                del ts, ps, metric, upd
                print(f"  {kind} {cls.__name__} n={n:,}: "
                      + (f"{row[n]:.2f} µs/element" if row[n] is not None else
                         f"timed out after {done:,} elements ({spent:.0f} s)"), file=sys.stderr)
            out[kind, cls.__name__] = row
    return out


# ---------------------------------------------------------------------------------- density
DENSITY_CS = [1, 5, 25, 60, 200]
DENSITY_KS = [10, 1000, 100_000]
DENSITY_CASES = {
    "dict": "bare dict counting",
    "elm": "`ELM()` update",
    "elm+read": "`ELM()` update, one reading at the end",
    "elm+get": "`ELM()` update + `get()`",
    "suite": "`Evaluator()` update",
    "suite+read": "`Evaluator()` update, one reading at the end",
    "suite+get": "`Evaluator()` update + `get()`",
}
DENSITY_TARGETS = {"elm": 4, "elm+get": 10, "suite": 4, "suite+get": 10}


def density_state(k: int, c: int, m: int, seed: int = 0):
    """(warm true labels, warm pred labels, warm counts, timed items) of density ``c``.

    Row t holds exactly ``c`` cells: its diagonal column ``t`` with count 4c and ``c - 1`` other
    columns spread over the K_pred = max(K, c) predicted labels (distinct: random gaps of a
    cumulative sum), each with count 1 or 2; a column then holds about ``c`` cells. The timed
    elements pick a uniform row and its diagonal (75%) or one of its other cells: the table keeps
    its density. Every cell is put in by one weighted element.
    """
    rng = np.random.default_rng(seed + 1000 * c + k)
    kp = max(k, c)
    rows = np.arange(k, dtype=np.int64)
    if c > 1:
        gap = max(1, (kp - 1) // (c - 1))
        offsets = np.cumsum(rng.integers(1, gap + 1, (k, c - 1)), axis=1)
        others = (rows[:, None] + offsets) % kp
    else:
        others = np.zeros((k, 0), dtype=np.int64)
    wt = np.concatenate([rows, np.repeat(rows, c - 1)])
    wp = np.concatenate([rows % kp, others.ravel()])
    ww = np.concatenate([np.full(k, 4 * c), rng.integers(1, 3, k * (c - 1))])
    ts = rng.integers(0, k, m)
    pick = rng.integers(0, max(c - 1, 1), m)
    diag = (rng.random(m) < 0.75) | (c == 1)
    ps = np.where(diag, ts % kp, others[ts, pick] if c > 1 else 0)
    return wt, wp, ww, list(zip(ts.tolist(), ps.tolist()))


def child_density(k: int, c: int, m: int, mode: str) -> dict:
    """One (K, c) density case: ``mode`` "cpu" times every case (CPU µs per element, best of
    two); "callgrind" runs each case's loop once in ``functools.reduce`` (the only collected
    function; one dump per case, in the order of ``DENSITY_CASES``, then an empty loop)."""
    import functools

    wt, wp, ww, items = density_state(k, c, m)
    out: dict = {"k": k, "c": c, "m": m, "cells": int(len(wt))}
    last = items[-1]

    reps = 2 if mode == "cpu" else 1

    def timed(step):
        gc.collect()
        t0 = time.process_time()
        functools.reduce(step, items, None)
        return (time.process_time() - t0) / m * 1e6

    # bare dict counting, on a dict holding the same cells
    counts: dict = {}
    for t, p, w in zip(wt.tolist(), wp.tolist(), ww.tolist()):
        counts[t, p] = w
    get = counts.get

    def dict_step(acc, tp):
        t, p = tp
        counts[t, p] = get((t, p), 0) + 1

    out["dict"] = min(timed(dict_step) for _ in range(reps))
    counts.clear()  # its memory back before the tables are built

    # one table per metric object; each run starts settled (a reading outside the timed loop)
    for name, make in (("elm", se.ELM), ("suite", se.Evaluator)):
        obj = make()
        obj.table.update_many(wt, wp, ww)
        upd, read = obj.update, obj.get
        read()

        def plain(acc, tp, upd=upd):
            t, p = tp
            upd(t, p)

        def then_read(acc, tp, upd=upd, read=read):
            t, p = tp
            upd(t, p)
            if tp is last:
                read()

        def with_get(acc, tp, upd=upd, read=read):
            t, p = tp
            upd(t, p)
            read()

        runs = [(name, plain), (name + "+read", then_read), (name + "+get", with_get)]
        for case, step in runs:
            best = float("inf")
            for _ in range(reps):
                best = min(best, timed(step))
                read()
            out[case] = best
        del obj, upd, read
        gc.collect()

    def empty(acc, tp):
        pass

    if mode == "callgrind":
        functools.reduce(empty, items, None)
    return out


# Above this many cells a density case is not run under callgrind: filling the table and the dict
# under valgrind's emulation (~50× slower) takes a quarter of an hour at 6·10⁶ cells on a shared
# machine, and 2·10⁷ cells would take most of an hour.
DENSITY_CG_MAX_CELLS = 6_000_000


def bench_density(ks, cs, m: int, cg_m: int, callgrind: bool) -> dict:
    """``{(k, c): {"cpu": {case: µs}, "cg": {case: instructions per element}, "cells": n}}``."""
    out: dict = {}
    use_cg = callgrind and shutil.which("valgrind") is not None
    for k in ks:
        for c in cs:
            r = run_child(["density", str(k), str(c), str(m), "cpu"])
            row = {"cells": r["cells"], "cpu": {case: r[case] for case in DENSITY_CASES}}
            if use_cg and k * c <= DENSITY_CG_MAX_CELLS:
                with tempfile.TemporaryDirectory() as tmp:
                    f = Path(tmp) / "cg.out"
                    run_child(["density", str(k), str(c), str(cg_m), "callgrind"], prefix=[
                        "valgrind", "--tool=callgrind", "--collect-atstart=no",
                        "--toggle-collect=functools_reduce", "--dump-after=functools_reduce",
                        f"--callgrind-out-file={f}"])
                    dumps = sorted(Path(tmp).glob("cg.out.*"), key=lambda q: int(q.name.split(".")[-1]))
                    totals = [callgrind_total(d) for d in dumps if callgrind_total(d) > 0]
                    names = list(DENSITY_CASES) + ["empty"]
                    if len(totals) == len(names):
                        empty = totals[-1]
                        row["cg"] = {case: (tot - empty) / cg_m for case, tot in zip(names, totals)}
                        row["cg_m"] = cg_m
            out[k, c] = row
            print(f"  density K={k:,} c={c}: " + ", ".join(
                f"{case} {v:.2f} µs" for case, v in row["cpu"].items())
                + ("; " + ", ".join(f"{case} {v:,.0f}" for case, v in row.get("cg", {}).items())
                   if "cg" in row else ""), file=sys.stderr)
    return out


#: the heading of the density section, the page's last
DENSITY_HEADING = "## Density sweep: the element-averaged F at any number of cells per row"


def kept_density(page: Path) -> str:
    r"""The density section of an existing page (from :data:`DENSITY_HEADING` to its end, ``""``
    where there is none): a run with ``--skip density`` keeps it rather than dropping it.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "core.md"
    ...     _ = p.write_text("# Core\n\nold\n\n" + DENSITY_HEADING + "\n\nswept\n")
    ...     kept_density(p).splitlines()[-1], kept_density(Path(d) / "none.md")
    ('swept', '')
    """
    text = page.read_text() if page.is_file() else ""
    at = text.find("\n" + DENSITY_HEADING)
    return text[at + 1:] if at >= 0 else ""


def render_density(dens: dict, m: int) -> list:
    """The density section of the page."""
    if not dens:
        return []
    lines = [
        "",
        DENSITY_HEADING,
        "",
        f"Tables of K true clusters with exactly c cells per row (about c per column), then {m:,} "
        "timed elements staying on those cells (`density_state`: a row's diagonal 75% of the "
        "time). Each (K, c) in one fresh subprocess; CPU µs per element (best of two) with the "
        "ratio to bare dict counting on a dict holding the same cells, and callgrind instructions "
        "per element with the same ratio (only the measured loop collected, an empty loop "
        "subtracted). The F sums are settled lazily: \"update, one reading at the end\" charges "
        "that reading (which settles every cluster the run touched) to the run's elements.",
        "",
        "| K | cells per row | cells | case | CPU µs (× dict) | instructions (× dict) | target |",
        "|---:|---:|---:|---|---:|---:|---|",
    ]
    for (k, c), row in dens.items():
        cpu, cg = row["cpu"], row.get("cg")
        for case, label in DENSITY_CASES.items():
            v = cpu[case]
            cell_cpu = fmt_us(v) + ("" if case == "dict" else f" ({v / cpu['dict']:,.1f}×)")
            if cg:
                g = cg[case]
                cell_cg = f"{g:,.0f}" + ("" if case == "dict" else f" ({g / cg['dict']:,.1f}×)")
            else:
                cell_cg = "not run (fill under valgrind too slow)" if k * c > DENSITY_CG_MAX_CELLS else "—"
            target = DENSITY_TARGETS.get(case)
            lines.append(f"| {k:,} | {c} | {row['cells']:,} | {label} | {cell_cpu} | {cell_cg} | "
                         + (f"≤ {target}×" if target else "") + " |")
    return lines


# ---------------------------------------------------------------------------------- subprocesses
def child_env() -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_child(args: list, prefix: list = (), timeout: float = 3600) -> dict:
    cmd = list(prefix) + [sys.executable, str(Path(__file__).resolve()), "--child"] + args
    proc = subprocess.run(cmd, env=child_env(), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child_callgrind(k: int, case: str, m: int) -> dict:
    """The measured loop of one callgrind case: only ``functools.reduce`` is collected."""
    import functools

    if case.startswith("deg:"):  # a degenerate baseline of m elements into a fresh ELM()
        kind = case[4:]
        items = list(degenerate_stream(kind, m)) if kind != "empty" else [(0, 0)] * m
        if kind == "empty":
            def step(acc, tp):
                t, p = tp
        else:
            upd = se.ELM().update

            def step(acc, tp):
                t, p = tp
                upd(t, p)
        functools.reduce(step, items, None)
        return {"case": case}
    wt, wp, items = warm_state(k, m)
    t_list, p_list = wt.tolist(), wp.tolist()
    if case == "dict":
        counts: dict = {}
        for t, p in zip(t_list, p_list):
            counts[t, p] = counts.get((t, p), 0) + 1
        get = counts.get

        def step(acc, tp):
            t, p = tp
            counts[t, p] = get((t, p), 0) + 1
    elif case == "empty":
        def step(acc, tp):
            t, p = tp
    else:
        if case == "update":
            obj = se.Contingency()
            obj.update_many(wt, wp)
        elif case in ("suite", "suite+get"):
            obj = se.Evaluator()
            obj.update_many(wt, wp)
        elif case == "elm":
            obj = se.ELM()
            obj.table.update_many(wt, wp)
        else:  # pragma: no cover
            raise ValueError(case)
        upd = obj.update
        if case == "suite+get":
            read = obj.get
            read()

            def step(acc, tp):
                t, p = tp
                upd(t, p)
                read()
        else:
            def step(acc, tp):
                t, p = tp
                upd(t, p)
    functools.reduce(step, items, None)
    return {"case": case}


def callgrind_total(path: Path) -> int:
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no summary line in {path}")


def bench_callgrind(ks, m: int, cases=tuple(CG_CASES)) -> dict:
    """``{k: {case: instructions per element}}``; empty when valgrind is absent."""
    if shutil.which("valgrind") is None:
        return {}
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in ks:
            totals = {}
            for case in ["empty", *cases]:
                f = Path(tmp) / f"cg.{k}.{case}"
                run_child(["callgrind", str(k), case, str(m)], prefix=[
                    "valgrind", "--tool=callgrind", "--collect-atstart=no",
                    "--toggle-collect=functools_reduce", f"--callgrind-out-file={f}"])
                totals[case] = callgrind_total(f)
            if totals["empty"] == 0:  # the interpreter's symbols are stripped: cannot isolate
                print("callgrind: functools_reduce not visible, skipped", file=sys.stderr)
                return {}
            out[k] = {c: (totals[c] - totals["empty"]) / m for c in cases}
            print(f"  callgrind K={k:,}: " + ", ".join(f"{c} {v:,.0f}" for c, v in out[k].items()),
                  file=sys.stderr)
    return out


def bench_degenerate_callgrind(sizes) -> dict:
    """``{kind: {n: instructions per element}}`` of ``ELM()`` on each degenerate baseline."""
    if shutil.which("valgrind") is None:
        return {}
    out: dict = {kind: {} for kind in BASELINES}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            totals = {}
            for kind in ["empty", *BASELINES]:
                f = Path(tmp) / f"cg.deg.{n}.{kind}"
                run_child(["callgrind", "0", f"deg:{kind}", str(n)], prefix=[
                    "valgrind", "--tool=callgrind", "--collect-atstart=no",
                    "--toggle-collect=functools_reduce", f"--callgrind-out-file={f}"])
                totals[kind] = callgrind_total(f)
            for kind in BASELINES:
                out[kind][n] = (totals[kind] - totals["empty"]) / n
            print(f"  callgrind degenerate n={n:,}: done", file=sys.stderr)
    return out


def child_memory(kind: str, cells: int) -> dict:
    """Fill a table by ``update`` with ``cells`` distinct cells; RSS growth per cell."""
    gc.collect()
    before = rss_bytes()
    table = se.Contingency()
    upd = table.update
    if kind == "dense":  # 10 cells in every row and every column: cells/10 clusters a side
        k = cells // 10
        off = k // 10 + 1
        for i in range(cells):
            r = i // 10
            upd(r, (r + (i % 10) * off) % k)
    else:  # every cell a new true and a new predicted cluster
        for i in range(cells):
            upd(i, -1 - i)
    gc.collect()
    after = rss_bytes()
    assert table.cells == cells, (table.cells, cells)
    return {"cells": cells, "k_true": table.k_true, "k_pred": table.k_pred,
            "bytes_per_cell": (after - before) / cells}


def child_bulk(n: int, k: int) -> dict:
    """``update_many`` against numpy's unique-counting of the same integer arrays (CPU seconds)."""
    rng = np.random.default_rng(0)
    yt = rng.integers(0, k, n)
    yp = np.where(rng.random(n) < 0.9, yt, rng.integers(0, k, n))
    best_np = float("inf")
    for _ in range(2):
        t0 = time.process_time()
        code = yt * k + yp
        cells, counts = np.unique(code, return_counts=True)
        best_np = min(best_np, time.process_time() - t0)
    n_cells = len(cells)
    del code, cells, counts
    t_many = float("inf")
    for _ in range(2):  # best of two, as numpy's: a fresh table each time
        table = se.Contingency()
        gc.collect()
        t0 = time.process_time()
        table.update_many(yt, yp)
        t_many = min(t_many, time.process_time() - t0)
        assert table.cells == n_cells and table.n == n
        del table
    return {"n": n, "k": k, "cells": n_cells, "numpy_s": best_np, "update_many_s": t_many}


# ---------------------------------------------------------------------------------- report
def fmt_us(v) -> str:
    return "—" if v is None else (f"{v:,.2f}" if v < 100 else f"{v:,.0f}")


def render(res: dict, command: str, chart: str | None) -> str:
    per_k = res["per_k"]
    ks = list(per_k)
    m = res["m"]
    mach = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"numpy {np.__version__}, {platform.system()} {platform.release()}")
    lines = [
        "# Benchmarks: the core table and metrics"
        + (" (the pure-Python reference table)" if PURE else ""),
        "",
        f"Command: `{command}`  ",
        f"Machine: {mach}  ",
        f"Core: `{res['core']}`. Timed elements per K: {m:,} after a warm-up "
        "(time-boxed rows stop earlier). Figures are CPU µs per element, best of two runs "
        "(lower is better), with the ratio to bare dict counting at the same K; other processes on "
        "the machine are not controlled, so the instruction counts below are the stable measure.",
        "",
        "The stream: truth uniform over K labels, prediction = truth 90% of the time.",
        "",
        "## Per element, against bare dict counting",
        "",
        "| | " + " | ".join(f"K = {k:,}" for k in ks) + " | target |",
        "|---|" + "---:|" * len(ks) + "---|",
        "| non-zero cells in the table | " + " | ".join(f"{per_k[k]['cells']:,}" for k in ks)
        + " | |",
        "| cells per row (cells / K) | " + " | ".join(f"{per_k[k]['cells'] / k:,.1f}" for k in ks)
        + " | |",
        "| bare dict counting (µs) | " + " | ".join(fmt_us(per_k[k]["dict"]) for k in ks) + " | |",
    ]
    for key, label, _, target in HEADLINE:
        if not any(key in per_k[k] for k in ks):
            continue
        cells = []
        for k in ks:
            v = per_k[k].get(key)
            if v is None:
                cells.append("not run (O(K²) reading)" if key.startswith("river:") else "—")
            else:
                cells.append(f"{fmt_us(v)} ({v / per_k[k]['dict']:,.1f}×)")
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {target} |")
    cg = res.get("callgrind") or {}
    if cg:
        cks = list(cg)
        lines += [
            "",
            "## Instructions per element (callgrind)",
            "",
            "`valgrind --tool=callgrind`, one fresh subprocess per case; only the measured loop is "
            "collected (`--toggle-collect=functools_reduce`) and an empty loop's count is "
            f"subtracted; {res['cg_m']:,} elements per case after the same warm-up as above.",
            "",
            "| | " + " | ".join(f"K = {k:,}" for k in cks) + " |",
            "|---|" + "---:|" * len(cks),
        ]
        for case, label in CG_CASES.items():
            if case not in cg[cks[0]]:
                continue
            lines.append(f"| {label} | " + " | ".join(
                f"{cg[k][case]:,.0f}" + (f" ({cg[k][case] / cg[k]['dict']:,.1f}×)"
                                         if case != "dict" and "dict" in cg[k] else "")
                for k in cks) + " |")
    else:
        lines += ["", "Instructions per element: not measured (skipped, or valgrind not found).",
                  ""]
    deg = res["degenerate"]
    sizes = res["deg_sizes"]
    lines += [
        "",
        "## Degenerate baselines of the element-averaged F",
        "",
        f"µs per element from an empty table to n elements (one metric alone); target: flat in n. "
        f"A size is stopped after {res['deg_budget']:.0f} s of CPU time (larger sizes are then not "
        "run). Documents have 1 + Exp(mean 3) pages; the page-stream baseline has eight streams.",
        "",
        "| baseline | F of | " + " | ".join(f"n = {n:,}" for n in sizes) + " |",
        "|---|---|" + "---:|" * len(sizes),
    ]
    for (kind, metric), row in deg.items():
        cells = []
        for n in sizes:
            if row.get(n) is not None:
                cells.append(fmt_us(row[n]))
            elif f"stopped:{n}" in row:
                done, spent = row[f"stopped:{n}"]
                cells.append(f"timed out ({done:,} elements in {spent:.0f} s)")
            else:
                cells.append("not run")
        lines.append(f"| {BASELINES[kind]} | {metric} | " + " | ".join(cells) + " |")
    dcg = res.get("deg_callgrind") or {}
    if dcg:
        ns = sorted(next(iter(dcg.values())))
        lines += [
            "",
            "Instructions per element of `ELM()` on the same baselines (callgrind, as above: an "
            "empty loop's count subtracted): the work per element, which a loaded machine does not "
            "change; the CPU times above also pay for the cache misses of a table that outgrew it.",
            "",
            "| baseline | " + " | ".join(f"n = {n:,}" for n in ns) + f" | n = {ns[-1]:,} / n = {ns[0]:,} |",
            "|---|" + "---:|" * (len(ns) + 1),
        ]
        for kind, row in dcg.items():
            lines.append(f"| {BASELINES[kind]} | " + " | ".join(f"{row[n]:,.0f}" for n in ns)
                         + f" | {row[ns[-1]] / row[ns[0]]:.2f}× |")
    mem = res.get("memory") or {}
    if mem:
        lines += [
            "",
            "## Memory per non-zero cell",
            "",
            "Resident set growth of a fresh process while a table is filled by `update` (native "
            "allocations included), divided by the number of cells.",
            "",
            "| table | cells | clusters (true × pred) | bytes per cell | target |",
            "|---|---:|---:|---:|---|",
        ]
        for kind, label, target in (("dense", "ten cells per cluster", "≤ 100"),
                                    ("sparse", "every cell brings two new clusters", "≤ 250")):
            if kind in mem:
                r = mem[kind]
                lines.append(f"| {label} | {r['cells']:,} | {r['k_true']:,} × {r['k_pred']:,} | "
                             f"{r['bytes_per_cell']:,.0f} | {target} |")
    bulk = res.get("bulk")
    if bulk:
        lines += [
            "",
            "## Bulk: `update_many` against numpy's unique-counting",
            "",
            f"{bulk['n']:,} integer elements in {bulk['k']:,} true clusters "
            f"({bulk['cells']:,} cells, {bulk['cells'] / bulk['k']:.1f} per row); numpy: "
            "`np.unique(t * K + p, return_counts=True)` and `update_many` into a fresh table, each "
            "the best of two; CPU seconds (not run under callgrind: the instruction counts above "
            "are per element of `update`).",
            "",
            "| numpy unique-counting (s) | `update_many` (s) | ratio | target |",
            "|---:|---:|---:|---|",
            f"| {bulk['numpy_s']:.3f} | {bulk['update_many_s']:.3f} | "
            f"{bulk['update_many_s'] / bulk['numpy_s']:.1f}× | ≤ 2× |",
        ]
    lines += render_density(res.get("density") or {}, res.get("density_m", 0))
    # the chart (img/<page>.png) is shown by the docs build above the page's first section
    detail = [key for key in per_k[ks[0]] if key.startswith("update+get:")
              and key not in ("update+get:one", "update+get:suite")]
    if detail:
        ref = 1000 if 1000 in ks else ks[-1]
        lines += [
            "",
            "## update + get() per metric, against River and scikit-learn",
            "",
            "µs per element, reading the metric after every element (time-boxed). scikit-learn's "
            "row is the cost of one recomputation from the labels so far (one reading). CPU time "
            "only: these rows are not run under callgrind (the callgrind section above counts "
            "`Evaluator()` update + `get()`, every one of these metrics at once).",
            "",
            "| metric | " + " | ".join(f"K = {k:,}" for k in ks) + f" | River / streameval at K = {ref:,} |",
            "|---|" + "---:|" * (len(ks) + 1),
        ]
        for key in detail:
            name = key.split(":", 1)[1]
            rkey, skey = f"river:{name}", f"sklearn:{name}"
            ratio = (f"{per_k[ref][rkey] / per_k[ref][key]:,.0f}×"
                     if rkey in per_k[ref] and key in per_k[ref] else "")
            lines.append(f"| {name} | " + " | ".join(fmt_us(per_k[k].get(key)) for k in ks)
                         + f" | {ratio} |")
            if rkey in per_k[ks[0]]:
                lines.append(f"| ↳ River {name} | " + " | ".join(
                    fmt_us(per_k[k][rkey]) if rkey in per_k[k] else "not run (O(K²))"
                    for k in ks) + " | |")
            if skey in per_k[ks[0]]:
                lines.append("| ↳ scikit-learn recompute | " + " | ".join(
                    fmt_us(per_k[k].get(skey)) for k in ks) + " | |")
    return "\n".join(lines) + "\n"


def plot(res: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        return False
    per_k = res["per_k"]
    ks = list(per_k)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    series = [("dict", "bare dict counting")] + [(key, label.replace("`", ""))
                                                 for key, label, _, _ in HEADLINE
                                                 if not key.startswith("get:")]
    for key, label in series:
        xs = [k for k in ks if per_k[k].get(key) is not None]
        if xs:
            ax1.plot(xs, [per_k[k][key] for k in xs], marker="o", label=label)
    ax1.set(xscale="log", yscale="log", xlabel="clusters K", ylabel="CPU µs per element",
            title="Per element vs K")
    ax1.legend(fontsize=7)
    sizes = res["deg_sizes"]
    for (kind, metric), row in res["degenerate"].items():
        xs = [n for n in sizes if row.get(n) is not None]
        if xs:
            ax2.plot(xs, [row[n] for n in xs], marker="o", label=f"{metric}: {BASELINES[kind]}")
    ax2.set(xscale="log", yscale="log", xlabel="stream length n (elements)",
            ylabel="CPU µs per element", title="Degenerate baselines (element-averaged F)")
    ax2.legend(fontsize=7)
    fig.suptitle(f"streameval core ({res['core']})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def core_name() -> str:
    cls = type(se.Contingency())
    return f"{cls.__module__}.{cls.__name__}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: small sizes, short budgets")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "core.md"),
                    help="the Markdown page to write (the chart goes to img/<name>.png beside it)")
    ap.add_argument("--budget", type=float, help="seconds per time-boxed measurement")
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["detail", "degenerate", "callgrind", "memory", "bulk", "density"],
                    help="sections to leave out")
    ap.add_argument("--only-bulk", action="store_true",
                    help="run only the bulk section and print it (no page written)")
    ap.add_argument("--only-density", action="store_true",
                    help="run only the density sweep; write it to --out")
    ap.add_argument("--density-ks", type=int, nargs="+", help="K values of the density sweep")
    ap.add_argument("--density-cs", type=int, nargs="+", help="cells per row of the density sweep")
    ap.add_argument("--callgrind-ks", type=int, nargs="+",
                    help="the K values of the callgrind section (default: those of the run)")
    ap.add_argument("--pure-python", action="store_true",
                    help="measure the pure-Python reference table (no native extension)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        kind, *rest = args.child
        if kind == "callgrind":
            r = child_callgrind(int(rest[0]), rest[1], int(rest[2]))
        elif kind == "memory":
            r = child_memory(rest[0], int(rest[1]))
        elif kind == "bulk":
            r = child_bulk(int(rest[0]), int(rest[1]))
        elif kind == "density":
            r = child_density(int(rest[0]), int(rest[1]), int(rest[2]), rest[3])
        else:  # pragma: no cover
            raise SystemExit(f"unknown child {kind}")
        print(json.dumps(r))
        return
    quick = args.quick
    if args.only_bulk:
        n, k = (100_000, 10_000) if quick else (10_000_000, 1_000_000)
        b = run_child(["bulk", str(n), str(k)])
        print(f"update_many of {b['n']:,} integer elements in {b['k']:,} true clusters "
              f"({b['cells']:,} cells), best of two, CPU seconds: numpy unique-counting "
              f"{b['numpy_s']:.3f}, update_many {b['update_many_s']:.3f} "
              f"({b['update_many_s'] / b['numpy_s']:.1f}x; target <= 2x)")
        return
    dks = args.density_ks or ([100] if quick else DENSITY_KS)
    dcs = args.density_cs or ([1, 40] if quick else DENSITY_CS)
    dm, dcg_m = (200, 100) if quick else (20_000, 2000)
    if args.only_density:
        dens = bench_density(dks, dcs, dm, dcg_m, callgrind="callgrind" not in args.skip)
        command = "python benchmarks/bench_core.py --only-density" + (" --quick" if quick else "")
        if args.density_ks:
            command += " --density-ks " + " ".join(map(str, args.density_ks))
        if args.density_cs:
            command += " --density-cs " + " ".join(map(str, args.density_cs))
        text = "\n".join(["# Benchmarks: density sweep", "", f"Command: `{command}`  "]
                         + render_density(dens, dm)) + "\n"
        Path(args.out).write_text(text)
        print(text)
        return
    ks = [10, 100] if quick else [10, 1000, 100_000]
    m = 1000 if quick else 20_000
    budget = args.budget or (0.2 if quick else 3.0)
    res = {"m": m, "core": core_name(), "per_k": {}}
    for k in ks:
        res["per_k"][k] = bench_k(k, m, budget, detail="detail" not in args.skip)
        print(f"K={k:,}: done", file=sys.stderr)
    res["deg_sizes"] = [1000, 10_000] if quick else [1000, 10_000, 100_000, 1_000_000]
    res["deg_budget"] = 1.0 if quick else 20.0
    res["degenerate"] = ({} if "degenerate" in args.skip
                         else bench_degenerate(res["deg_sizes"], res["deg_budget"]))
    res["cg_m"] = 200 if quick else 5000
    if "callgrind" not in args.skip:
        res["callgrind"] = bench_callgrind(
            args.callgrind_ks or ([10] if quick else ks), res["cg_m"],
            ("dict", "update") if quick else tuple(CG_CASES))
    if "callgrind" not in args.skip and "degenerate" not in args.skip:
        # the pure-Python table is quadratic on these baselines (see their timings): small sizes
        res["deg_callgrind"] = bench_degenerate_callgrind(
            [300, 3000] if PURE else [1000, 10_000] if quick else [10_000, 1_000_000])
    if "memory" not in args.skip:
        cells = 10_000 if quick else 1_000_000
        res["memory"] = {kind: run_child(["memory", kind, str(cells)]) for kind in ("dense", "sparse")}
        print("memory: done", file=sys.stderr)
    if "bulk" not in args.skip:
        n, k = (100_000, 10_000) if quick else (10_000_000, 1_000_000)
        res["bulk"] = run_child(["bulk", str(n), str(k)])
        print("bulk: done", file=sys.stderr)
    if "density" not in args.skip:
        res["density"] = bench_density(dks, dcs, dm, dcg_m,
                                       callgrind="callgrind" not in args.skip and not quick)
        res["density_m"] = dm
    out = Path(args.out)
    chart = out.parent / "img" / f"{out.stem}.png"
    has_chart = plot(res, chart)
    command = ("python benchmarks/bench_core.py" + (" --quick" if quick else "")
               + (" --pure-python" if PURE else ""))
    if out.resolve() != (ROOT / "docs" / "benchmarks" / "core.md").resolve():
        try:
            command += f" --out {out.resolve().relative_to(ROOT)}"
        except ValueError:
            command += f" --out {out}"
    if args.skip:
        command += " --skip " + " ".join(args.skip)
    if args.callgrind_ks:
        command += " --callgrind-ks " + " ".join(map(str, args.callgrind_ks))
    if args.budget:
        command += f" --budget {args.budget:g}"
    text = render(res, command, f"img/{chart.name}" if has_chart else None)
    if "density" in args.skip and (kept := kept_density(out)):
        text = text.rstrip("\n") + "\n\n" + kept
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
