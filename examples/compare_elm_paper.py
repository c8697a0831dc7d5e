"""Is BERT really better than the baselines? The ELM paper's page streams with intervals and tests.

The ELM paper ("BCubed revisited: Elements Like Me") scores a BERT page-stream segmenter on 34 test
streams and shows three baselines (every page a document, one document per stream, documents of the
stream's mean length). This script adds what the paper could not print: a 95% confidence interval
for every system's ELM and BCubed, and paired tests between the systems, resampling whole *streams*
(the unit both segmentations partition). It prints Markdown tables, pasted into docs/compare.md.

    python examples/compare_elm_paper.py [--data ../shared/data/pss] [--resamples 10000]

The data is read from ``../shared/data/pss`` (or ``--data``) and never copied; without it the script
says so and exits with status 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import streameval as se
from streameval.pss import BASELINES, flags_to_labels, load_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "pss"


def load(data: Path):
    """``(y_true, {system: y_pred}, units)``: page labels of the 34 test streams, unit = stream.

    Documents are numbered within each stream (``labels="per_unit"``); the paper code's
    ``make_index`` quirk is reproduced (``original_make_index=True``), as for its published numbers.
    """
    gold = load_json(data / "test.json")
    systems = {"BERT": load_json(data / "bert_predictions_test.json")}
    for name, fn in BASELINES.items():
        if name == "fixed_length":
            systems[name] = {s: fn(f, original_make_index=True) for s, f in gold.items()}
        else:
            systems[name] = {s: fn(f) for s, f in gold.items()}
    y_true, units = [], []
    preds = {k: [] for k in systems}
    for sid, flags in gold.items():
        t = flags_to_labels(flags, original_make_index=True).tolist()
        y_true += t
        units += [sid] * len(t)
        for k, streams in systems.items():
            preds[k] += flags_to_labels(streams[sid], original_make_index=True).tolist()
    return y_true, preds, units


def tables(report, title: str) -> str:
    out = [f"**{title}**", "", "| system | metric | value | 95% interval |", "|---|---|---:|---:|"]
    for s, d in report.values.items():
        for m, iv in d.items():
            out.append(f"| {s} | {m} | {iv.value:.4f} | [{iv.low:.4f}, {iv.high:.4f}] |")
    out += ["", "| A − B | metric | δ | 95% interval of δ | p |", "|---|---|---:|---:|---:|"]
    for (a, b), d in report.differences.items():
        for m, df in d.items():
            p = f"{df.p_value:.4f}" if df.p_value >= 1e-4 else f"{df.p_value:.1e}"
            out.append(f"| {a} − {b} | {m} | {df.delta:+.4f} | [{df.low:+.4f}, {df.high:+.4f}] | {p} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not (args.data / "test.json").is_file():
        print(f"page-stream data not found at {args.data}; nothing to do")
        return 0
    y, preds, units = load(args.data)
    common = {"units": units, "metrics": ["ELM", "BCubed"], "n_resamples": args.resamples,
              "seed": args.seed, "labels": "per_unit"}
    parts = []
    for aggregate, what in (("mean", "mean of the per-stream F1 (the paper's figure)"),
                            ("pooled", "pooled: one table over all pages")):
        boot = se.compare(y, preds, aggregate=aggregate, method="paired_bootstrap",
                          interval="percentile", **common)
        rand = se.compare(y, preds, aggregate=aggregate, method="randomization", **common)
        parts.append(tables(boot, f"{what}; paired bootstrap, {args.resamples:,} resamples, seed {args.seed}"))
        rows = ["", f"Approximate randomization ({args.resamples:,} rounds), same pairs:", "",
                "| A − B | metric | p |", "|---|---|---:|"]
        for (a, b), d in rand.differences.items():
            for m, df in d.items():
                p = f"{df.p_value:.4f}" if df.p_value >= 1e-4 else f"{df.p_value:.1e}"
                rows.append(f"| {a} − {b} | {m} | {p} |")
        parts.append("\n".join(rows))
    print("\n\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
