"""``--sample DESIGN`` of ``score`` and ``watch``: rows whose true label is empty are unlabelled,
the labelled rows are a sample of whole entities, and the metrics are estimates ± standard error
(:class:`~streameval.SampleEstimator`).

>>> print(estimate_table({"pairwise_precision": (0.5, 0.1, 0.3, 0.7, None)}))
estimate                 value      stderr         low        high
pairwise_precision    0.500000    0.100000    0.300000    0.700000
"""

from __future__ import annotations

import json

from ..errors import InputError, StreamevalError
from ..io import LineSource, iter_parquet_rows, iter_text_rows
from .options import ErrorPolicy, format_or_usage, row_spec
from .render import finite, text_table, warn

__all__ = ["add_sample_option", "cmd_score_sample", "estimate_table", "estimate_json",
           "sample_values"]

FIELDS = ("value", "stderr", "low", "high")


def add_sample_option(p) -> None:
    """Add ``--sample {uniform,size}`` to the parser ``p``. O(1).

    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_sample_option(p)
    >>> p.parse_args(["--sample", "size"]).sample, p.parse_args([]).sample
    ('size', None)
    """
    p.add_argument("--sample", choices=("uniform", "size"), metavar="DESIGN",
                   help="the labelled rows are a sample of whole entities drawn 'uniform'ly or by "
                   "'size'; rows with an empty true label are unlabelled: report estimates with "
                   "standard errors and 95%% intervals")


def estimate_table(estimates: dict) -> str:
    """``{name: Estimate}`` as an aligned table of value, stderr, low, high. O(estimates).

    >>> from streameval.sampling import Estimate
    >>> print(estimate_table({"pairwise_recall": Estimate(0.75, 0.25, 0.26, 1.24, None)}))
    estimate              value    stderr       low      high
    pairwise_recall    0.750000  0.250000  0.260000  1.240000
    """
    return text_table({k: list(e[:4]) for k, e in estimates.items()},
                      header=("estimate", *FIELDS))


def estimate_json(est) -> dict:
    """The estimator's reading as JSON-ready data (NaN as ``null``). O(estimates).

    >>> from streameval import SampleEstimator
    >>> est = SampleEstimator(); est.update("a", 1); est.update("a", 1)
    >>> d = estimate_json(est)
    >>> d["pairwise_precision"], d["labelled_share"]   # one entity: no standard error
    ({'value': 1.0, 'stderr': None, 'low': None, 'high': None}, 1.0)
    """
    out: dict = {k: {f: finite(v) for f, v in zip(FIELDS, e[:4])}
                 for k, e in est.get().items()}
    out["labelled_share"] = finite(est.labelled_share)
    out["sampled_entities"] = est.n_sampled
    return out


def sample_values(est) -> dict:
    """What ``watch --sample`` reports: ``{"all": {name: value}, "estimates": {name: {"stderr",
    "low", "high"}}, "labelled_share": share}`` (the point values where the tables' values go).
    O(estimates).

    >>> from streameval import SampleEstimator
    >>> est = SampleEstimator(); est.update("a", 1); est.update("a", 1)
    >>> v = sample_values(est)
    >>> v["all"]["pairwise_recall"], v["labelled_share"]
    (1.0, 1.0)
    """
    got = est.get()
    return {"all": {k: e.value for k, e in got.items()},
            "estimates": {k: {"stderr": e.stderr, "low": e.low, "high": e.high}
                          for k, e in got.items()},
            "labelled_share": est.labelled_share}


def cmd_score_sample(args) -> int:
    """``streameval score --sample DESIGN``: one update per row. O(1) per row plus the sampled
    entities of the row's predicted cluster.

    Every row labelled, two entities each exactly one predicted cluster: every estimate is 1 with
    a standard error of 0.

    >>> import os, tempfile
    >>> from streameval.cli import main
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p\\n0,a\\n0,a\\n1,b\\n1,b\\n")
    >>> main(["score", path, "--true", "t", "--pred", "p", "--sample", "uniform",
    ...       "--format", "json"])   # doctest: +ELLIPSIS
    {"pairwise_precision": {"value": 1.0, "stderr": 0.0, ...}, ..., "labelled_share": 1.0, "sampled_entities": 2}
    0
    >>> tmp.cleanup()
    """
    from ..sample import SampleEstimator

    policy = ErrorPolicy(args.on_error)
    spec = row_spec(args)
    fmt = format_or_usage(args.file, args.input_format)
    est = SampleEstimator(design=args.sample)
    source = None
    if fmt == "parquet":
        found = iter_parquet_rows(args.file, spec, policy)
    else:
        source = LineSource.open(args.file, max_line=args.max_line_bytes)
        found = iter_text_rows(source, fmt, spec, policy)
    rows = 0
    try:
        for row in found:
            try:
                est.update(row[0], row[1], row[2])
            except StreamevalError as e:
                policy(InputError(args.file, rows + 1, str(e), unit="data row"))
                continue
            rows += 1
    finally:
        if source is not None:
            source.close()
    if args.format == "json":
        print(json.dumps(estimate_json(est)))
    else:
        print(f"{args.file}: {rows} rows, {est.n} elements, {est.n_labelled} labelled "
              f"({est.labelled_share:.1%}), {est.n_sampled} sampled entities, design "
              f"{args.sample}")
        print(estimate_table(est.get()))
    if est.n_sampled < 2:
        warn("fewer than two sampled entities: the standard errors are undefined")
    policy.report()
    return 0
