"""``streameval demo``: a generated page stream segmented by an online clusterer, with a quality drop
injected half-way, streamed through a :class:`~streameval.Monitor`; prints the final table and plots
all-time against windowed metrics and the point where the drop is flagged (PNG).

>>> t, p = make_demo_stream(seed=1, pages=12)
>>> t[:3], p[:3]
(['s0/d0', 's0/d0', 's0/d1'], ['s0/c0', 's0/c0', 's0/c1'])
"""

from __future__ import annotations

import math
import sys

from .options import METRICS_HELP, fraction, metric_classes, positive
from .render import EXTRA_HINT, print_values, progress, warn

__all__ = ["make_demo_stream", "cmd_demo", "add_parser", "what_broke", "demo_trace", "demo_figure"]


def make_demo_stream(seed: int = 0, pages: int = 20000, dim: int = 16, drop: float = 0.5):
    """A synthetic page stream and an online clusterer's segmentation of it (labels per page).

    Pages come in streams of about 250 pages; a stream is a run of documents (geometric lengths,
    mean 4 pages). Each document has a random topic vector; each page is its topic plus Gaussian
    noise, and 4% of pages are off-topic (blank or stray pages). The online clusterer reads the pages
    in order and starts a new segment when a page's cosine similarity to the running mean of the
    current segment falls below 0.3: a leader-follower segmenter, as a page-stream model would be.
    After the first ``drop`` fraction of the pages (``drop=1``: never) the segmenter degrades: its
    threshold falls to -0.2, so it merges neighbouring documents (a quality drop to detect).

    Returns ``(y_true, y_pred)``: lists of labels ``"s<stream>/d<doc>"`` and ``"s<stream>/c<seg>"``.
    Deterministic for a seed. Cost O(pages · dim).

    >>> t, p = make_demo_stream(seed=1, pages=12)
    >>> len(t), len(p), t[0], p[0]
    (12, 12, 's0/d0', 's0/c0')
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    y_true: list = []
    y_pred: list = []
    stream = 0
    degrade_at = int(pages * drop) if drop < 1 else pages + 1
    while len(y_true) < pages:
        n_pages = min(pages - len(y_true), int(rng.integers(150, 350)))
        doc, seg, left = -1, -1, 0
        mean, count = None, 0
        for _ in range(n_pages):
            if left == 0:
                doc += 1
                left = int(rng.geometric(0.25))
                topic = rng.normal(size=dim)
                topic /= np.linalg.norm(topic)
            left -= 1
            if rng.random() < 0.04:
                x = rng.normal(size=dim) / math.sqrt(dim)
            else:
                x = topic + rng.normal(scale=0.8 / math.sqrt(dim), size=dim)
            if mean is not None:
                cos = float(x @ mean) / (float(np.linalg.norm(x) * np.linalg.norm(mean)) or 1.0)
            threshold = 0.3 if len(y_true) < degrade_at else -0.2
            if mean is None or cos < threshold:
                seg += 1
                mean, count = x.copy(), 1
            else:
                count += 1
                mean += (x - mean) / count
            y_true.append(f"s{stream}/d{doc}")
            y_pred.append(f"s{stream}/c{seg}")
        stream += 1
    return y_true, y_pred


def _demo_monitor(classes, window: int):
    """A :class:`~streameval.Monitor` over the metrics, flagging drops of ELM (or of the first
    metric) with its default detector."""
    from ..monitor import Monitor

    names = [c.__name__ for c in classes]
    watch = "ELM" if "ELM" in names else names[0]
    return Monitor([c() for c in classes], window=window, watch=watch)


def demo_trace(args):
    """Stream :func:`make_demo_stream` through a :class:`Monitor`; return ``(xs, trace, wtrace,
    mon, injected, broke)``: the pages at which the metrics were read, their all-time and windowed
    values there, the Monitor, the page of the injected drop (``None`` without one), and what broke
    over the window when the Monitor first flagged it (``(page, report)``, or ``None``).

    Cost: one Monitor update per page, and ``--points`` readings of every metric.

    300 pages read at 3 points; the window (1,000 pages by default) still holds the whole
    stream, so the windowed values are the all-time ones; the drop injected at page 150 is not
    flagged in so short a stream:

    >>> from streameval.cli import build_parser
    >>> args = build_parser().parse_args(["demo", "--pages", "300", "--metrics", "ELM",
    ...                                   "--points", "3", "--plot", ""])
    >>> xs, trace, wtrace, mon, injected, broke = demo_trace(args)
    >>> xs, trace == wtrace, injected, broke
    ([100, 200, 300], True, 150, None)
    >>> trace["ELM"][-1] == mon.all_time.get()["ELM"]
    True
    """
    classes = metric_classes(args.metrics)
    mon = _demo_monitor(classes, args.window)
    y_true, y_pred = make_demo_stream(args.seed, args.pages, drop=args.drop)
    n = len(y_true)
    step = max(1, n // args.points)
    xs: list = []
    trace: dict[str, list] = {c.__name__: [] for c in classes}
    wtrace: dict[str, list] = {c.__name__: [] for c in classes}
    bar = progress(n, "demo", not args.no_progress)
    update = mon.update
    injected = int(n * args.drop) if args.drop < 1 else None
    broke = None  # what broke over the window when the Monitor first flags the injected drop
    for k in range(n):
        update(y_true[k], y_pred[k])
        if broke is None and mon.drops and (injected is None or mon.drops[-1] > injected):
            broke = (mon.drops[-1], mon.account.report(3))
        if (k + 1) % step == 0 or k + 1 == n:
            bar.update(k + 1 - (xs[-1] if xs else 0))
            xs.append(k + 1)
            for name, v in mon.all_time.get().items():
                trace[name].append(v)
            for name, v in mon.window.get().items():
                wtrace[name].append(v)
    bar.close()
    return xs, trace, wtrace, mon, injected, broke


def cmd_demo(args) -> int:
    """``streameval demo``: stream :func:`make_demo_stream` through a :class:`Monitor` (all-time
    and windowed metrics, drop detection, :func:`demo_trace`); print the table and plot the story.
    Cost: :func:`demo_trace`'s (one Monitor update per page) plus the plot.

    >>> from streameval.cli import main
    >>> main(["demo", "--pages", "300", "--plot", "", "--metrics", "ELM", "--points", "3",
    ...       "--no-progress"])
    streameval demo: 300 pages (seed 0), 72 true documents, 55 predicted segments
    metric    value
    ELM    0.634076
    quality drop injected at page 150: not flagged
    0
    """
    xs, trace, wtrace, mon, injected, broke = demo_trace(args)
    n = xs[-1]
    ev = mon.all_time
    table = ev.table
    print_values(ev, args.format, f"streameval demo: {n} pages (seed {args.seed}), "
                  f"{table.k_true} true documents, {table.k_pred} predicted segments")
    out = sys.stderr if args.format == "json" else sys.stdout
    flagged = [d for d in mon.drops if injected is None or d > injected]
    if injected is not None:
        seen = f"flagged by the Monitor at page {flagged[0]}" if flagged else "not flagged"
        print(f"quality drop injected at page {injected}: {seen}", file=out)
    if broke is not None:
        print(f"what broke at page {broke[0]}: {what_broke(broke[1])}", file=out)
    if args.plot:
        try:
            _plot(xs, trace, wtrace, mon, injected, args, broke)
        except ImportError:
            warn(f"no plot written: matplotlib is not installed ({EXTRA_HINT})")
        else:
            print(f"plot written to {args.plot}", file=out)
    return 0


PLOT_FIRST = ("ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo")
FLAG_COLOR = "#c51b7d"  # the Monitor's drop flags


def what_broke(report: dict) -> str:
    """One line from :meth:`ErrorAccount.report <streameval.breakdown.ErrorAccount.report>`. O(1).

    >>> what_broke({"splits": 3, "merges": 7, "split_entities": [],
    ...             "merging_clusters": [{"cluster": "s1/c4", "entities": 5, "size": 20,
    ...                                   "extra_per_record": 12.5}]})
    '7 merges, 3 splits over the window; s1/c4 merges 5 documents (12.5 extra pages per page)'
    """
    text = f"{report['merges']} merges, {report['splits']} splits over the window"
    if report["merging_clusters"]:
        top = report["merging_clusters"][0]
        text += (f"; {top['cluster']} merges {top['entities']} documents "
                 f"({top['extra_per_record']:.1f} extra pages per page)")
    elif report["split_entities"]:
        top = report["split_entities"][0]
        text += f"; {top['entity']} split across {top['clusters']} segments"
    return text


def _plot(xs, trace, wtrace, mon, injected, args, broke=None) -> None:
    """Write :func:`demo_figure` to ``args.plot`` (PNG)."""
    import matplotlib.pyplot as plt

    fig = demo_figure(xs, trace, wtrace, mon, injected, window=args.window, seed=args.seed, broke=broke)
    fig.savefig(args.plot, dpi=110)
    plt.close(fig)


def demo_figure(xs, trace, wtrace, mon, injected, *, window: int, seed: int, broke=None):
    """Up to four metrics, one panel each: all time against the window, the degraded part of the
    stream shaded from the injected drop on, and -- on the watched metric's panel only -- the
    points where the Monitor flagged drops of that metric and what broke there. One legend for the
    whole figure. O(points · metrics) to draw, plus matplotlib's rendering (not run in the
    doctests: matplotlib is an extra; ``tests/test_cli.py`` draws it through ``demo``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [k for k in PLOT_FIRST if k in trace] + [k for k in trace if k not in PLOT_FIRST]
    names = names[:4]
    cols = 1 if len(names) == 1 else 2
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, 3.6 * rows + 0.8), squeeze=False,
                             sharex=True)
    flagged = [d for d in mon.drops if injected is None or d > injected]
    for ax, name in zip(axes.flat, names):
        ax.plot(xs, wtrace[name], color="#e66101", linewidth=1.3,
                label=f"last {window} pages (window)")
        ax.plot(xs, trace[name], color="#1b4f9c", linewidth=2.4, label="all time")
        if injected is not None:
            ax.axvspan(injected, xs[-1], color="0.5", alpha=0.08,
                       label="degraded predictions (after the drop)")
            ax.axvline(injected, color="0.35", linestyle="--", linewidth=1.2,
                       label="quality drop injected")
        if name == mon.watch:  # the Monitor watches one metric: its flags belong on its panel
            for d in mon.drops:
                first = bool(flagged) and d == flagged[0]
                ax.axvline(d, color=FLAG_COLOR, linewidth=2.0 if first else 0.8,
                           alpha=1.0 if first else 0.5,
                           label=f"Monitor flags a drop of {mon.watch} (page {d})" if first else None)
        if broke is not None and name == mon.watch:  # what broke, where the drop was flagged
            ax.annotate(f"what broke: {what_broke(broke[1])}".replace("; ", ";\n"),
                        xy=(broke[0], 0.05), xycoords=("data", "axes fraction"),
                        xytext=(-6, 0), textcoords="offset points", ha="right", fontsize=7.5,
                        color=FLAG_COLOR, bbox={"boxstyle": "round", "fc": "white", "ec": FLAG_COLOR,
                                               "alpha": 0.9})
        ax.set_title(name + (" (watched)" if name == mon.watch else ""), fontsize=11)
        ax.set_ylabel(f"{name} value")
        ax.grid(alpha=0.3)
        if mon.all_time.metrics[name].bounds[1] == 1.0:
            ax.set_ylim(min(0.0, min(wtrace[name] + trace[name])), 1.02)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("pages seen")
    legend: dict = {}  # label -> handle, in drawing order, across the panels
    for ax in axes.flat[:len(names)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=min(len(legend), 3),
               fontsize=9, frameon=False)
    story = "no quality drop injected"
    if injected is not None:
        story = (f"a quality drop injected at page {injected}, "
                 + ("flagged by the Monitor" if flagged else "not flagged by the Monitor"))
    fig.suptitle(f"streameval demo: {xs[-1]} pages (seed {seed}); {story}", fontsize=11)
    fig.tight_layout(rect=(0, 0.09 if len(legend) > 3 else 0.05, 1, 1))
    return fig


