"""Rows per second of ``streameval score`` on a large CSV, against pandas + scikit-learn.

Generates a CSV of (true, predicted) labels in a temporary directory (1,000 true clusters, 80% of
rows predicted right, the rest scattered over 1,200 predicted labels), then times, each in a fresh
process and from the same file:

- ``streameval score FILE --true true --pred pred --format json``: every O(1) metric (17 on the core);
- a pandas + scikit-learn script: ``pandas.read_csv`` then scikit-learn's clustering metrics that
  exist there (rand, adjusted rand, mutual information, NMI, homogeneity/completeness/V,
  Fowlkes-Mallows; sklearn has no ELM, BCubed, purity or VI).

Both are timed for the whole process (start-up, imports, reading, scoring), as CPU time (user +
system, from ``getrusage``) and wall time; the peer also reports its read and metric times
separately. The values both compute are compared.

    python benchmarks/bench_cli.py              # 10 million rows (about a minute)
    python benchmarks/bench_cli.py --rows 200000 --out -   # a quick run, table to stdout
    python benchmarks/bench_cli.py --watch      # watch against score, CPU per row (cli-watch.md)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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


def make_csv(path: Path, rows: int, seed: int = 0, chunk: int = 1_000_000) -> None:
    """Write ``rows`` lines ``true,pred`` (integer labels) with a header."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        f.write("true,pred\n")
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            t = rng.integers(0, 1000, n)
            p = np.where(rng.random(n) < 0.8, t, rng.integers(0, 1200, n))
            f.write("\n".join(f"{a},{b}" for a, b in zip(t.tolist(), p.tolist())))
            f.write("\n")


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


def watch_vs_score(rows: int, repeat: int, out: str, ours_cmd: list) -> int:
    """CPU time per row of ``watch`` (defaults: a window of 1000, drop detection, a line every
    10,000 rows) against ``score``, each run on N and 2N rows: the difference divided by N leaves
    out start-up and imports."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cols = ["--true", "true", "--pred", "pred"]
    runs = {"score": ["score", *cols, "--format", "json"],
            "watch": ["watch", *cols, "--interval", "0"],
            "watch --window 0 --drop-block 0": ["watch", *cols, "--interval", "0", "--window", "0",
                                                "--drop-block", "0"],
            "watch --window 0 --drop-block 0 --every 100000000": [
                "watch", *cols, "--interval", "0", "--window", "0", "--drop-block", "0",
                "--every", "100000000"],
            "score --metrics ARI NMI VI Purity": ["score", *cols, "--format", "json",
                                                  "--metrics", "ARI", "NMI", "VI", "Purity"],
            "watch --metrics ARI NMI VI Purity": ["watch", *cols, "--interval", "0",
                                                  "--metrics", "ARI", "NMI", "VI", "Purity"]}
    cpu: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for n in (rows, 2 * rows):
            files[n] = Path(tmp) / f"rows{n}.csv"
            make_csv(files[n], n)
        for name, cmd in runs.items():
            for n, path in files.items():
                best = min(timed([*ours_cmd, cmd[0], str(path), *cmd[1:]])[1] for _ in range(repeat))
                cpu[name, n] = best
                print(f"{name} on {n:,} rows: {best:.2f} s CPU", file=sys.stderr)
    per_row = {name: (cpu[name, 2 * rows] - cpu[name, rows]) / rows * 1e6 for name in runs}
    lines = ["# `streameval watch` against `streameval score`: CPU time per row", "",
             f"Command: `python benchmarks/bench_cli.py --watch --rows {rows} --repeat {repeat}` (best of {repeat}). "
             f"Machine: {machine()}; load average {load:.1f} when the run started.", "",
             f"Each command runs on a CSV of {rows:,} rows and on one of {2 * rows:,} rows (integer "
             "labels, 1,000 true clusters, 80% predicted right); the difference of the two CPU "
             f"times (user + system) divided by {rows:,} is the cost per row, without start-up.", "",
             "| command | CPU µs per row | against `score` |", "|---|---:|---:|"]
    for name in runs:
        base = "score --metrics ARI NMI VI Purity" if "ARI" in name else "score"
        lines.append(f"| `streameval {name}` | {per_row[name]:.2f} | "
                     f"{per_row[name] / per_row[base]:.2f}× `{base}` |")
    lines += ["", "`watch`'s reader thread hands rows to the main thread in chunks (from a regular "
              "file; one by one from a pipe), and the main thread takes them in O(1) each (a list "
              "extend); its tables catch up at each report, publication and checkpoint: the all-time "
              "table by one `update_many` of the new rows (as `score` builds its table), the window "
              "by the net change of its cells (or rebuilt from its rows when cheaper). Drop "
              "detection evaluates the watched metric over whole blocks of rows at once (in numpy "
              "for ELM and BCubed, bit for bit the per-block loop's values; a table per block for "
              "the others, as `streameval.Monitor` does).", "",
              "What remains is the core's cost of changing a cell (`Contingency.update_many` "
              "applies a few cells one by one, and with ELM and BCubed each change also updates "
              "their element-averaged F-sums over the cell's row and column): paid at each report "
              "for every cell changed since the last one, where `score` builds its table once in "
              "bulk. With a single report at the end (`--every 100000000`, so the table is built in "
              "bulk once, as `score` builds it) `watch` costs what reading and taking rows cost, "
              "about what `score` costs."]
    text = "\n".join(lines) + "\n"
    if out == "-":
        print(text)
    else:
        Path(out).write_text(text)
        print(f"wrote {out}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=None,
                    help="rows (default 10,000,000; with --watch, 400,000)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; the best is reported")
    ap.add_argument("--out", default=None,
                    help="Markdown file for the results ('-': standard output; default "
                    "docs/benchmarks/cli.md, or cli-watch.md with --watch)")
    ap.add_argument("--watch", action="store_true",
                    help="time watch against score per row instead (the target: within 3x)")
    args = ap.parse_args(argv)
    script = Path(sys.executable).parent / "streameval"
    ours_cmd = [str(script)] if script.exists() else [sys.executable, "-m", "streameval"]
    if args.watch:
        return watch_vs_score(args.rows or 400_000, args.repeat,
                              args.out or str(ROOT / "docs" / "benchmarks" / "cli-watch.md"), ours_cmd)
    args.rows = args.rows or 10_000_000
    args.out = args.out or str(ROOT / "docs" / "benchmarks" / "cli.md")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "rows.csv"
        t0 = time.perf_counter()
        make_csv(csv, args.rows)
        gen = time.perf_counter() - t0
        size_mb = csv.stat().st_size / 1e6
        print(f"wrote {args.rows:,} rows ({size_mb:.0f} MB) in {gen:.1f} s", file=sys.stderr)
        ours, peer = [], []
        for _ in range(args.repeat):
            el, cpu, out = timed([*ours_cmd, "score", str(csv), "--true", "true", "--pred", "pred",
                                  "--format", "json"])
            ours.append((cpu, el, json.loads(out)))
            el, cpu, out = timed([sys.executable, "-c", PEER, str(csv)])
            peer.append((cpu, el, json.loads(out)))
            print(f"streameval {ours[-1][0]:.2f} s CPU, pandas+sklearn {peer[-1][0]:.2f} s CPU",
                  file=sys.stderr)
    c_ours, t_ours, v_ours = min(ours, key=lambda x: x[0])
    c_peer, t_peer, p = min(peer, key=lambda x: x[0])
    diff = max(abs(v_ours[k] - v) for k, v in p["values"].items())
    n = args.rows
    cmd = "python benchmarks/bench_cli.py" + (f" --rows {n}" if n != 10_000_000 else "")
    table = f"""# `streameval score` against pandas + scikit-learn

