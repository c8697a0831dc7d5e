"""Calibration of the labelled-sample estimators: coverage of the 95% interval, and the bias of the
naive "score only the labelled records".

Two generated populations with known metric values (about 100,000 records each): *light* entity
sizes (1 + geometric, mean 2) and *heavy-tailed* ones (Zipf, exponent 2, capped at 2,000). A
prediction keeps each record with its entity with probability 0.85, else moves it to a random
other entity's cluster (merge) or to a cluster of its own (split). The true value of every estimate
is its census ratio ``ΣN/ΣD`` over all entities (uniform weights), which for the pairwise and
record-averaged B³ forms is the population metric itself (``tests/test_sample.py`` checks that).

For each design (``uniform``: distinct entities drawn with equal probability; ``size``: ``n``
independent draws of a record, each resolving its entity, an entity drawn twice counting twice —
the design the weights ``1/c`` are exact for; ``size, distinct``: the same draws kept distinct,
successively, until ``n`` different entities are held, as a stream holds them) and each sample
size (50, 200, 1,000 entities), ``reps`` samples are drawn; each gives an estimate and its 95%
normal interval from :func:`streameval.batch.ratio_of_means` over the population's per-entity terms
(:func:`streameval.batch.sample_terms`: a sampled entity's terms do not depend on which other
entities are sampled). Coverage is the share of intervals holding the true value (Monte Carlo
standard error about ``sqrt(0.05·0.95/reps)``, 1.0 point at 500 repetitions).

    PYTHONPATH=. python benchmarks/sample_calibration.py [--reps 500] [--out PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from streameval import batch

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["pairwise_precision", "pairwise_recall", "pairwise_f", "bcubed_precision",
         "bcubed_recall", "bcubed_f", "entity_bcubed_precision", "entity_bcubed_recall",
         "entity_bcubed_f", "cluster_precision", "cluster_recall", "cluster_f"]
DESIGNS = ("uniform", "size", "size, distinct")
NAIVE = {"pairwise_precision": batch.pair_precision_score,
         "pairwise_recall": batch.pair_recall_score,
         "bcubed_precision": lambda t, p: batch.bcubed_precision_recall_fscore(t, p)[0],
         "bcubed_recall": lambda t, p: batch.bcubed_precision_recall_fscore(t, p)[1]}


def population(kind: str, records: int = 100_000, seed: int = 0):
    """``(entities, preds)`` integer arrays of a generated population."""
    rng = np.random.default_rng(seed)
    if kind == "light":
        sizes = 1 + rng.geometric(0.5, size=records)
    else:
        sizes = np.minimum(rng.zipf(2.0, size=records), 2000)
    sizes = sizes[np.cumsum(sizes) <= records]
    ents = np.repeat(np.arange(len(sizes)), sizes)
    k = len(sizes)
    preds = ents.copy()
    u = rng.random(len(ents))
    merge = u < 0.08
    preds[merge] = rng.integers(0, k, size=int(merge.sum()))
    split = (u >= 0.08) & (u < 0.15)
    preds[split] = k + np.arange(int(split.sum()))
    return ents, preds


def simulate(kind: str, reps: int, sizes=(50, 200, 1000), seed: int = 1) -> dict:
    """``{design: {n: {name: (coverage, mean estimate, mean naive or None)}}}`` and the truths
    (the naive score is computed for the uniform design at n = 200 only, where it is reported)."""
    ents, preds = population(kind)
    terms = batch.sample_terms(ents, preds, design="uniform")  # entity order: sorted codes 0..K-1
    truth = {name: float(N.sum() / D.sum()) for name, (N, D) in terms.items()}
    sizes_e = np.bincount(ents)
    order = np.argsort(ents, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes_e)])
    rng = np.random.default_rng(seed)
    out: dict = {"truth": truth}
    for design in DESIGNS:
        out[design] = {}
        for n in sizes:
            hits = dict.fromkeys(NAMES, 0)
            means = dict.fromkeys(NAMES, 0.0)
            naive = dict.fromkeys(NAIVE, 0.0)
            for _ in range(reps):
                if design == "uniform":
                    idx = rng.choice(len(sizes_e), size=n, replace=False)
                    w = np.ones(n)
                else:
                    idx = rng.choice(len(sizes_e), size=n, replace=design == "size",
                                     p=sizes_e / sizes_e.sum())
                    w = 1.0 / sizes_e[idx]
                for name in NAMES:
                    N, D = terms[name]
                    e = batch.ratio_of_means(N[idx] * w, D[idx] * w)
                    means[name] += e.value / reps
                    if e.low <= truth[name] <= e.high:
                        hits[name] += 1
                if design == "uniform" and n == 200:  # the naive score, as the table reports it
                    members = np.concatenate([order[starts[i]:starts[i + 1]] for i in idx])
                    for name, f in NAIVE.items():
                        naive[name] += f(ents[members], preds[members]) / reps
            out[design][n] = {name: (hits[name] / reps, means[name],
                                     naive.get(name) if design == "uniform" and n == 200 else None)
                              for name in NAMES}
            print(kind, design, n, {k: v[0] for k, v in out[design][n].items()}, file=sys.stderr)
    return out


def cells_per_row(kind: str) -> float:
    """Cells per true entity of a generated population's full contingency table."""
    from streameval import Contingency

    table = Contingency()
    table.update_many(*population(kind))
    return table.cells / table.k_true


