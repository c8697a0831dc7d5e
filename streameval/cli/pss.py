"""``streameval pss``: page-stream segmentation scoring of a gold and a predicted page-stream
file with :class:`~streameval.pss.PageStreamEvaluator` (``--compare``: intervals and paired tests,
:mod:`.compare`)."""

from __future__ import annotations

import argparse
import json
import math
import sys

from ..errors import PageStreamError, StreamevalError
from ..io import load_streams
from ..metrics import resolve
from ..pss import PageStreamEvaluator, check_streams
from .render import PROG

__all__ = ["cmd_pss", "configure_parser", "main", "pick_metrics"]


def pick_metrics(spec):
    """Fresh metrics named by ``--metrics`` (:func:`streameval.metrics.resolve`'s syntax). O(names).

    >>> [m.name for m in pick_metrics(["ELM,BCubed"])]
    ['ELM', 'BCubed']
    """
    names = [spec] if isinstance(spec, str) else list(spec)
    if not " ".join(names).replace(",", " ").split():
        raise PageStreamError("--metrics names no metric")
    return [cls() for cls in resolve(names)]


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the ``pss`` arguments: gold and predictions files, format, metrics, options. O(options).

    >>> import argparse
    >>> p = argparse.ArgumentParser(prog="streameval pss")
    >>> configure_parser(p)
    >>> a = p.parse_args(["gold.json", "pred.json", "--format", "json", "--metrics", "ELM"])
    >>> a.gold, a.predictions, a.format, a.metrics, a.original_make_index
    ('gold.json', 'pred.json', 'json', ['ELM'], False)
    """
    parser.add_argument("gold", help="gold page-stream file (.json {stream: [0/1]} or .csv stream,page,flag)")
    parser.add_argument("predictions", help="predicted page-stream file, same format and streams")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="report format")
    parser.add_argument(
        "--input-format", choices=("auto", "json", "csv"), default="auto",
        help="format of both input files (default: by extension)",
    )
    parser.add_argument(
        "--metrics", nargs="+", default=["ELM,BCubed"], metavar="NAME",
        help="metric names, separated by commas or spaces: class names, scikit-learn function "
        "names or short forms (ARI, NMI, ...); 'all' for every O(1) metric (default: ELM,BCubed)",
    )
    parser.add_argument("--per-stream", action="store_true", help="also report every stream")
    parser.add_argument(
        "--original-make-index", action="store_true",
        help="reproduce the ELM paper code's quirk: a stream starting with 0 ignores its first 1",
    )


def _evaluate(args) -> PageStreamEvaluator:
    gold = load_streams(args.gold, args.input_format)
    pred = load_streams(args.predictions, args.input_format)
    check_streams(gold, pred)
    metrics = pick_metrics(args.metrics)
    ev = PageStreamEvaluator(metrics, original_make_index=args.original_make_index)
    for sid, flags in gold.items():
        ev.update_stream(sid, flags, pred[sid])
    return ev


def _num(v):
    return None if isinstance(v, float) and math.isnan(v) else v


def _cell(v: float) -> str:
    return "    n/a" if math.isnan(v) else f"{v:7.4f}"


def _report(ev: PageStreamEvaluator, fmt: str, per_stream: bool) -> str:
    summary = ev.summary()
    pages = sum(ps.pages for ps in ev.streams.values())
    if fmt == "json":
        doc = {
            "streams": len(ev.streams),
            "pages": pages,
            "metrics": {k: {kk: _num(vv) for kk, vv in v.items()} for k, v in summary.items()},
        }
        if per_stream:
            doc["per_stream"] = {
                str(s): {k: _num(v) for k, v in vals.items()} for s, vals in ev.per_stream().items()
            }
        return json.dumps(doc, indent=2)
    width = max(len("metric"), *(len(k) for k in summary))
    lines = [
        f"{len(ev.streams)} streams, {pages} pages",
        f"{'metric':<{width}}  {'mean':>7}  {'sd':>7}  {'pooled':>7}",
    ]
    for name, s in summary.items():
        lines.append(f"{name:<{width}}  " + "  ".join(_cell(s[k]) for k in ("mean", "sd", "pooled")))
    if per_stream:
        names = list(summary)
        lines += ["", "stream\t" + "\t".join(names)]
        for sid, vals in ev.per_stream().items():
            lines.append(f"{sid}\t" + "\t".join(f"{vals[n]:.4f}" for n in names))
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """Score ``args.predictions`` against ``args.gold``; print the report; return the exit status.

    Bad input (unreadable or malformed files, mismatched streams, unknown metrics) prints one
    ``streameval pss: error: ...`` line on stderr and returns 1, as every subcommand does on bad
    input (2 is argparse's usage error). O(pages) plus the report.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for name, flags in (("g.json", [1, 0, 1, 0, 0]), ("p.json", [1, 1, 1, 0, 0])):
    ...     _ = open(os.path.join(d, name), "w").write(json.dumps({"s": flags}))
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> configure_parser(p)
    >>> main(p.parse_args([os.path.join(d, "g.json"), os.path.join(d, "p.json")]))
    1 streams, 5 pages
    metric              mean       sd   pooled
    ELM               0.6000      n/a   0.6000
    ELM.precision     1.0000      n/a   1.0000
    ELM.recall        0.6000      n/a   0.6000
    BCubed            0.8667      n/a   0.8667
    BCubed.precision  1.0000      n/a   1.0000
    BCubed.recall     0.8000      n/a   0.8000
    0
    """
    try:
        ev = _evaluate(args)
    except StreamevalError as e:
        print(f"streameval pss: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a missing or unreadable file: no raw "[Errno 2]"
        where = f"{e.filename}: " if e.filename else ""
        print(f"streameval pss: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    print(_report(ev, args.format, args.per_stream))
    return 0


def cmd_pss(argv) -> int:
    """``streameval pss ...``: parse ``argv`` with :func:`configure_parser` and run :func:`main`.
    Cost: :func:`main`'s, O(pages) plus the report.

    Gold documents ``[1, 2], [3, 4]``, predicted ``[1], [2], [3, 4]``: pages 1 and 2 have
    ``P = 1`` (alone in their segment), ``R = 0``, ``F = 0``; pages 3 and 4 score 1, so ELM is
    ``(0 + 0 + 1 + 1)/4``:

    >>> import json, os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> gold, pred = os.path.join(tmp.name, "g.json"), os.path.join(tmp.name, "p.json")
    >>> for path, flags in ((gold, [1, 0, 1, 0]), (pred, [1, 1, 1, 0])):
    ...     with open(path, "w") as f:
    ...         _ = f.write(json.dumps({"s": flags}))
    >>> cmd_pss([gold, pred, "--metrics", "ELM"])
    1 streams, 4 pages
    metric            mean       sd   pooled
    ELM             0.5000      n/a   0.5000
    ELM.precision   1.0000      n/a   1.0000
    ELM.recall      0.5000      n/a   0.5000
    0
    >>> tmp.cleanup()
    """
    if "--compare" in argv:  # intervals and paired tests: streameval.cli.compare
        from .compare import cmd_pss_compare

        return cmd_pss_compare([a for a in argv if a != "--compare"])
    parser = argparse.ArgumentParser(
        prog=f"{PROG} pss", description="Score predicted page streams against gold page streams."
    )
    configure_parser(parser)
    return int(main(parser.parse_args(argv)) or 0)


def add_parser(sub) -> None:
    """Name ``pss`` in the help of ``sub`` (its own parser is built by :func:`cmd_pss`)."""
    sub.add_parser("pss", add_help=False, help="score predicted page streams against gold ones "
                   "(see 'streameval pss --help')")
