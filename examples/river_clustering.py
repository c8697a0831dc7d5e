"""River's online clusterers on a real dataset, evaluated while they learn.

The dataset is River's ``ImageSegments`` (2,310 image regions, 18 features, 7 classes; it ships
inside the ``river`` package, nothing is downloaded). Each clusterer runs in a
``StandardScaler | Clusterer(model)`` pipeline under progressive validation (predict, score,
learn); a :class:`streameval.Monitor` keeps ELM, BCubed, ARI and NMI over all time and over a
sliding window, and the script prints both and plots them along the stream (PNG).

    PYTHONPATH=. python examples/river_clustering.py                 # every clusterer
    PYTHONPATH=. python examples/river_clustering.py --fast --out /tmp/rc.png
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from river import cluster, datasets, preprocessing

import streameval as se
from streameval.river import Clusterer

METRICS = ("ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo")

CLUSTERERS = {
    "KMeans": lambda: cluster.KMeans(n_clusters=7, halflife=0.3, sigma=1, seed=1),
    "DBSTREAM": lambda: cluster.DBSTREAM(clustering_threshold=1.5, fading_factor=0.05),
    "DenStream": lambda: cluster.DenStream(
        decaying_factor=0.01, beta=0.5, mu=2.5, epsilon=0.5, n_samples_init=20
    ),
    "CluStream": lambda: cluster.CluStream(
        n_macro_clusters=7, max_micro_clusters=20, time_gap=50, seed=1
    ),
    "STREAMKMeans": lambda: cluster.STREAMKMeans(chunk_size=20, n_clusters=7, seed=1),
}


def run(name: str, data, window: int, every: int):
    """Progressive validation of one clusterer; returns the monitor and its reports."""
    model = preprocessing.StandardScaler() | Clusterer(CLUSTERERS[name]())
    reports = []
    metrics = [se.ELM(), se.BCubed(), se.AdjustedRand(), se.NormalizedMutualInfo()]
    mon = se.Monitor(metrics, window=window, watch="ELM", report_every=every,
                     on_report=reports.append)
    for x, y in data:
        y_pred = model.predict_one(x)
        if y_pred is not None:  # no cluster yet: River skips the element too
            mon.update(y, y_pred)
        model.learn_one(x)
    reports.append(mon.report())
    return mon, reports


def plot(results: dict, out: Path, window: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    for ax, metric in zip(axes.flat, METRICS):
        for i, (name, reports) in enumerate(results.items()):
            n = [r["n"] for r in reports]
            color = f"C{i}"
            ax.plot(n, [r["all_time"][metric] for r in reports], color=color, label=name)
            ax.plot(n, [r["window"][metric] for r in reports], color=color, ls="--", lw=0.8)
        ax.set_title(metric)
        ax.set_ylim(-0.05 if metric == "AdjustedRand" else 0, 1)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("elements scored")
    axes[0, 0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"River clusterers on ImageSegments: all time (solid), last {window} (dashed)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = Path(__file__).parent / "out" / "river_clustering.png"
    parser.add_argument("--out", type=Path, default=default_out,
                        help="where to write the PNG plot (default: examples/out/)")
    parser.add_argument("--fast", action="store_true",
                        help="400 elements and two clusterers (for tests)")
    parser.add_argument("--window", type=int, default=500, help="sliding window size")
    parser.add_argument("--seed", type=int, default=0, help="shuffling seed")
    args = parser.parse_args(argv)

    data = list(datasets.ImageSegments())
    random.Random(args.seed).shuffle(data)
    names = list(CLUSTERERS)
    every = 50
    if args.fast:
        data, names, every = data[:400], ["KMeans", "STREAMKMeans"], 25
        args.window = min(args.window, 100)

    results = {}
    print(f"ImageSegments: {len(data)} elements, 7 classes; window = last {args.window} scored")
    head = " ".join(f"{m[:12]:>12}" for m in METRICS)
    print(f"{'clusterer':<13}{'':>9} {head}  worst clusters (ELM precision loss)")
    for name in names:
        mon, reports = run(name, data, args.window, every)
        results[name] = reports
        last = reports[-1]
        for scope in ("all_time", "window"):
            vals = " ".join(f"{last[scope][m]:>12.4f}" for m in METRICS)
            worst = ", ".join(f"{lbl}:{c:.1f}" for lbl, c in last["worst"][:3])
            print(f"{name:<13}{scope:>9} {vals}" + (f"  {worst}" if scope == "window" else ""))
        if last["drops"]:
            print(f"{'':<13}ELM drops flagged at elements {last['drops']}")
    plot(results, args.out, args.window)
    print(f"plot written to {args.out}")


if __name__ == "__main__":
    main()
