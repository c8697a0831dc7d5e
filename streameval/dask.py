"""Exact evaluation of a Dask DataFrame, with the engine's own groupbys (nothing gathered).

The elements are grouped by cell ``(true, pred)``, the cells by true and by predicted cluster, each
groupby with an explicit ``split_out`` so every intermediate frame stays partitioned across the
workers; each cell is joined with its two cluster sizes (hash joins) for the element-averaged F.
What reaches the client is four histograms over *distinct values* (cell counts, ``(size, sq)`` per
cluster, ``(n, a, b)`` per cell) and, with vectors, the per-cluster summaries; the exact sums and
every metric are computed from them by :mod:`streameval.distributed` with the same term functions
and :meth:`Metric.value` code as the streaming :class:`~streameval.Contingency`.

Cost: a few shuffles of the cells (which are at most as many as the elements); client memory
O(distinct cell counts + distinct (size, sq) pairs + distinct (n, a, b) triples), plus O(k·d) for
the intrinsic summaries when vectors are given.

>>> import pandas as pd, dask.dataframe as dd
>>> df = pd.DataFrame({"t": [0, 0, 0, 1, 1, 1], "p": ["a", "a", "b", "b", "b", "c"]})
>>> r = evaluate(dd.from_pandas(df, npartitions=2), true="t", pred="p",
...              metrics=["ELM", "AdjustedRand"], scheduler="sync")
>>> {k: round(v, 4) for k, v in r.values.items()}
{'ELM': 0.3889, 'AdjustedRand': 0.1176, 'AdjustedMutualInfo': 0.1828}
"""

from __future__ import annotations

import numpy as np

from .distributed import (
    Histograms,
    Report,
    check_counts,
    intrinsic_values,
    make_report,
    plan_intrinsic,
    plan_metrics,
    stats_from_histograms,
)
from .summaries import ClusterSummaries

__all__ = ["evaluate", "contingency_stats", "cells"]


