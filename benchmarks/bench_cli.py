"""Rows per second of ``streameval score`` on a large CSV, against pandas + scikit-learn.

Generates a CSV of (true, predicted) labels in a temporary directory (1,000 true clusters, 80% of
rows predicted right, the rest scattered over 1,200 predicted labels), then times, each in a fresh
process and from the same file:

- ``streameval score FILE --true true --pred pred --format json``: every O(1) metric (17 on the core);
- a pandas + scikit-learn script: ``pandas.read_csv`` then scikit-learn's clustering metrics that
  exist there (rand, adjusted rand, mutual information, NMI, homogeneity/completeness/V,
  Fowlkes-Mallows; sklearn has no ELM, BCubed, purity or VI).

Both timings are wall clock for the whole process (start-up, imports, reading, scoring); the peer
also reports its read and metric times separately. The values both compute are compared.

    python benchmarks/bench_cli.py              # 10 million rows (about a minute)
    python benchmarks/bench_cli.py --rows 200000 --out -   # a quick run, table to stdout
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
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return elapsed, r.stdout


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; the best is reported")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "cli.md"),
                    help="Markdown file for the results ('-': standard output)")
    args = ap.parse_args(argv)

    script = Path(sys.executable).parent / "streameval"
    ours_cmd = [str(script)] if script.exists() else [sys.executable, "-m", "streameval"]
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
            el, out = timed([*ours_cmd, "score", str(csv), "--true", "true", "--pred", "pred",
                             "--format", "json"])
            ours.append((el, json.loads(out)))
            el, out = timed([sys.executable, "-c", PEER, str(csv)])
            peer.append((el, json.loads(out)))
            print(f"streameval {ours[-1][0]:.2f} s, pandas+sklearn {peer[-1][0]:.2f} s", file=sys.stderr)
    t_ours, v_ours = min(ours, key=lambda x: x[0])
    t_peer, p = min(peer, key=lambda x: x[0])
    diff = max(abs(v_ours[k] - v) for k, v in p["values"].items())
    n = args.rows
    cmd = "python benchmarks/bench_cli.py" + (f" --rows {n}" if n != 10_000_000 else "")
    table = f"""# `streameval score` against pandas + scikit-learn

Command: `{cmd}` (best of {args.repeat}). Machine: {machine()}; load average {load:.1f} when
the run started (other jobs share the machine: compare the two rows of one run, not runs).

A CSV of {n:,} rows (`true,pred`, integer labels; 1,000 true clusters, 80% of rows predicted
right; {size_mb:.0f} MB), scored from a fresh process each time (wall clock includes start-up and
imports).

| | wall time | rows per second | metrics |
|---|---:|---:|---|
| `streameval score FILE --true true --pred pred --format json` | {t_ours:.2f} s | {n / t_ours:,.0f} | {len(v_ours)} (every O(1) metric, ELM and BCubed included) |
| pandas `read_csv` + scikit-learn | {t_peer:.2f} s (imports {p['imports']:.2f} s, read_csv {p['read']:.2f} s, metrics {p['metrics']:.2f} s) | {n / t_peer:,.0f} | {len(p['values'])} (those scikit-learn has) |

Ratio: streameval takes {t_ours / t_peer:.2f}× the time of pandas + scikit-learn
(rows per second {t_peer / t_ours:.2f}× theirs). pandas alone reads the file at
{n / p['read']:,.0f} rows per second.
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
