"""The command line against reading the file columnar: ``streameval score`` and ``watch``, CPU per
row and instructions per row, with pandas + scikit-learn beside them, in one run.

Generates files of (true, predicted) labels in a temporary directory (1,000 true clusters, 80% of
rows predicted right, the rest scattered over 1,200 predicted labels: about 185 cells per true
cluster, 1 cell per row, at 10^6 rows), of N and 2N rows, as CSV and as JSON lines (the same
rows), then runs each command in a fresh process on both:

- ``streameval score FILE --true true --pred pred --format json``: every O(1) metric (20);
- the columnar floor: a script that reads the file with ``pyarrow.csv.read_csv`` (JSON lines:
  ``pyarrow.json.read_json``) and hands the two columns to ``Evaluator.update_many``, then ``get``
  (the same metrics): what ``score`` does without validating rows or naming bad ones;
- ``streameval watch`` on the finished file (the default ``--every auto``, a window of 1,000
  rows, drop detection over blocks of 100 rows), ``--every 10000`` (the previous default), and
  variants without window and drops, with a single report, with four metrics;
- the judged streams (``make_density_csv``: K = 10, 10^3, 10^5 true clusters, 5 and 60 cells per
  row): ``score``, ``watch`` and ``watch --every 10000`` on each;
- the same without pyarrow (the process cannot import it): ``score`` and ``watch`` against a
  floor of pandas' C ``read_csv`` + ``update_many`` + ``get``;
- pandas ``read_csv`` + scikit-learn's clustering metrics that exist there (on N rows only).

CPU time is user + system from ``getrusage``. Each command runs on files of 0.5N, N, 1.5N and 2N
rows, ``--repeat`` times each in rounds; the cost per row is the slope of the least-squares line
through each size's least CPU time, with its standard error from the residuals (start-up and
imports are the intercept, checked against the same command on a 1,000-row file). With valgrind
installed, instructions per row are the difference of whole-process counts
(``valgrind --tool=callgrind``) on ``--cg-rows`` and twice as many rows divided by
``--cg-rows``: stable on a loaded machine, where CPU times are not.

    python benchmarks/bench_cli.py                        # 10^6 rows: cli.md and cli-watch.md
    python benchmarks/bench_cli.py --rows 100000 --cg-rows 0 --out -   # a quick run, to stdout
    python benchmarks/bench_cli.py --watch-only --repeat 2 --cg-rows 20000   # cli-watch.md only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

PEER = r"""
import json, sys, time
t_start = time.perf_counter()
import pandas as pd
from sklearn import metrics as m
t0 = time.perf_counter()
df = pd.read_csv(sys.argv[1])
t1 = time.perf_counter()
yt, yp = df["true"].to_numpy(), df["pred"].to_numpy()
h, c, v = m.homogeneity_completeness_v_measure(yt, yp)
out = {
    "Rand": m.rand_score(yt, yp),
    "AdjustedRand": m.adjusted_rand_score(yt, yp),
    "MutualInfo": m.mutual_info_score(yt, yp),
    "NormalizedMutualInfo": m.normalized_mutual_info_score(yt, yp),
    "Homogeneity": h, "Completeness": c, "VBeta": v,
    "FowlkesMallows": m.fowlkes_mallows_score(yt, yp),
}
t2 = time.perf_counter()
print(json.dumps({"values": out, "imports": t0 - t_start, "read": t1 - t0, "metrics": t2 - t1}))
"""


def make_csv(path: Path, rows: int, seed: int = 0, chunk: int = 1_000_000,
             jsonl: Path | None = None) -> None:
    """Write ``rows`` lines ``true,pred`` (integer labels) with a header; and the same rows as
    JSON lines ``{"true": t, "pred": p}`` to ``jsonl``, if given."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as f, (open(jsonl, "w") if jsonl else open(os.devnull, "w")) as g:
        f.write("true,pred\n")
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            t = rng.integers(0, 1000, n)
            p = np.where(rng.random(n) < 0.8, t, rng.integers(0, 1200, n))
            pairs = list(zip(t.tolist(), p.tolist()))
            f.write("\n".join(f"{a},{b}" for a, b in pairs))
            f.write("\n")
            if jsonl:
                g.write("".join(f'{{"true": {a}, "pred": {b}}}\n' for a, b in pairs))


DENSITY_KS = (10, 1_000, 100_000)
DENSITY_CS = (5, 60)


