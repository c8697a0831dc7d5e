"""Distributed engines against the single-process streaming table: wall time, CPU, peak memory.

2·10⁷ elements in 4·10⁶ true clusters (the synthetic resolver of examples/distributed_er.py), on
Dask (LocalCluster, 2 worker processes), DuckDB (embedded), Spark (local[2]), Flink (PyFlink's
local mini-cluster, batch mode, parallelism 2) and the streaming ``Contingency`` (``update_many``,
and per-element ``update``). Each engine runs in its own subprocess, generating the elements
itself; the parent samples the resident memory of the whole process tree (client, workers, JVM)
every 50 ms and keeps the peak. Writes ``docs/benchmarks/distributed.md``.

PyFlink pins old pandas/pyarrow, so it lives in its own virtual environment: the Flink leg runs
with the interpreter given by ``--flink-python`` (default: this one, if it imports pyflink).

    python benchmarks/bench_distributed.py --flink-python /path/to/venv-flink/bin/python
    python benchmarks/bench_distributed.py --quick    # 2·10⁵ elements
    python benchmarks/bench_distributed.py --only duckdb stream_update_many   # two legs, same run

The streaming legs build one ``Contingency`` tracking ELM's and BCubed's element-averaged F;
``stream_update_many`` feeds it with ``Contingency.update_many`` in chunks of ``--chunk`` elements
(default 10⁶; ``--chunk 0``: the whole stream in one call), ``stream_update`` element by element.
The Markdown table goes to ``docs/benchmarks/distributed.md`` after a full run of every engine, or
to ``--out``; a partial run (``--only``, ``--skip``, ``--quick``) only prints it unless ``--out``
is given. The last line compares the streaming table's bulk leg with DuckDB in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZE = 5  # elements per true cluster: 2·10⁷ elements -> 4·10⁶ clusters
ENGINES = ("dask", "duckdb", "spark", "flink", "stream_update_many", "stream_update")


def run_engine(engine: str, n: int, chunk: int = 1_000_000) -> dict:
    """Run one engine in this process; return its stats as a JSON-safe dict."""
    from examples import distributed_er as er

    if engine == "dask":
        r = er.run_dask(n, SIZE, memory_limit="8GiB")
        return r.stats.as_dict()
    if engine == "duckdb":
        return er.run_duckdb(n, SIZE).stats.as_dict()
    if engine == "spark":
        spark = er.spark_session()
        if spark is None:
            return {"skipped": "pyspark or java missing"}
        try:
            return er.run_spark(n, SIZE, spark).stats.as_dict()
        finally:
            spark.stop()
    if engine == "flink":
        return run_flink(n)
    import streameval as se

    table = se.Contingency()
    table.track_f("elm")
    table.track_f("bcubed")
    if engine == "stream_update_many":
        step = chunk if chunk > 0 else n  # elements per update_many call
    else:
        step = 1_000_000  # labels generated a million at a time, then updated one by one
    for lo in range(0, n, max(1, step)):
        t, p = er.numpy_labels(lo, min(n, lo + step), n, SIZE)
        if engine == "stream_update_many":
            table.update_many(t, p)
        else:
            update = table.update
            for a, b in zip(t.tolist(), p.tolist()):
                update(a, b)
    return table.stats().as_dict()


def run_flink(n: int) -> dict:
    """The records from Flink's ``datagen`` sequence, evaluated by :func:`streameval.flink.evaluate`
    in batch mode (parallelism 2, 1 GiB managed memory); the stats as a dict."""
    try:
        from streameval import flink
    except ImportError:
        return {"skipped": "pyflink missing"}
    import shutil

    if shutil.which("java") is None:
        return {"skipped": "java missing"}
    from examples import distributed_er as er

    env = flink.local_environment(parallelism=2, managed_memory="1g")
    k = n // SIZE
    env.execute_sql(
        f"CREATE TEMPORARY TABLE seq (i BIGINT) WITH ('connector' = 'datagen', "
        f"'number-of-rows' = '{n}', 'rows-per-second' = '1000000000', "  # default: 10,000/s
        f"'fields.i.kind' = 'sequence', 'fields.i.start' = '0', "
        f"'fields.i.end' = '{n - 1}')"
    )
    records = env.sql_query(
        f"SELECT i / {SIZE} AS true_id, CASE WHEN MOD(i * {er.HASH}, 100) < {er.SPLIT} "
        f"THEN {k} + i WHEN MOD(i * {er.HASH}, 100) < {er.MERGE} THEN MOD(i / {SIZE} + 1, {k}) "
        f"ELSE i / {SIZE} END AS pred_id FROM seq"
    )
    return flink.evaluate(env, records, "true_id", "pred_id").stats.as_dict()


def measure(engine: str, n: int, python: str = sys.executable, chunk: int = 1_000_000) -> dict:
    """Wall time and peak RSS of the process tree of a subprocess running ``engine``."""
    import psutil

    out = ROOT / f".bench_{engine}.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYSPARK_PYTHON=sys.executable)
    if engine == "flink":
        env.setdefault("JVM_ARGS", "-Xmx2g")
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [python, __file__, "--engine", engine, "--n", str(n), "--out", str(out),
         "--chunk", str(chunk)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    root = psutil.Process(proc.pid)
    peak = 0
    seen: dict = {}  # pid -> its own CPU seconds when last sampled (JVMs are never reaped here)
    while proc.poll() is None:
        try:
            procs = [root] + root.children(recursive=True)
            rss = 0
            for p in procs:
                with contextlib.suppress(psutil.Error):  # a worker may have just exited
                    rss += p.memory_info().rss
                    t = p.cpu_times()
                    seen[p.pid] = t.user + t.system
            peak = max(peak, rss)
        except psutil.Error:
            pass
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    # the reaped subprocess and every descendant it reaped, or the sampled tree if larger
    cpu = max(_children_cpu() - cpu0, sum(seen.values()))
    if proc.returncode != 0:
        return {"engine": engine, "error": f"exit code {proc.returncode}"}
    stats = json.loads(out.read_text())
    out.unlink()
    return {"engine": engine, "wall_s": wall, "cpu_s": cpu, "peak_mib": peak / 2**20,
            "stats": stats}


def _children_cpu() -> float:
    """User + system CPU seconds of this process's terminated, reaped descendants."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cells_per_row(n: int) -> tuple[float, float]:
    """Cells per true and per predicted cluster of the resolver's labels (the same at any N that
    is a multiple of the entity size: the resolver repeats per entity)."""
    import streameval as se
    from examples import distributed_er as er

    table = se.Contingency()
    table.update_many(*er.numpy_labels(0, n, n, SIZE))
    return table.cells / table.k_true, table.cells / table.k_pred


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2·10⁵ elements")
    ap.add_argument("--engine", choices=ENGINES, help=argparse.SUPPRESS)
    ap.add_argument("--out", help="where to write the Markdown table (see above)")
    ap.add_argument("--skip", nargs="*", default=[], choices=ENGINES, help="engines to leave out")
    ap.add_argument("--only", nargs="+", choices=ENGINES, help="run only these engines")
    ap.add_argument("--chunk", type=int, default=1_000_000,
                    help="elements per update_many call in stream_update_many (0: all at once)")
    ap.add_argument("--n", type=int, help="elements (default 2·10⁷, --quick 2·10⁵)")
    ap.add_argument("--flink-python", default=sys.executable,
                    help="interpreter of the virtual environment with PyFlink (the Flink leg)")
    args = ap.parse_args(argv)
    if args.engine:  # child process
        Path(args.out).write_text(json.dumps(run_engine(args.engine, args.n, args.chunk)))
        return
    n = args.n or (200_000 if args.quick else 20_000_000)
    engines = [e for e in ENGINES if e not in args.skip and (not args.only or e in args.only)]
    results = []
    for engine in engines:
        r = measure(engine, n, args.flink_python if engine == "flink" else sys.executable, args.chunk)
        print(json.dumps({k: v for k, v in r.items() if k != "stats"}), flush=True)
        results.append(r)
    ok = [r for r in results if "stats" in r and "skipped" not in r["stats"]]
    if not ok:
        raise SystemExit("no engine finished")
    agree = all(r["stats"] == ok[0]["stats"] for r in ok)
    base = next((r for r in ok if r["engine"] == "stream_update_many"), ok[0])
    cmd = "python benchmarks/bench_distributed.py" + (" --quick" if args.quick else "")
    if args.flink_python != sys.executable:
        cmd += " --flink-python .../venv-flink/bin/python"
    if args.n:
        cmd += f" --n {args.n}"
    if args.only:
        cmd += " --only " + " ".join(args.only)
    if args.skip:
        cmd += " --skip " + " ".join(args.skip)
    if args.chunk != 1_000_000:
        cmd += f" --chunk {args.chunk}"
    density = cells_per_row(min(n, 1_000_000))
    lines = [
        "# Distributed evaluation: Dask, DuckDB, Spark, Flink and the streaming table",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"{psutil_total_gib():.0f} GiB RAM, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}  ",
        f"Data: {n:,} elements, {n // SIZE:,} true clusters of {SIZE} (the synthetic resolver of "
        "`examples/distributed_er.py`: 92% right, 5% split off as singletons, 3% merged into the "
        "next entity), generated inside each engine; every metric of `default_metrics()` plus AMI. "
        f"Density: {density[0]:.2f} cells per true cluster (row), {density[1]:.2f} per predicted "
        "cluster (column).",
        "",
        "No instruction counts here: each engine runs many processes and threads (JVMs, Dask "
        "workers, DuckDB's thread pool) whose start-up and scheduling are part of what is "
        "measured, so a single-process callgrind count would leave most of the work out; the "
        "streaming table's own instructions per element are on the [core page](core.md).",
        "",
        "Peak memory is the resident set of the whole process tree (client, Dask workers and "
        "nanny, Spark's and Flink's JVMs), sampled every 50 ms. Wall time includes start-up (cluster, JVM) "
        "and generating the data. CPU time is the user + system seconds of the engine's process "
        "and of the descendants it waited for, or, when larger, of every process of its tree "
        "sampled every 50 ms (which counts the JVMs, never waited for; a process's last 50 ms "
        "may be missed): every core's, and on a shared machine it varies less than the wall "
        "time. Engines run one after another; other processes on the machine are not controlled.",
        "",
        "| engine | wall time (s) | CPU time (s) | peak memory (MiB) | time vs update_many | "
        "memory vs update_many |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if "stats" not in r:
            lines.append(f"| {r['engine']} | {r['error']} | | | | |")
        elif "skipped" in r["stats"]:
            lines.append(f"| {r['engine']} | skipped: {r['stats']['skipped']} | | | | |")
        else:
            lines.append(
                f"| {r['engine']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_mib']:.0f} | "
                f"{r['wall_s'] / base['wall_s']:.2f} | {r['peak_mib'] / base['peak_mib']:.2f} |"
            )
    lines += ["", f"All engines' `ContingencyStats` identical: **{agree}**.", ""]
    by = {r["engine"]: r for r in ok}
    if "stream_update_many" in by and "duckdb" in by:
        ratio = by["stream_update_many"]["wall_s"] / by["duckdb"]["wall_s"]
        cpu_ratio = by["stream_update_many"]["cpu_s"] / by["duckdb"]["cpu_s"]
        chunk = min(args.chunk, n) if args.chunk > 0 else n
        lines += [
            f"Streaming table (`update_many`, chunks of {chunk:,}) vs DuckDB in this run: "
            f"{ratio:.2f}× the wall time ({'faster' if ratio < 1 else 'slower'}), "
            f"{cpu_ratio:.2f}× the CPU time (DuckDB uses every core, the table one), "
            f"{by['stream_update_many']['peak_mib'] / by['duckdb']['peak_mib']:.2f}× the peak "
            "memory.",
            "",
        ]
    full = not (args.quick or args.only or args.skip or args.n)
    out = Path(args.out) if args.out else (ROOT / "docs" / "benchmarks" / "distributed.md"
                                           if full else None)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(lines))
    print("\n".join(lines))


def psutil_total_gib() -> float:
    import psutil

    return psutil.virtual_memory().total / 2**30


if __name__ == "__main__":
    main()