def add_parser(sub) -> None:
    """Add ``demo`` to ``sub`` (an ``add_subparsers()`` object). O(options).

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="streameval")
    >>> add_parser(parser.add_subparsers())
    >>> args = parser.parse_args(["demo"])
    >>> args.func is cmd_demo, args.pages, args.seed
    (True, 20000, 0)
    """
    p = sub.add_parser("demo", help="stream a generated page stream through every metric",
                       description="Generate a page stream and an online clusterer's segmentation "
                       "of it (from a seed; nothing is downloaded), stream it through every O(1) "
                       "metric, print the final table and plot the metrics along the stream.")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--pages", type=positive, default=20000, help="pages in the stream (default 20000)")
    p.add_argument("--plot", default="streameval-demo.png", metavar="PATH",
                   help="PNG file for the plot (default streameval-demo.png; '' for none)")
    p.add_argument("--points", type=positive, default=200,
                   help="how many times along the stream the metrics are recorded (default 200)")
    p.add_argument("--metrics", nargs="+", metavar="NAME", help=METRICS_HELP)
    p.add_argument("--window", type=positive, default=1000, metavar="N",
                   help="the window of the windowed metrics, in pages (default 1000)")
    p.add_argument("--drop", type=fraction, default=0.5, metavar="F",
                   help="inject a quality drop after this fraction of the stream (default 0.5; "
                   "1: none): the segmenter starts merging neighbouring documents")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_demo)