def make_density_csv(path: Path, rows: int, k: int, c: int, seed: int = 0) -> None:
    """Write ``rows`` lines ``true,pred``: K true clusters, each with ``c`` possible predicted
    labels (its own, ``t mod K_pred``, and ``c - 1`` others spread over K_pred = max(K, c)
    labels, as ``bench_core.density_state`` builds its tables); each row a uniform true cluster,
    predicted its own label 75% of the time, else one of its ``c - 1`` others. A true cluster
    holds up to ``c`` cells: all of them once it has a few times ``c`` rows."""
    rng = np.random.default_rng(seed + 1000 * c + k)
    kp = max(k, c)
    own = np.arange(k, dtype=np.int64)
    others = np.zeros((k, 1), np.int64)
    if c > 1:
        gap = max(1, (kp - 1) // (c - 1))
        others = (own[:, None] + np.cumsum(rng.integers(1, gap + 1, (k, c - 1)), axis=1)) % kp
    t = rng.integers(0, k, rows)
    diag = (rng.random(rows) < 0.75) | (c == 1)
    p = np.where(diag, t % kp, others[t, rng.integers(0, max(c - 1, 1), rows)])
    with open(path, "w") as f:
        f.write("true,pred\n")
        for start in range(0, rows, 1_000_000):
            cut = slice(start, start + 1_000_000)
            f.write("\n".join(f"{a},{b}" for a, b in zip(t[cut].tolist(), p[cut].tolist())))
            f.write("\n")


def table_shape(path: Path) -> tuple:
    """``(cells, true clusters)`` of a ``true,pred`` CSV."""
    import pyarrow.csv as pcsv

    table = pcsv.read_csv(path)
    t, p = (table.column(c).to_numpy().astype(np.int64) for c in ("true", "pred"))
    return len(np.unique(t * (int(p.max()) + 1) + p)), len(np.unique(t))


def timed(cmd: list) -> tuple:
    """``(wall seconds, CPU seconds (user + system), stdout)`` of one child process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, r.stdout


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import pandas
    import sklearn

    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}, numpy {np.__version__}, pandas "
            f"{pandas.__version__}, scikit-learn {sklearn.__version__}")


COLUMNAR = r"""
import sys
from streameval import Evaluator
from streameval.metrics import resolve
names = sys.argv[2:] or None
if sys.argv[1].endswith(".jsonl"):
    import pyarrow.json as pjson
    table = pjson.read_json(sys.argv[1])
else:
    import pyarrow.csv as pcsv
    table = pcsv.read_csv(sys.argv[1])
ev = Evaluator([cls() for cls in resolve(names)] if names else None)
ev.update_many(table.column("true").to_numpy(), table.column("pred").to_numpy())
ev.get()
"""

PANDAS_FLOOR = r"""
import sys
sys.modules["pyarrow"] = None  # as the commands run without it
import pandas as pd
from streameval import Evaluator
df = pd.read_csv(sys.argv[1], engine="c")
ev = Evaluator()
ev.update_many(df["true"].to_numpy(), df["pred"].to_numpy())
ev.get()
"""

NO_PYARROW = r"""
import sys
sys.modules["pyarrow"] = None  # import pyarrow fails: the reader without it
from streameval.cli import main
sys.exit(main(sys.argv[1:]))
"""

FOUR = ["--metrics", "ARI", "NMI", "VI", "Purity"]
WATCH_PAGE = ("score", "watch", "watch --window 0 --drop-block 0",
              "watch --window 0 --drop-block 0 --every 100000000", "watch --every 10000",
              "watch --format json", "watch --window 0 --format json",
              "score --metrics ARI NMI VI Purity", "watch --metrics ARI NMI VI Purity",
              "score, JSON lines", "watch, JSON lines", "score, no pyarrow", "watch, no pyarrow",
              "score, JSON lines, no pyarrow", "watch, JSON lines, no pyarrow")
SCORE_PAGE = ("columnar floor", "score", "columnar floor, ARI NMI VI Purity",
              "score --metrics ARI NMI VI Purity", "columnar floor, JSON lines",
              "score, JSON lines", "pandas floor, no pyarrow", "score, no pyarrow",
              "score, JSON lines, no pyarrow")
COLS = ["--true", "true", "--pred", "pred"]


def commands(ours: list) -> dict:
    """``{name: (argv before the file, argv after it, "csv" or "jsonl")}`` of the commands timed
    per row."""
    watch = [*ours, "watch"]
    bare = [sys.executable, "-c", NO_PYARROW]
    return {
        "score": ([*ours, "score"], [*COLS, "--format", "json"], "csv"),
        "columnar floor": ([sys.executable, "-c", COLUMNAR], [], "csv"),
        "watch": (watch, [*COLS, "--interval", "0"], "csv"),
        "watch --every 10000": (watch, [*COLS, "--interval", "0", "--every", "10000"], "csv"),
        "watch --window 0 --drop-block 0": (watch, [*COLS, "--interval", "0", "--window", "0",
                                                    "--drop-block", "0"], "csv"),
        "watch --window 0 --drop-block 0 --every 100000000": (
            watch, [*COLS, "--interval", "0", "--window", "0", "--drop-block", "0",
                    "--every", "100000000"], "csv"),
        "score --metrics ARI NMI VI Purity": ([*ours, "score"], [*COLS, "--format", "json", *FOUR],
                                              "csv"),
        "columnar floor, ARI NMI VI Purity": ([sys.executable, "-c", COLUMNAR], FOUR[1:], "csv"),
        "watch --metrics ARI NMI VI Purity": (watch, [*COLS, "--interval", "0", *FOUR], "csv"),
        "watch --format json": (watch, [*COLS, "--interval", "0", "--format", "json"], "csv"),
        "watch --window 0 --format json": (watch, [*COLS, "--interval", "0", "--window", "0",
                                                   "--format", "json"], "csv"),
        "score, JSON lines": ([*ours, "score"], [*COLS, "--format", "json"], "jsonl"),
        "columnar floor, JSON lines": ([sys.executable, "-c", COLUMNAR], [], "jsonl"),
        "watch, JSON lines": (watch, [*COLS, "--interval", "0"], "jsonl"),
        "score, no pyarrow": ([*bare, "score"], [*COLS, "--format", "json"], "csv"),
        "pandas floor, no pyarrow": ([sys.executable, "-c", PANDAS_FLOOR], [], "csv"),
        "watch, no pyarrow": ([*bare, "watch"], [*COLS, "--interval", "0"], "csv"),
        "score, JSON lines, no pyarrow": ([*bare, "score"], [*COLS, "--format", "json"], "jsonl"),
        "watch, JSON lines, no pyarrow": ([*bare, "watch"], [*COLS, "--interval", "0"], "jsonl"),
    }


SIZES = (0.5, 1.0, 1.5, 2.0)  # the files of the CPU fit, in units of --rows
START_ROWS = 1_000  # the file that measures a command's start-up, against the fit's intercept


def fit_sizes(n: int) -> list:
    """The row counts of the CPU fit: :data:`SIZES` times ``n``."""
    return sorted({max(1, round(f * n)) for f in SIZES})


class Cost(float):
    """A cost per row (the least-squares slope of cost against rows), with ``se`` its standard
    error (NaN from two sizes), ``start`` the fit's intercept (start-up and imports) and
    ``tiny`` the command's cost on a :data:`START_ROWS`-row file (NaN if not run)."""

    se: float
    start: float
    tiny: float


def line_fit(points: dict) -> tuple:
    """``(slope, its standard error, intercept)`` of the least-squares line ``y = a + b x``
    through ``{x: y}``: ``b = Σ(x - x̄)(y - ȳ) / Σ(x - x̄)²``, ``a = ȳ - b x̄``, the error
    ``sqrt(Σ residual² / (n - 2) / Σ(x - x̄)²)`` (NaN with two points: the difference of the
    two divided by their distance)."""
    x = np.array(list(points), dtype=float)
    y = np.array(list(points.values()), dtype=float)
    dx = x - x.mean()
    sxx = float(dx @ dx)
    b = float(dx @ (y - y.mean())) / sxx
    a = float(y.mean() - b * x.mean())
    se = (float(np.sqrt(np.sum((y - a - b * x) ** 2) / (len(x) - 2) / sxx)) if len(x) > 2
          else float("nan"))
    return b, se, a


def ratio_se(num: Cost, den: Cost) -> float:
    """The standard error of ``num / den`` from the two fits' (independent) errors."""
    return abs(num / den) * float(np.hypot(num.se / num, den.se / den))


ONCE = "--every 10000"  # commands run once per file: their cost per row is many times start-up's


def runs(name: str, repeat: int) -> int:
    """How many times command ``name`` runs on each file: ``repeat``, or once for the commands
    of :data:`ONCE` (a report every 10,000 rows: 1.5–9 µs per row, so 0.75 s or more on the
    smallest file, against a few hundredths of a second of start-up's spread)."""
    return 1 if ONCE in name else repeat


def per_row(files: dict, rows: int, cmds: dict, repeat: int, measure, workers: int = 1,
            start: dict | None = None) -> tuple:
    """``({name: Cost per row}, {name: whole-process cost on rows})`` of ``measure(argv)`` on
    ``files`` (``{format: {rows: path}}``): each command on each size ``repeat`` times, the
    repetitions in rounds (every command on every size, then again: a change of load touches
    every command alike), each size's least cost (the load only adds to a process's CPU time),
    the cost per row the slope of the least-squares line through them (:func:`line_fit`).
    (:func:`runs`: once for the slowest.)
    ``start`` (``{format: path}`` of :data:`START_ROWS`-row files): each command run there too,
    its least cost beside the fit's intercept. ``workers`` processes at once: for instruction
    counts, which other processes do not change."""
    from concurrent.futures import ThreadPoolExecutor

    sizes = sorted({n for by_size in files.values() for n in by_size})
    jobs = [(name, n, [*head, str(files[fmt][n]), *tail]) for r in range(repeat) for n in sizes
            for name, (head, tail, fmt) in cmds.items() if r < runs(name, repeat)]
    if start:
        jobs += [(name, 0, [*head, str(start[fmt]), *tail]) for r in range(repeat)
                 for name, (head, tail, fmt) in cmds.items() if r < runs(name, repeat)]
    with ThreadPoolExecutor(workers) as pool:
        done = list(pool.map(lambda job: measure(job[2]), jobs))
    results: dict = {}
    for (name, n, _), value in zip(jobs, done):
        got = results.setdefault(name, {})
        got[n] = min(got.get(n, value), value)
    whole, each = {}, {}
    for name in cmds:
        got = results[name]
        tiny = got.pop(0, float("nan"))
        slope, se, intercept = line_fit(got)
        cost = Cost(slope)
        cost.se, cost.start, cost.tiny = se, intercept, tiny
        each[name], whole[name] = cost, got[rows]
        print(f"{name}: " + ", ".join(f"{v:.4g} on {k:,}" for k, v in got.items())
              + f" -> {slope * 1e6:.4g} ± {se * 1e6:.2g} per 10^6 rows, intercept "
              f"{intercept:.4g}, on {START_ROWS:,} rows {tiny:.4g}", file=sys.stderr)
    return each, whole


def start_paragraph(costs: dict) -> str:
    """The fits' intercepts (start-up and imports, in CPU seconds) against each command's CPU on
    a :data:`START_ROWS`-row file: their ranges and the largest difference (the commands of
    :data:`ONCE` left out: a report every 10,000 rows costs more as the table grows, so their
    cost is not a line and its intercept no start-up)."""
    pairs = {k: (c.start, c.tiny) for k, c in costs.items() if c.tiny == c.tiny and ONCE not in k}
    if not pairs:
        return ""
    worst = max(pairs, key=lambda k: abs(pairs[k][0] - pairs[k][1]))
    a, t = pairs[worst]
    starts = [v[0] for v in pairs.values()]
    tinies = [v[1] for v in pairs.values()]
    return (f"Start-up: the fits' intercepts are {min(starts):.2f}–{max(starts):.2f} s CPU, "
            f"the same commands on a {START_ROWS:,}-row file {min(tinies):.2f}–{max(tinies):.2f} "
            f"s; the largest difference {a - t:+.2f} s (`{worst}`: {a:.2f} s against {t:.2f} s)."
            + (f" `watch {ONCE}` is left out: its reports cost more as the table grows, so its "
               "cost is not a line in the rows and the line's intercept is no start-up."
               if any(ONCE in k for k in costs) else ""))


def instructions(cmd: list) -> float:
    """Instructions of one process (every thread) under callgrind. OpenBLAS is held to one
    thread: numpy's import otherwise starts a pool whose spin-waits callgrind counts, a few
    million instructions that change from run to run (the same ``watch`` on 20,000 rows: 5·10⁶
    apart over two runs with the pool, 1·10⁶ over three without). No warm-up run is needed: the
    commands run under callgrind only after their CPU runs, so their bytecode is cached."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        # the same dict layouts in every run; no BLAS thread pool
        env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"}
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                           capture_output=True, text=True, check=False, env=env)
        if r.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed under callgrind:\n{r.stderr[-2000:]}")
        for line in out.read_text(errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                return float(line.split()[1])
    raise SystemExit("no callgrind summary")


def report_cost(path: Path, repeat: int = 5) -> tuple:
    """``(cells, {clusters touched: CPU ms})``: one report's catch-up (a bulk add of 10,000 rows
    and a ``get`` of every metric) on an :class:`~streameval.Evaluator` holding the rows of
    ``path``, the new rows drawn over 10, 100 or all 1,000 true clusters (80% predicted right):
    what a report costs against the clusters its rows touch. In this process (the median of
    ``repeat`` reports each)."""
    import pyarrow.csv as pcsv

    from streameval import Evaluator

    table = pcsv.read_csv(path)
    t, p = (table.column(c).to_numpy().astype(np.int64) for c in ("true", "pred"))
    ev = Evaluator()
    ev.update_many(t, p)
    ev.get()
    cells = ev.table.cells
    rng = np.random.default_rng(1)
    out = {}
    for touched in (10, 100, 1000):
        times = []
        for _ in range(repeat):
            tt = rng.integers(0, touched, 10_000)
            pp = np.where(rng.random(10_000) < 0.8, tt, rng.integers(0, touched, 10_000))
            c0 = time.process_time()
            ev.update_many(tt, pp)
            ev.get()
            times.append(time.process_time() - c0)
        out[touched] = 1e3 * float(np.median(times))
    return cells, out


def bench_density(n: int, m: int, repeat: int, ours: list, tmp: Path, ks=DENSITY_KS,
                  cs=DENSITY_CS) -> list:
    """The judged streams (:func:`make_density_csv`): ``score`` and the default ``watch`` (and
    ``watch --every 10000``, the old default, CPU only) per row, CPU on ``n`` and ``2n`` rows,
    instructions on ``m`` and ``2m`` (``m`` 0: none); the reports the default ``watch`` printed
    on ``n`` rows."""
    out, cg_files, cg_cmds = [], {}, {}
    for k in ks:
        for c in cs:
            files = {"csv": {r: tmp / f"k{k}c{c}_{r}.csv" for r in fit_sizes(n)}}
            start = {"csv": tmp / f"k{k}c{c}_start.csv"}
            for r, path in [*files["csv"].items(), (START_ROWS, start["csv"])]:
                make_density_csv(path, r, k, c)
            cells, kt = table_shape(files["csv"][n])
            cmds = {
                "score": ([*ours, "score"], [*COLS, "--format", "json"], "csv"),
                "watch": ([*ours, "watch"], [*COLS, "--interval", "0"], "csv"),
                "watch --every 10000": ([*ours, "watch"], [*COLS, "--interval", "0", "--every",
                                                         "10000"], "csv"),
            }
            cpu, _ = per_row(files, n, cmds, repeat, lambda cmd: timed(cmd)[1], start=start)
            _, _, text = timed([*ours, "watch", str(files["csv"][n]), *COLS, "--interval", "0"])
            reports = [int(line.split()[1]) for line in text.splitlines()
                       if line.startswith("rows ")]
            for path in [*files["csv"].values(), start["csv"]]:
                path.unlink()
            out.append({"k": k, "c": c, "cells": cells, "kt": kt, "cpu": cpu, "reports": reports})
            if m and shutil.which("valgrind"):
                key = f"k{k}c{c}"
                cg_files[key] = {r: tmp / f"cg_{key}_{r}.csv" for r in (m, 2 * m)}
                for r, path in cg_files[key].items():
                    make_density_csv(path, r, k, c)
                for x in ("score", "watch"):
                    head, tail, _ = cmds[x]
                    cg_cmds[f"{key} {x}"] = (head, tail, key)
    if cg_cmds:  # every callgrind run at once, three at a time
        cg, _ = per_row(cg_files, m, cg_cmds, 1, instructions, workers=3)
        for row in out:
            key = f"k{row['k']}c{row['c']}"
            row["cg"] = {x: cg[f"{key} {x}"] for x in ("score", "watch")}
    return out


GOAL = 1.5  # the default watch's CPU within this many times score's on a finished file


def goal_paragraph(rows: list, load: float) -> str:
    """What the run's judged streams say of the goal (the default ``watch`` within
    :data:`GOAL` × ``score``'s CPU): met (the ratio more than two standard errors below it),
    within the error of it (less than two away), or missed (more than two above), per stream,
    from the run's own figures, and the range of the instruction ratios."""
    def k_of(r):
        return {10: "10", 1000: "10³", 100_000: "10⁵"}.get(r["k"], f"{r['k']:,}")

    groups: dict = {"met": [], "within two standard errors of it": [], "missed": [],
                    "not measured": []}
    for r in rows:
        w, sc = r["cpu"]["watch"], r["cpu"]["score"]
        if min(w, sc) <= 0:
            groups["not measured"].append(f"K = {k_of(r)}, c = {r['c']}")
            continue
        ratio, err = w / sc, ratio_se(w, sc)
        verdict = ("met" if ratio + 2 * err < GOAL else "missed" if ratio - 2 * err > GOAL
                   else "within two standard errors of it")
        groups[verdict].append(f"K = {k_of(r)}, c = {r['c']} ({ratio:.2f}× ± {err:.2f})")
    said = [f"{verdict} on CPU at " + "; ".join(where) if verdict == "met" else
            f"{verdict} at " + "; ".join(where) for verdict, where in groups.items() if where]
    text = (f"The goal (the default `watch` within {GOAL}× of `score`'s CPU on a finished file) "
            f"in this run (load {load:.1f}): " + "; ".join(said) + ".")
    if groups["not measured"]:
        text += (" Not measured: a fitted cost per row was not positive (the machine's load "
                 "changed during the run; rerun).")
    cg = [r["cg"]["watch"] / r["cg"]["score"] for r in rows if r.get("cg")]
    if cg:
        text += (f" Instructions: {min(cg):.2f}–{max(cg):.2f}× `score`'s (small differences "
                 "of whole-process counts: they move by hundreds of instructions per row from "
                 "run to run).")
    return text + (" What is left beyond `score` on every stream is drop detection's block "
                   "sums (`src/block_sums.rs` through `block_means`), the reports and the "
                   "hand-over between the reader thread and the main thread.")