def _prepare(ddf, true, pred, weight, missing, extra=()):
    """``(frame with columns t, p, w [+ extra], lazy missing count, lazy bad-weight count)``."""
    import dask.dataframe as dd
    import pandas as pd

    if missing not in ("raise", "skip"):
        raise ValueError(f'missing must be "raise" or "skip", got {missing!r}')
    if isinstance(ddf, pd.DataFrame):
        import dask

        # labels as pandas holds them: Dask's default conversion of object columns to strings
        # would merge 1 and "1" and split 1 from 1.0, unlike Python equality (the library's rule)
        with dask.config.set({"dataframe.convert-string": False}):
            ddf = dd.from_pandas(ddf, npartitions=max(1, min(8, len(ddf) // 100_000 + 1)))
    need = [true, pred] + ([weight] if weight is not None else []) + list(extra)
    absent = [c for c in need if c not in ddf.columns]
    if absent:
        raise KeyError(f"columns {absent} not in the frame (it has {list(ddf.columns)})")
    clash = [c for c in extra if c in ("t", "p", "w")]
    if clash:
        raise ValueError(f"vector columns may not be named {clash}: rename them")
    miss = ddf[true].isna() | ddf[pred].isna()
    frame = ddf[[true, pred, *extra]].rename(columns={true: "t", pred: "p"})
    if weight is None:
        frame, bad, n_missing = frame.assign(w=1), 0, miss.sum()
    else:
        raw = ddf[weight]
        # a null weight (a nullable column's NA) compares as NA: counted as bad, never dropped
        good = ((raw > 0) & (raw == raw.round()) & (raw < 2.0**62)).fillna(False).astype(bool)
        bad = (~good & ~miss).sum()
        w = raw.where(good, 0).astype("int64")
        frame, n_missing = frame.assign(w=w), w[miss].sum()
    return frame[~miss], n_missing, bad


def cells(ddf, true, pred, weight=None, split_out=None, missing="raise"):
    """The lazy cells frame ``(t, p, n)``: one row per non-zero cell, ``split_out`` partitions.

    A Dask DataFrame (nothing is computed); missing labels are dropped (use :func:`evaluate` for
    the checks). Cost when computed: one groupby-sum over the elements.

    >>> import pandas as pd, dask.dataframe as dd
    >>> df = dd.from_pandas(pd.DataFrame({"t": [1, 1, 2, 1], "p": [1, 2, 2, 1]}), npartitions=2)
    >>> sorted(map(tuple, cells(df, "t", "p").compute(scheduler="sync").values.tolist()))
    [(1, 1, 2), (1, 2, 1), (2, 2, 1)]
    """
    frame, _, _ = _prepare(ddf, true, pred, weight, missing)
    return _cells(frame, split_out or frame.npartitions)


def _cells(frame, split_out):
    return frame.groupby(["t", "p"]).w.sum(split_out=split_out).rename("n").reset_index()


def _histogram_frames(c, split_out, need_fab=True):
    """Lazy ``(cells, rows, cols, fab)`` histograms from the lazy cells frame ``c``."""
    c = c.assign(sq=c.n * c.n)
    sides = {}
    for key in ("t", "p"):
        sides[key] = c.groupby(key).agg(
            size=("n", "sum"), sq=("sq", "sum"), mx=("n", "max"), split_out=split_out
        )
    hists = [c.n.value_counts(split_out=1)]
    for key in ("t", "p"):
        hists.append(
            sides[key].groupby(["size", "sq"]).agg(
                count=("mx", "count"), max_sum=("mx", "sum"), split_out=1
            )
        )
    if need_fab:
        j = c[["t", "p", "n"]].merge(
            sides["t"][["size"]].rename(columns={"size": "a"}), left_on="t", right_index=True
        )
        j = j.merge(sides["p"][["size"]].rename(columns={"size": "b"}), left_on="p", right_index=True)
        hists.append(j.groupby(["n", "a", "b"]).agg(count=("n", "count"), split_out=1))
    else:  # only the elements alone in both their clusters (for both_singletons)
        one_t = sides["t"][sides["t"]["size"] == 1][["size"]]
        one_p = sides["p"][sides["p"]["size"] == 1][["size"]].rename(columns={"size": "b"})
        j = c[c.n == 1][["t", "p", "n"]].merge(one_t, left_on="t", right_index=True)
        j = j.merge(one_p, left_on="p", right_index=True)
        hists.append(j.n.count())
    return hists


def _to_histograms(cell_h, row_h, col_h, fab_h) -> Histograms:
    """Plain-int dicts from the computed pandas histograms."""
    h = Histograms()
    h.cells = {int(n): int(c) for n, c in cell_h.items()}
    for target, frame in ((h.rows, row_h), (h.cols, col_h)):
        for (size, sq), count, max_sum in zip(frame.index, frame["count"], frame["max_sum"]):
            target[int(size), int(sq)] = (int(count), int(max_sum))
    if np.ndim(fab_h) == 0:
        h.fab = {(1, 1, 1): int(fab_h)} if int(fab_h) else {}
    else:
        h.fab = {
            (int(n), int(a), int(b)): int(c) for (n, a, b), c in zip(fab_h.index, fab_h["count"])
        }
    return h


def contingency_stats(ddf, true, pred, weight=None, f_specs=(("elm", 1.0), ("bcubed", 1.0)),
                      split_out=None, missing="raise"):
    """A lazy :class:`dask.delayed.Delayed` computing the exact ``ContingencyStats``.

    ``f_specs``: the element-averaged F sums to compute (``(kind, beta)`` pairs).
    ``.compute()`` gives stats equal, field by field, to a ``Contingency`` fed the same elements.
    Cost when computed: :func:`cells`' groupby, the histograms' groupbys over the cells, then
    O(distinct values) at the client.

    >>> import pandas as pd, dask.dataframe as dd
    >>> df = dd.from_pandas(pd.DataFrame({"t": [1, 1, 2], "p": [1, 2, 2]}), npartitions=2)
    >>> s = contingency_stats(df, "t", "p").compute(scheduler="sync")
    >>> s.n, s.cells, s.sum_col_max
    (3, 3, 2)
    """
    import dask

    frame, n_missing, bad = _prepare(ddf, true, pred, weight, missing)
    split_out = split_out or frame.npartitions
    hists = _histogram_frames(_cells(frame, split_out), split_out, need_fab=bool(f_specs))

    def build(nm, nb, *computed):
        check_counts(int(nm), int(nb), missing, "contingency_stats")
        return stats_from_histograms(_to_histograms(*computed), f_specs)

    return dask.delayed(build)(n_missing, bad, *hists)


def _summarise(part, vectors, space):
    """Per predicted cluster in one partition holding whole clusters: count, mean, scatter.

    The vectors are checked (and, in the cosine space, scaled to unit length) by
    :meth:`ClusterSummaries.vectors`, the streaming summaries' own check. Two passes over the
    partition's rows (mean, then squared deviations from it), so the scatter does not suffer the
    cancellation of ``Σ||x||² - b||mean||²``. Cost O(rows·d).
    """
    import pandas as pd

    w = part["w"].to_numpy(np.int64)
    x = ClusterSummaries(space=space).vectors(part[vectors].to_numpy(np.float64))
    keys = part["p"]
    count = pd.Series(w, index=part.index).groupby(keys, sort=False).sum()
    wf = w.astype(np.float64)
    sums = pd.DataFrame(x * wf[:, None], index=part.index, columns=vectors).groupby(
        keys, sort=False
    ).sum()
    mean = sums.to_numpy() / count.to_numpy()[:, None]
    codes = count.index.get_indexer(keys)
    dev = x - mean[codes]
    scatter = np.bincount(codes, weights=wf * (dev * dev).sum(axis=1), minlength=len(count))
    out = pd.DataFrame(mean, index=count.index, columns=vectors)
    out.insert(0, "count", count.to_numpy())
    out["scatter"] = scatter
    return out


def _silhouette_part(part, vectors, views, summaries):
    """One row: ``s<i>, w<i>`` = each silhouette view's :meth:`~streameval.intrinsic.Silhouette.score_sum`
    over this partition's points, against the broadcast summaries of its space. O(rows·k·d)."""
    import pandas as pd

    raw = part[vectors].to_numpy(np.float64)
    w = part["w"].to_numpy(np.float64)
    labels = part["p"].tolist()
    xs: dict = {}
    row = {}
    for i, view in enumerate(views):
        s = summaries[view.space]
        if view.space not in xs:
            xs[view.space] = s.vectors(raw)
        row[f"s{i}"], row[f"w{i}"] = view.score_sum(s, xs[view.space], labels, w)
    return pd.DataFrame({key: [v] for key, v in row.items()})


def _summary_frames(frame, vectors, spaces, split_out):
    """Lazy per-cluster summaries, one frame per space, from one shuffle by predicted cluster."""
    meta = {"count": "i8", **dict.fromkeys(vectors, "f8"), "scatter": "f8"}
    shuffled = frame[["p", "w", *vectors]].shuffle(on="p", npartitions=split_out)
    return [shuffled.map_partitions(_summarise, vectors, space, meta=meta) for space in spaces]


def _intrinsic(frame, vectors, views, spaces, parts, scheduler):
    """``({name: value}, {space: ClusterSummaries})``: the computed per-cluster frames rebuilt at
    the client by :meth:`ClusterSummaries.from_arrays`, then, for the silhouettes, a second pass
    with the summaries broadcast. The values are the views' own ``value``."""
    summaries = {
        space: ClusterSummaries.from_arrays(
            p["count"].to_numpy(), p[vectors].to_numpy(), p["scatter"].to_numpy(),
            labels=p.index.tolist(), space=space,
        )
        for space, p in zip(spaces, parts)
    }
    point = {name: v for name, v in views.items() if v.needs_points and summaries[v.space].k > 1}
    sums = {}
    if point:
        meta = {f"{c}{i}": "f8" for i in range(len(point)) for c in ("s", "w")}
        rows = frame[["p", "w", *vectors]].map_partitions(
            _silhouette_part, vectors, list(point.values()), summaries, meta=meta
        )
        total = rows.sum().compute(scheduler=scheduler)
        sums = {name: (float(total[f"s{i}"]), float(total[f"w{i}"])) for i, name in enumerate(point)}
    return intrinsic_values(views, summaries, sums), summaries


def evaluate(ddf, true, pred, weight=None, vectors=None, metrics=None, split_out=None,
             missing="raise", ami=True, silhouette=True, scheduler=None, intrinsic=None) -> Report:
    """Evaluate a Dask DataFrame exactly: every metric, AMI and (with vectors) intrinsic values.

    Parameters
    ----------
    ddf : dask (or pandas) DataFrame with one row per element.
    true, pred : column names of the true and predicted labels.
    weight : column of positive integer multiplicities, or ``None`` (each row counts once).
    vectors : list of feature columns; adds per-predicted-cluster summaries (count, mean,
        scatter; one set per space the views read) computed in the same ``dask.compute`` as the
        label histograms, rebuilt at the client as :class:`~streameval.ClusterSummaries` (the
        global summary by Chan merges), then the silhouettes in a second pass with the summaries
        broadcast. Each intrinsic value is the view's own :meth:`value`, so it equals the streaming
        view's (the silhouettes: their exact ``final()``), under the same key.
    metrics : metric objects or names as :func:`streameval.metrics.resolve` reads them (default:
        every O(1) metric).
    split_out : partitions of the grouped frames (default: the input's partition count).
    missing : ``"raise"`` or ``"skip"`` elements with a null/NaN label.
    ami : also report ``AdjustedMutualInfo`` (from the two cluster-size histograms).
    silhouette : ``False`` leaves out the silhouettes (their pass costs O(N·k·d)).
    scheduler : passed to ``dask.compute`` (default: the active client or Dask's default).
    intrinsic : the intrinsic views, as :class:`~streameval.IntrinsicEvaluator` takes them
        (default: every registered Euclidean view; see
        :func:`~streameval.distributed.plan_intrinsic`). A cosine view adds the unit-vector
        summaries, and a zero vector is then rejected.

    Returns a :class:`~streameval.distributed.Report` (``intrinsic``: ``{name: value}``;
    ``summaries``: ``{space: ClusterSummaries}``). The label table is never gathered into
    one process: the client receives histograms over distinct values (and k·d summaries).
    Bad vectors (NaN, infinite; zero in the cosine space) raise
    :class:`~streameval.errors.InvalidVectorError`. Cost: one ``dask.compute`` of groupbys over
    the elements and the cells (and the summaries, O(N·d)), O(distinct values) at the client, a
    second pass over the points for the silhouettes.

    Cells ``(1, 1), (1, 2), (2, 2)``, one element each: no pair is linked on both sides, one in
    each labelling, so Rand is ``(3 - 1 - 1)/3``; purity ``(1 + 1)/3``:

    >>> import pandas as pd, dask.dataframe as dd
    >>> df = dd.from_pandas(pd.DataFrame({"t": [1, 1, 2], "p": [1, 2, 2]}), npartitions=2)
    >>> evaluate(df, "t", "p", metrics=["Rand", "Purity"], ami=False, scheduler="sync").values
    {'Rand': 0.333..., 'Purity': 0.666...}
    """
    import dask

    vectors = list(vectors) if vectors is not None else []
    chosen, f_specs = plan_metrics(metrics)
    views = plan_intrinsic(intrinsic, points=silhouette) if vectors else {}
    frame, n_missing, bad = _prepare(ddf, true, pred, weight, missing, extra=vectors)
    split_out = split_out or frame.npartitions
    hists = _histogram_frames(_cells(frame, split_out), split_out, need_fab=bool(f_specs))
    spaces = sorted({v.space for v in views.values()})
    todo = [n_missing, bad, *hists, *_summary_frames(frame, vectors, spaces, split_out)]
    out = dask.compute(*todo, scheduler=scheduler)
    nm, nb = int(out[0]), int(out[1])
    check_counts(nm, nb, missing, "evaluate")
    h = _to_histograms(*out[2:6])
    values, summaries = _intrinsic(frame, vectors, views, spaces, out[6:], scheduler)
    report = make_report(h, chosen, f_specs, ami=ami, skipped=nm if missing == "skip" else 0,
                         intrinsic=values if vectors else None)
    report.summaries = summaries if vectors else None
    return report
