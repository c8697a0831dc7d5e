"""``Monitor.update_many`` on numpy arrays against ``Monitor.update`` element by element, one run.

A stream of ``N`` elements with ``K = 1,000`` true clusters (prediction = truth with probability
0.8, else a random cluster; the page states the cells per row this makes) goes into a
``Monitor([ELM()], window=W)`` (its default drop detection: a CUSUM on ELM over blocks of 25),
once without a window (``W = None``) and once with ``Monitor``'s default count window of 1,000.
Contenders, each on a fresh monitor:

- ``Monitor.update_many`` on the whole stream as two int64 arrays (one call);
- ``Monitor.update_many`` in chunks of 1,000 elements (as a reader of blocks feeds it);
- ``Monitor.update`` element by element (what ``update_many`` must equal: the tests hold the two
  to the same state);
- the floor: ``Evaluator([ELM()]).update_many`` of the same arrays (the all-time table alone: no
  window, no ranking, no error account, no detection).

CPU times (``time.process_time``) and, beside them, instructions per element from ``valgrind
--tool=callgrind`` (``benchmarks/instructions.py``: each contender's call alone collected, in a
child process, on ``--cg-n`` elements). Writes ``docs/benchmarks/monitor.md``.

    PYTHONPATH=. python benchmarks/bench_monitor.py [--n 100000] [--cg-n 20000] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import streameval as se

sys.path.insert(0, str(Path(__file__).resolve().parent))

K = 1000
CHUNK = 1000
WINDOWS = (None, 1000)
CASES = ("update_many", "update_many chunks", "update", "floor")


def stream(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = rng.integers(0, K, n)
    p = np.where(rng.random(n) < 0.8, t, rng.integers(0, K, n))
    return t, p


def runner(case: str, window):
    """A function of ``(t, p)`` feeding a fresh monitor (or the floor's evaluator)."""
    if case == "floor":
        return lambda t, p: se.Evaluator([se.ELM()]).update_many(t, p)
    if case == "update_many":
        return lambda t, p: se.Monitor([se.ELM()], window=window).update_many(t, p)
    if case == "update_many chunks":
        def chunks(t, p):
            mon = se.Monitor([se.ELM()], window=window)
            for lo in range(0, len(t), CHUNK):
                mon.update_many(t[lo:lo + CHUNK], p[lo:lo + CHUNK])
        return chunks

    def one_by_one(t, p):
        mon = se.Monitor([se.ELM()], window=window)
        for a, b in zip(t.tolist(), p.tolist()):
            mon.update(a, b)
    return one_by_one


def cpu(fn, t, p) -> float:
    start = time.process_time()
    fn(t, p)
    return time.process_time() - start


def child(case: str, window, n: int) -> None:
    """Under callgrind: one warm-up call on a short stream, then the measured call."""
    from instructions import measured

    fn = runner(case, window)
    t, p = stream(n)
    fn(t[:2000], p[:2000])
    measured(fn, t, p)


def instructions(case: str, window, n: int) -> float | None:
    import instructions as ins

    if not ins.available():
        return None
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, __file__, "--child", case, "--window", str(window), "--n", str(n)]
    try:
        (count,) = ins.counts(cmd, 1, env=env)
    except RuntimeError as e:  # the child died under valgrind: no count (the page shows –)
        print(f"callgrind failed for {case}, window {window}: {str(e)[-300:]}", file=sys.stderr)
        return None
    return count / n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="elements per timed run")
    ap.add_argument("--cg-n", type=int, default=20_000, help="elements per callgrind run")
    ap.add_argument("--quick", action="store_true", help="2·10⁴ elements, 2·10³ under callgrind")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "docs"
                                         / "benchmarks" / "monitor.md"))
    ap.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    ap.add_argument("--window", default="None", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, None if args.window == "None" else int(args.window), args.n)
        return 0
    n, cg_n = (20_000, 2_000) if args.quick else (args.n, args.cg_n)
    t, p = stream(n)
    rows = []
    for window in WINDOWS:
        times = {case: cpu(runner(case, window), t, p) / n * 1e6 for case in CASES}
        counts = {case: instructions(case, window, cg_n) for case in CASES}
        for case in CASES:
            rows.append((window, case, times[case], times[case] / times["floor"],
                         times["update"] / times[case], counts[case],
                         None if counts[case] is None else counts[case] / counts["floor"]))
        print(f"window {window}: " + ", ".join(f"{c} {v:.2f} µs" for c, v in times.items()),
              file=sys.stderr)
    cells = se.Contingency()
    cells.update_many(t, p)
    per_row = cells.cells / cells.k_true
    name = {"update_many": "`Monitor.update_many`, one call", "update_many chunks":
            f"`Monitor.update_many`, chunks of {CHUNK:,}", "update": "`Monitor.update` per element",
            "floor": "floor: `Evaluator.update_many`"}
    lines = [
        "# Monitor: `update_many` on arrays against `update` per element", "",
        f"`Monitor([ELM()], window=W)` (its default drop detection) fed {n:,} elements: K = {K:,} "
        f"true clusters, prediction = truth with probability 0.8, else a random cluster "
        f"({per_row:.1f} cells per row at the end of the stream). `update_many` gives the state of "
        "`update` element by element (`tests/test_monitor.py` compares every value, the whole "
        "cluster ranking and error account in order, the blocks and the drops). The floor is the "
        "all-time table alone (`Evaluator([ELM()]).update_many`).", "",
        f"- Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "- Command: `PYTHONPATH=. python benchmarks/bench_monitor.py"
        + (" --quick" if args.quick else f" --n {n} --cg-n {cg_n}") + "`",
        f"- CPU time per element (`time.process_time`, one run each); instructions per element "
        f"from `valgrind --tool=callgrind` on {cg_n:,} elements, each contender's call alone "
        "collected (`benchmarks/instructions.py`): stable under load (– where the child process "
        "failed under valgrind).", "",
        "| window | contender | µs / element | × floor | speed-up over `update` | "
        "instructions / element | instructions × floor |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for window, case, us, floor, speed, count, cfloor in rows:
        lines.append(f"| {'none' if window is None else f'{window:,}'} | {name[case]} | {us:.2f} | "
                     f"{floor:.1f}× | {speed:.1f}× | "
                     f"{'–' if count is None else f'{count:,.0f}'} | "
                     f"{'–' if cfloor is None else f'{cfloor:.1f}×'} |")
    lines += ["", "Reading: `update_many` reads the arrays in bulk: the all-time table and the "
              "detection's blocks columnar, the window's table one `update_many` for the elements "
              "that stay and one revert per old element that leaves, and the cluster ranking and "
              "error account once per cell and cluster the batch touches (not per element). "
              "`update` pays the window, the ranking and the account per element. In chunks, "
              "each chunk touches most clusters again (K = 1,000), so the ranking and account "
              "work is per cluster per chunk. The instruction counts run on fewer elements "
              "than the CPU times, so a monitor's fixed costs (building it, its first block) "
              "weigh more in them.", ""]
    Path(args.out).write_text("\n".join(lines))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