def render_density(rows: list, n: int, m: int, load: float) -> list:
    """The density section of the watch page (with :func:`goal_paragraph`)."""
    cg = any("cg" in r for r in rows)
    head = ("| K | c | cells per row | cells | `score` µs/row | `watch` µs/row | ratio | "
            "`watch --every 10000` µs/row | ratio |")
    rule = "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    if cg:
        head += " `score` instructions/row | `watch` instructions/row | ratio |"
        rule += "---:|---:|---:|"
    lines = [
        "## The judged streams: K = 10, 10³, 10⁵ true clusters, 5 and 60 cells per row", "",
        f"Files of {sizes_text(n)} rows (`benchmarks/bench_cli.py`, `make_density_csv`): K "
        "true clusters, each with c possible predicted labels (its own and c − 1 others spread "
        "over max(K, c) labels); each row a uniform true cluster, predicted its own label 75% of "
        "the time, else one of the others. \"Cells per row\" is the cells of the table on "
        f"{n:,} rows per true cluster (at K = 10⁵ a cluster has only about 10 rows, so it holds "
        "fewer than c cells). CPU per row and instructions per row as above (CPU: the fit's "
        f"slope ± its standard error; instructions: callgrind on {m:,} and {2 * m:,} rows, the "
        "difference); `watch` is the default "
        "(`--interval 0`), `watch --every 10000` the previous default's cadence.", "",
        head, rule]
    for r in rows:
        cpu = r["cpu"]
        line = (f"| {r['k']:,} | {r['c']} | {r['cells'] / r['kt']:.1f} | {r['cells']:,} | "
                f"{pm(cpu['score'])} | {pm(cpu['watch'])} | {times(cpu['watch'], cpu['score'])} | "
                f"{pm(cpu['watch --every 10000'])} | "
                f"{times(cpu['watch --every 10000'], cpu['score'])} |")
        if cg:
            g = r.get("cg")
            line += (f" {g['score']:,.0f} | {g['watch']:,.0f} | {g['watch'] / g['score']:.2f}× |"
                     if g else " | | |")
        lines.append(line)
    lines += ["", goal_paragraph(rows, load),
              "", start_paragraph({f"K = {r['k']:,}, c = {r['c']}: {name}": cost
                                   for r in rows for name, cost in r["cpu"].items()})]
    lines += ["", f"The rows at which the default `watch` reported on {n:,} rows (then the final "
              "report at the end):", ""]
    for r in rows:
        shown = ", ".join(f"{x:,}" for x in r["reports"]) or "none before the final report"
        lines.append(f"- K = {r['k']:,}, c = {r['c']} ({r['cells']:,} cells): {shown}")
    return [*lines, ""]