Command: `{cmd}` (best of {args.repeat}). Machine: {machine()}; load average {load:.1f} when
the run started (other jobs share the machine: compare the two rows of one run, not runs).

A CSV of {n:,} rows (`true,pred`, integer labels; 1,000 true clusters, 80% of rows predicted
right; {size_mb:.0f} MB), scored from a fresh process each time (both times include start-up and imports).

| | CPU time (user + system) | rows per CPU second | wall time | metrics |
|---|---:|---:|---:|---|
| `streameval score FILE --true true --pred pred --format json` | {c_ours:.2f} s | {n / c_ours:,.0f} | {t_ours:.2f} s | {len(v_ours)} (every O(1) metric, ELM and BCubed included) |
| pandas `read_csv` + scikit-learn | {c_peer:.2f} s | {n / c_peer:,.0f} | {t_peer:.2f} s (imports {p['imports']:.2f} s, read_csv {p['read']:.2f} s, metrics {p['metrics']:.2f} s) | {len(p['values'])} (those scikit-learn has) |

Ratio (CPU time, the figure least disturbed by other jobs): streameval takes
{c_ours / c_peer:.2f}× the CPU time of pandas + scikit-learn, i.e. {c_peer / c_ours:.2f}× its rows
per second; by wall time, {t_ours / t_peer:.2f}×. Within the peer's wall time, pandas' `read_csv`
alone takes {p['read']:.2f} s ({n / p['read']:,.0f} rows per second) and the scikit-learn metrics
{p['metrics']:.2f} s: scikit-learn rebuilds the contingency matrix in each metric call.
Largest difference between the values both compute: {diff:.1e}.

`score` reads the file row by row with Python's `csv` module (so a bad row is reported with its
file and line), counts cells in a dict, then builds the table once; its memory follows the number of
distinct (true, predicted) pairs, not the rows. pandas parses in C and holds every row in memory.
"""
    if args.out == "-":
        print(table)
    else:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(table)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