def render(results: dict, reps: int) -> str:
    lines = [
        "# Calibration: labelled-sample estimates",
        "",
        "Generated by `benchmarks/sample_calibration.py` "
        f"(`PYTHONPATH=. python benchmarks/sample_calibration.py --reps {reps}`). "
        "Coverage of the nominal 95% normal interval over "
        f"{reps} samples per cell (Monte Carlo standard error ≈ "
        f"{100 * (0.05 * 0.95 / reps) ** 0.5:.1f} points); goal 92–97% at 200 entities and more. "
        "Cells outside 92–97% are in **bold**.",
        "",
        "Populations: " + "; ".join(f"{kind}, {cells_per_row(kind):.2f} cells per row (true entity)"
                                    for kind in results)
        + ". No CPU times or instruction counts: the tables are coverage rates of the intervals, "
        "which do not depend on the machine (the estimator's cost per element is on the "
        "[sample page](sample.md)).",
        "",
    ]
    for kind, res in results.items():
        lines += [f"## {kind} population", "", "| estimate | true value | " + " | ".join(
            f"{d} n={n}" for d in DESIGNS for n in res["uniform"]) + " |",
            "|---|---:|" + "---:|" * (len(DESIGNS) * len(res["uniform"]))]
        for name in NAMES:
            cells = []
            for d in DESIGNS:
                for n in res[d]:
                    cov = res[d][n][name][0] * 100
                    txt = f"{cov:.1f}%"
                    cells.append(f"**{txt}**" if not 92 <= cov <= 97 else txt)
            lines.append(f"| `{name}` | {res['truth'][name]:.4f} | " + " | ".join(cells) + " |")
        lines += ["", "Mean estimate against the naive score of the labelled records only "
                  "(uniform design, n = 200):", "",
                  "| metric | true value | mean estimate | mean naive score | naive bias |",
                  "|---|---:|---:|---:|---:|"]
        for name in NAIVE:
            cov, mean, naive = res["uniform"][200][name]
            t = res["truth"][name]
            lines.append(f"| `{name}` | {t:.4f} | {mean:.4f} | {naive:.4f} | {naive - t:+.4f} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "sample-calibration.md"))
    args = ap.parse_args()
    results = {kind: simulate(kind, args.reps) for kind in ("light", "heavy")}
    Path(args.out).write_text(render(results, args.reps))


if __name__ == "__main__":
    main()