def sizes_text(n: int) -> str:
    """``500,000, 1,000,000, 1,500,000 and 2,000,000``: the fit's file sizes."""
    sizes = [f"{k:,}" for k in fit_sizes(n)]
    return ", ".join(sizes[:-1]) + " and " + sizes[-1]


def pm(cost: Cost) -> str:
    """A cost per row in µs with its standard error: ``0.191 ± 0.004``."""
    return (f"{cost * 1e6:.3f}" if cost.se != cost.se
            else f"{cost * 1e6:.3f} ± {cost.se * 1e6:.3f}")


def times(num: Cost, den: Cost) -> str:
    """``num / den`` with its standard error: ``1.64× ± 0.05``."""
    err = ratio_se(num, den)
    return f"{num / den:.2f}×" if err != err else f"{num / den:.2f}× ± {err:.2f}"


def page_parts(args, n, m, load, cells, per_cluster, size_mb, json_mb, cpu, cg) -> tuple:
    """The heading, the stream's description and the table rows shared by both pages."""
    flags = (f" --density-rows {args.density_rows}" if args.density_rows != 1_000_000 else "")
    flags += " --watch-only" if args.watch_only else ""
    flags += f" --repeat {args.repeat}" if args.repeat != 1 else ""
    head = (f"Command: `python benchmarks/bench_cli.py --rows {n} --cg-rows {m}{flags}` (each "
            f"file {args.repeat} times, the least CPU time of each). Machine: {machine()}; load average {load:.1f} when the run started "
            "(other jobs share the machine: compare the rows of one run, not runs; the "
            "instruction counts are the stable figures).")
    stream = (f"The stream: files of {sizes_text(n)} rows (integer labels; 1,000 true "
              "clusters, 80% of rows predicted right, the rest over 1,200 predicted labels: "
              f"{cells:,} cells, {per_cluster:.0f} cells per row of the table, i.e. per true "
              "cluster), as CSV "
              f"(`true,pred`, {size_mb:.0f} MB for {n:,} rows) and as JSON lines "
              f"(`{{\"true\": t, \"pred\": p}}`, {json_mb:.0f} MB). Each command runs in a fresh "
              f"process on each file, {args.repeat} times (`watch --every 10000`, 1.5–9 µs per "
              "row, once), in rounds (every command on every "
              "file, then again: a change of load touches every command alike); the cost per row "
              "is the slope of the least-squares line through each file's least CPU time (the "
              "load only adds time), ± its standard error from the line's residuals, and the "
              "line's intercept is the start-up and imports, which so cancel out (checked against "
              f"the command on a {START_ROWS:,}-row file). \"No pyarrow\": the same command in "
              "a process where `import pyarrow` fails.")

    def row(name, base, label=None):
        label = label or f"`streameval {name}`"
        line = (f"| {label} | {pm(cpu[name])} | "
                f"{'1.00×' if name == base else times(cpu[name], cpu[base])} |")
        if cg:
            line += (f" {cg[name]:,.0f} | {cg[name] / cg[base]:.2f}× |"
                     if name in cg and base in cg else " | |")
        return line

    cols = ("| command | CPU µs per row | ratio | instructions per row | ratio |" if cg
            else "| command | CPU µs per row | ratio |")
    rule = "|---|---:|---:|" + ("---:|---:|" if cg else "")
    cg_note = (f" Instructions: callgrind on {m:,} and {2 * m:,} rows, their difference "
               f"divided by {m:,}; a row without them was not run under callgrind (each run "
               "is a whole process emulated, so the run keeps to the rows compared most)."
               if cg else "")
    return head, stream, row, cols, rule, cg_note


def watch_page_text(args, n, m, load, head, stream, row, cols, rule, cg_note, cost_cells, costs,
                    density, starts: str = "") -> str:
    """The watch page (docs/benchmarks/cli-watch.md)."""
    watch_page = "\n".join([
        "# `streameval watch` against `streameval score`: CPU time per row", "", head, "",
        stream + cg_note, "", cols, rule,
        row("score", "score"),
        *[row(k, "score") for k in ("watch", "watch --every 10000",
                                    "watch --window 0 --drop-block 0",
                                    "watch --window 0 --drop-block 0 --every 100000000")],
        *[row(k, "score") for k in ("watch --format json", "watch --window 0 --format json")],
        row("score --metrics ARI NMI VI Purity", "score --metrics ARI NMI VI Purity"),
        row("watch --metrics ARI NMI VI Purity", "score --metrics ARI NMI VI Purity"),
        row("score, JSON lines", "score, JSON lines", "`streameval score FILE.jsonl`"),
        row("watch, JSON lines", "score, JSON lines", "`streameval watch FILE.jsonl`"),
        row("score, no pyarrow", "score, no pyarrow", "`streameval score`, no pyarrow"),
        row("watch, no pyarrow", "score, no pyarrow", "`streameval watch`, no pyarrow"),
        row("score, JSON lines, no pyarrow", "score, JSON lines, no pyarrow",
            "`streameval score FILE.jsonl`, no pyarrow"),
        row("watch, JSON lines, no pyarrow", "score, JSON lines, no pyarrow",
            "`streameval watch FILE.jsonl`, no pyarrow"),
        "", starts, "", *render_density(density, args.density_rows, m, load),
        "Each `watch` is against the `score` of the same file and metrics. `watch` (a regular "
        "file, not followed) reads the file as `score` does, a block at a time, and hands the "
        "blocks of label codes to the main thread with the block's bytes: a row's line and byte "
        "offset (for checkpoints) are found only where `watch` records one, at each look and "
        "at the end of each hand-over (`streameval.blocks.Positions`, a native scan of the "
        "newlines from the last row found before it, eight bytes at a time, `src/lines.rs`): no "
        "Python object per row. What "
        "it does beyond `score`: drop detection on every block of 100 rows, fed the codes every "
        "10,000 rows (`streameval.detect.block_means`: each block table's exact F sum and its "
        "mean in one native call for all the blocks, `src/block_sums.rs`, the twin of the numpy "
        "`block_stats`; the same values, to the bit, as a table per block, so the same alarms "
        "at the same rows), their block values taken by the detector in one loop a look "
        "(`Cusum.update_many`); and the reports. At a report the all-time table catches up by "
        "one `update_many` of the codes of the rows since the last one: it is keyed by the "
        "codes, as `score`'s table is (the cells counted natively, no Python object per label "
        "or cell); the codes become labels only where labels are shown or saved (what broke, "
        "`--top`, and the checkpoint, whose table is written as the table of the labels "
        "writes itself). The window of the last 1,000 rows (keyed by the labels) is rebuilt "
        "from its codes, every metric is read on both, and what broke is refreshed when JSON "
        "lines or the Prometheus endpoint show it (`--format json`). What remains beyond "
        "`score`: the drop detection's block sums (about 0.02–0.04 µs per row in one process, "
        "`block_means` over the codes), the reports, and the hand-over between the reader "
        "thread and the main thread.", "",
        "The default cadence is `--every auto` (`streameval/cli/cadence.py`): it looks every "
        "10,000 rows and reports when the rows since its last report reach 100,000 plus 16 per "
        "cell the table held then, or when a drop was flagged since (at the first look after "
        "it); the last report is always at the end of the input. A report costs about a "
        "millisecond of its own (the window rebuilt, 2 × 21 metrics read, a line written) plus "
        "the all-time catch-up, which re-settles the element-averaged F terms (ELM, BCubed) of "
        "every cluster the new rows touch and of every cell of those clusters, up to the whole "
        "table. Measured in one process on an `Evaluator` holding the "
        f"{n:,} rows of the smaller file of the first stream ({cost_cells:,} cells), one "
        "catch-up of 10,000 rows and `get` costs "
        + ", ".join(f"{ms:.2f} ms when the rows touch {k:,} true clusters"
                    for k, ms in costs.items())
        + ": up to a few tenths of a µs per cell of the table, against a tenth to a half of a "
        "µs to read a row. The rule keeps both parts a small share of reading the rows between "
        "two reports. `watch --every 10000` is the previous default: a report every 10,000 rows "
        "whatever the table, at the cost shown beside it. Which rows get a report follows from "
        "the rows alone (the rows of each judged stream are listed above); `--interval T` "
        "reports (default every 5 seconds, off in these runs) come on top.", "",
        "Reading the two columns: the CPU figures are per row fitted over files of "
        f"{sizes_text(n)} rows, on a machine "
        "shared with other jobs (the rows of one run compare); the instruction counts are per "
        f"row at {m:,} rows, where the table is small and the default `watch` reports only at "
        "the end, and being small differences of whole-process counts they move by hundreds "
        "of instructions from run to run.", "",
        "Before this run, three costs `watch` has beyond `score` were cut: the table's count "
        "of a bulk add (`count_pairs`) sorted each bucket of keys by a digit of 2¹¹ values, "
        "its counters zeroed and copied per bucket, so `watch`'s catch-ups of 100,000–180,000 "
        "rows cost 2.6× their share of `score`'s one add (now a digit of about as many values "
        "as the bucket has keys); a block's positions were found a line at a time and a "
        "question behind the last rescanned the block from its start (1.46× the file's bytes "
        "scanned; now eight bytes at a time from the last row found before it); and the reader "
        "counted a block's lines twice. Callgrind on 1,000,000 rows of K = 10³, c = 5: `watch` "
        "805·10⁶ instructions more than `score` before, 456·10⁶ after.", "",
        "Before the cost per row was fitted over four file sizes, it was the difference of two "
        "runs, on 1,000,000 and 2,000,000 rows, each the best of 2: start-up (about 2.6·10⁹ "
        "instructions, half a second or more) is most of each run at 0.1–0.2 µs per row, and "
        "the difference was fragile (`score`'s two runs once 0.03 s apart; once the wrong way "
        "round). A rerun of that page on a quiet machine after the block sums change below "
        "gave instruction ratios of 1.06–1.51× but the default `watch` 3.17×, 1.50×, 1.25×, "
        "0.83×, 1.04×, 1.14× `score`'s CPU on the judged streams.", "",
        "Before the block sums' code tables held each code's stamp and index side by side and "
        "the kernel skipped the sums drop detection does not read (an earlier run of this "
        "page, load 8.3): on the judged streams, K = 10, c = 5 to K = 10⁵, c = 60 in the "
        "table's order, the default `watch` cost 1.20×, 1.34×, 1.64×, 1.13×, 1.46×, 1.50× "
        "`score`'s CPU and 1.24×, 1.64×, 1.42×, 1.50×, 1.09×, 1.09× its instructions; "
        "`block_means` over 20,000 rows of those streams in blocks of 100 took about 390 "
        "instructions per row at K = 10³ and 10⁵ (200–220 at K = 10), and about 195 (150 at "
        "K = 10) after.", "",
        "Before the coded all-time table and the detector's loop (an earlier run of this "
        "page, load 9.1): on the first stream `score` 0.440 µs per row, `watch` 0.447 (1.02×; "
        "2,310 instructions per row, 1.27×); on the judged streams, K = 10, c = 5 to K = 10⁵, "
        "c = 60 in the table's order, the default `watch` cost 1.44×, 1.42×, 1.74×, 2.02×, "
        "1.44×, 1.78× `score`'s CPU and 1.66×, 1.03×, 1.27×, 1.28×, 1.15×, 1.14× its "
        "instructions.", "",
        "Before the native block sums and the positions found when asked (an earlier run of "
        "this page, load 9.7): on the first stream `score` 0.256 µs per row, `watch` 0.240 "
        "(0.94×; 2,649 instructions per row, 1.50×); on the judged streams, K = 10, c = 5 to "
        "K = 10⁵, c = 60 in the table's order, the default `watch` cost 6.35×, 3.25×, 2.05×, "
        "1.79×, 1.31×, 1.80× `score`'s CPU and 1.60×, 1.43×, 1.48×, 1.72×, 1.18×, 1.17× its "
        "instructions.", "",
        "Before `--every auto` (an earlier run of this page, the first stream, load 11.0): "
        "`score` 0.275 µs per row, `watch` (then a report every 10,000 rows) 7.562 (27.46×; "
        "4,124 instructions per row, 2.34×), `watch --window 0 --drop-block 0 --every "
        "100000000` 0.233 (0.84×; 1,895 instructions, 1.07×), `watch --metrics ARI NMI VI "
        "Purity` 0.509 against 0.062 (8.23×).", "",
        "Before that reader and catch-up (an earlier run of this page, the same stream): "
        "`score` 0.363 µs per row, `watch` 8.014 (22.06×; 45,394 instructions per row, 9.10×), "
        "`watch --window 0 --drop-block 0 --every 100000000` 2.328 (6.41×; 18,210 instructions, "
        "3.65×), `watch --metrics ARI NMI VI Purity` 2.739 against `score`'s 0.205 (13.35×)."
        " After this run, `watch` takes its rows' positions from the newlines the parser "
        "found (no second scan of a block) and joins the codes drop detection reads once per "
        "look, for the catch-up too: callgrind of the whole process on the bench's 40,000-row"
        " files (`OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind python -m streameval watch"
        " FILE --true true --pred pred --interval 0`, start-up cached), `watch` 2,691.6·10⁶ →"
        " 2,690.2·10⁶ instructions at K = 10, c = 5 (about 34 fewer per row) and 2,713.4·10⁶ "
        "→ 2,710.5·10⁶ at K = 10³, c = 5 (about 71 fewer), `score` within 0.7·10⁶ of its own "
        "before.", "",
        "On 2026-12-05, before this run, drop detection's block sums (`src/block_sums.rs`) count a"
        " row in fewer steps: when the codes' cells are few (true times predicted codes at most "
        "2¹⁶) a row's cell is found by its two codes directly and its row's and column's indices "
        "are looked up once per cell; otherwise a row's three lookups run in a loop of their own "
        "with the tables' stamps held in registers; the cells' grid is stamped per block and kept"
        ' for the thread (it was a 100 × 100 grid allocated and filled per call, checked against '
        "the cell list at each row), and the codes' range check and the tables' sizes are one "
        'bitwise or per array (a chained scan and two maxima). The same sums to the bit (the '
        'differential test against the numpy reference; a Rust test of the same rows under few '
        "and spread-out codes), the same output. Callgrind of the whole process on the bench's "
        '20,000- and 40,000-row files (`OPENBLAS_NUM_THREADS=1 PYTHONHASHSEED=0 valgrind '
        '--tool=callgrind python -m streameval watch FILE --true true --pred pred --interval 0`, '
        'bytecode cached; the 40,000-row count less the 20,000-row one, over 20,000): the block '
        "sums' functions 136 → 72 instructions per row at K = 10, c = 5, 139 → 76 at K = 10, c = "
        '60, 179 → 133 at K = 10³, c = 5; the whole `watch` 1,208 → 1,126, 1,177 → 1,131 and '
        '1,360 → 1,387 per row (`score`, whose code did not change, 966, 988, 1,158): beside the '
        'block sums, whole-process differences move by about ±50 per row from run to run (the '
        'Python and thread hand-over counts). The 1.53× instructions at K = 10³, c = 5 in the '
        "run before was not the code: held to one OpenBLAS thread, the same `watch` costs 1.17× "
        "`score`'s instructions per row there (1,360 against 1,158) before this change; numpy's "
        'OpenBLAS thread pool adds spin-waits that callgrind counts (`watch` on 20,000 rows: '
        '2,684.6·10⁶ and 2,679.6·10⁶ instructions in two runs with the pool, 2,671.4·10⁶ to '
        "2,672.4·10⁶ in three without), so the page's callgrind runs now hold OpenBLAS to one "
        "thread. CPU (load 5.4–8.0; each file's least CPU time of 5 runs, builds alternating, the"
        " slope between 500,000 and 2,000,000 rows): `block_means` over these streams' 40,000-row"
        ' files 12.0–12.9 → 9.1–9.8 ns per row in one process (the least of three alternating '
        'runs, load 7.0); the whole `watch` 0.106 → 0.111, 0.125 → 0.127, 0.141 → 0.151 µs per '
        "row against `score`'s 0.085–0.131, within this measurement's noise (the block sums are "
        "about a tenth of `watch`'s CPU per row at K = 10).",
        ""])
    return watch_page


def write_watch_page(args, n, m, load, files, size_mb, json_mb, cells, per_cluster, cpu, cg,
                     cost_cells, costs, density) -> None:
    """Only the watch page (``--watch-only``), to standard output with ``--out -``."""
    parts = page_parts(args, n, m, load, cells, per_cluster, size_mb, json_mb, cpu, cg)
    page = watch_page_text(args, n, m, load, *parts, cost_cells, costs, density,
                           start_paragraph({k: cpu[k] for k in WATCH_PAGE}))
    if args.out == "-":
        print(page)
    else:
        path = ROOT / "docs" / "benchmarks" / "cli-watch.md"
        path.write_text(page)
        print(f"wrote {path}", file=sys.stderr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="N (default 1,000,000)")
    ap.add_argument("--cg-rows", type=int, default=100_000,
                    help="N of the callgrind runs (default 100,000; 0: none)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; the best is reported")
    ap.add_argument("--density-rows", type=int, default=1_000_000,
                    help="rows of the judged streams' smaller files (default 1,000,000; 0: none)")
    ap.add_argument("--watch-only", action="store_true",
                    help="only what the watch page shows (cli-watch.md; cli.md is left alone)")
    ap.add_argument("--out", default=None,
                    help="'-': both pages to standard output (default: docs/benchmarks/cli.md "
                    "and cli-watch.md)")
    args = ap.parse_args(argv)
    script = Path(sys.executable).parent / "streameval"
    ours = [str(script)] if script.exists() else [sys.executable, "-m", "streameval"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    n, m = args.rows, args.cg_rows
    cmds = commands(ours)
    if args.watch_only:  # what the watch page shows
        cmds = {k: v for k, v in cmds.items() if k in WATCH_PAGE}
    with tempfile.TemporaryDirectory() as tmp:
        files = {fmt: {k: Path(tmp) / f"rows{k}.{fmt}" for k in fit_sizes(n)}
                 for fmt in ("csv", "jsonl")}
        start = {fmt: Path(tmp) / f"start.{fmt}" for fmt in ("csv", "jsonl")}
        for k in fit_sizes(n):
            make_csv(files["csv"][k], k, jsonl=files["jsonl"][k])
        make_csv(start["csv"], START_ROWS, jsonl=start["jsonl"])
        size_mb = files["csv"][n].stat().st_size / 1e6
        json_mb = files["jsonl"][n].stat().st_size / 1e6
        import pyarrow.csv as pcsv

        table = pcsv.read_csv(files["csv"][n])
        cells = len(set(zip(table.column("true").to_pylist(), table.column("pred").to_pylist())))
        per_cluster = cells / len(set(table.column("true").to_pylist()))
        cpu, whole = per_row(files, n, cmds, args.repeat, lambda cmd: timed(cmd)[1],
                             start=start)
        _, _, out = timed([*ours, "score", str(files["csv"][n]), *COLS, "--format", "json"])
        ours_values = json.loads(out)
        for fmt in ("jsonl",):  # every reader gives the same values
            _, _, again = timed([*ours, "score", str(files[fmt][n]), *COLS, "--format", "json"])
            assert json.loads(again) == ours_values, fmt
        cost_cells, costs = report_cost(files["csv"][n])
        if not args.watch_only:
            peer = min((timed([sys.executable, "-c", PEER, str(files["csv"][n])])
                        for _ in range(args.repeat)), key=lambda r: r[1])
            p = json.loads(peer[2])
        cg: dict = {}
        if m and shutil.which("valgrind"):
            small = {fmt: {k: Path(tmp) / f"cg{k}.{fmt}" for k in (m, 2 * m)}
                     for fmt in ("csv", "jsonl")}
            for k in (m, 2 * m):
                make_csv(small["csv"][k], k, jsonl=small["jsonl"][k])
            picked = {k: cmds[k] for k in (
                "score", "columnar floor", "watch", "watch --every 10000",
                "watch --window 0 --drop-block 0",
                "watch --window 0 --drop-block 0 --every 100000000", "score, JSON lines",
                "columnar floor, JSON lines", "watch, JSON lines", "score, no pyarrow",
                "pandas floor, no pyarrow", "watch, no pyarrow", "score, JSON lines, no pyarrow")
                if k in cmds}
            cg, _ = per_row(small, m, picked, 1, instructions, workers=3)
        density = (bench_density(args.density_rows, m, args.repeat, ours, Path(tmp))
                   if args.density_rows else [])
    if args.watch_only:
        write_watch_page(args, n, m, load, files, size_mb, json_mb, cells, per_cluster, cpu, cg,
                         cost_cells, costs, density)
        return 0
    diff = max(abs(ours_values[k] - v) for k, v in p["values"].items())
    head, stream, row, cols, rule, cg_note = page_parts(args, n, m, load, cells, per_cluster,
                                                        size_mb, json_mb, cpu, cg)
    floor = "`pyarrow.csv.read_csv` + `Evaluator.update_many` + `get` (the floor)"
    score_page = "\n".join([
        "# `streameval score` against reading the file columnar", "", head, "", stream + cg_note,
        "", cols, rule,
        row("columnar floor", "columnar floor", floor),
        row("score", "columnar floor", "`streameval score FILE --true true --pred pred "
            "--format json`"),
        row("columnar floor, ARI NMI VI Purity", "columnar floor, ARI NMI VI Purity",
            "the floor, 4 metrics (ARI NMI VI Purity)"),
        row("score --metrics ARI NMI VI Purity", "columnar floor, ARI NMI VI Purity"),
        row("columnar floor, JSON lines", "columnar floor, JSON lines",
            "`pyarrow.json.read_json` + `update_many` + `get` (the JSON-lines floor)"),
        row("score, JSON lines", "columnar floor, JSON lines", "`streameval score FILE.jsonl`"),
        row("pandas floor, no pyarrow", "pandas floor, no pyarrow",
            "no pyarrow: pandas `read_csv` (C engine) + `update_many` + `get`"),
        row("score, no pyarrow", "pandas floor, no pyarrow", "`streameval score`, no pyarrow"),
        row("score, JSON lines, no pyarrow", "pandas floor, no pyarrow",
            "`streameval score FILE.jsonl`, no pyarrow"),
        row("score, no pyarrow", "columnar floor",
            "`streameval score`, no pyarrow, against the pyarrow floor"),
        row("score, JSON lines, no pyarrow", "columnar floor, JSON lines",
            "`streameval score FILE.jsonl`, no pyarrow, against the JSON-lines pyarrow floor"),
        "", "Ratios are against the floor with the same metrics and format (without pyarrow: "
        "against pandas reading the CSV). Whole processes on "
        f"{n:,} rows (start-up and imports included): `score` {whole['score']:.2f} s CPU, the "
        f"floor {whole['columnar floor']:.2f} s; pandas `read_csv` + the 8 scikit-learn metrics "
        f"that exist there {peer[1]:.2f} s CPU (imports {p['imports']:.2f} s wall, `read_csv` "
        f"{p['read']:.2f} s, metrics {p['metrics']:.2f} s: scikit-learn rebuilds the contingency "
        f"matrix in each metric call). Largest difference between the values `score` and "
        f"scikit-learn both compute: {diff:.1e}; `score` gives the same values, to the bit, "
        "from the CSV and from the JSON lines.", "",
        start_paragraph({k: cpu[k] for k in SCORE_PAGE}), "",
        "`score` reads the file 4 MiB at a time (`streameval.blocks`): a block whose bytes hold "
        "nothing the row-by-row reader treats specially (no NUL or lone carriage return, no "
        "overlong line, valid UTF-8; in a CSV no quote; in JSON lines one object per line and no "
        "`\\u` escape) is parsed in C by pyarrow (`pyarrow.csv`, `pyarrow.json`) and validated "
        "in whole columns (no empty or null label, one scalar type per label column, weights "
        "positive integers in range, the total under the bound); its labels become dense integer "
        "codes (one dictionary lookup per distinct label per block), and the codes go into the "
        "table by `update_many` a few million rows at a time. Any other block is read row by "
        "row, which names a bad row by its line, as before; tests drive both readers over random "
        "bytes (CSV) and random lines (JSON) and compare rows, label types, errors and "
        "positions. Without pyarrow the same blocks are parsed by numpy (CSV: the delimiters "
        "found in one pass, the labels of up to 8 bytes grouped as integers) and by one "
        "`json.loads` of the whole block made an array (JSON lines: taken only when each line "
        "is an object on its own, which the bytes and the count of objects prove; the rows "
        "then checked in whole columns), any other block row by row. Memory: the distinct "
        "cells, plus at most about 2 million rows waiting.",
        "", "Before the cost per row was fitted over four file sizes (the previous run of this "
        "page, load 11.0, the difference of a 1,000,000- and a 2,000,000-row run, one each): "
        "`score` 0.275 µs per row against the floor's 0.162 (1.70×; 1,764 against 1,190 "
        "instructions, 1.48×), JSON lines 0.443 against 0.245 (1.81×), without pyarrow CSV "
        "0.490 against pandas' 0.129 (3.81×).", "",
        "Before: `score` took 1.78 µs per row against the floor's 0.27 (6.6×) before the "
        "columnar CSV reader. Without pyarrow, before this run's readers (the previous run of "
        "this page, load 1.1): CSV 0.531 µs per row (4.19× pandas), JSON lines 2.662 µs (row by "
        "row: 21.03× pandas' CSV, 6.8× pyarrow's JSON floor).", ""])
    watch_page = watch_page_text(args, n, m, load, head, stream, row, cols, rule, cg_note,
                                 cost_cells, costs, density,
                                 start_paragraph({k: cpu[k] for k in WATCH_PAGE}))
    if args.out == "-":
        print(score_page)
        print(watch_page)
    else:
        pages = ROOT / "docs" / "benchmarks"
        (pages / "cli.md").write_text(score_page)
        (pages / "cli-watch.md").write_text(watch_page)
        print(f"wrote {pages / 'cli.md'} and {pages / 'cli-watch.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
