"""The ``streameval`` command line: ``demo``, ``score``, ``watch``, ``pss``, ``grafana``, ``alerts``.

- ``streameval demo``: a generated page stream segmented by an online clusterer, with a quality drop
  injected half-way, streamed through a :class:`~streameval.Monitor`; prints the final table and
  plots all-time against windowed metrics and the point where the drop is flagged (PNG).
- ``streameval score FILE --true COL --pred COL``: the metrics of a whole file (CSV, TSV, JSON lines,
  Parquet), as a table or as a JSON object of metric name to value.
- ``streameval watch FILE|-``: rows as they arrive (``--follow`` a growing file like ``tail -f``),
  all-time and windowed metrics, a line every N rows or T seconds, JSON lines, a Prometheus endpoint,
  and a JSON checkpoint (saved atomically on a schedule and on exit) to resume from.
- ``streameval compare GOLD SYS...``: intervals and paired tests over units (``score --ci`` and
  ``pss --compare`` too).
- ``streameval pss``: page-stream segmentation scoring, from :mod:`streameval.pss`.
- ``streameval grafana`` / ``streameval alerts``: print the Grafana dashboard and the Prometheus
  alert rules shipped in ``streameval/data/``.

``--metrics`` takes the names :func:`streameval.metrics.resolve` reads, in every subcommand.
One module per subcommand: :mod:`.score`, :mod:`.watch` (its state in :mod:`.watch_state`, the
reader's hand-over in :mod:`.feed`, :mod:`.checkpoint`, :mod:`.prometheus`), :mod:`.demo`,
:mod:`.pss`, :mod:`.compare`, :mod:`.data`; what they share in :mod:`.options` and
:mod:`.render`. The library never imports this package; it imports the library.

Exit status, the same in every subcommand: 0 on success (a watch stopped with Ctrl-C or SIGTERM
included), 1 on bad input or a refused checkpoint, 2 on a usage error. Errors are one line on
standard error, never a traceback.

>>> main(["score", "--help"])  # doctest: +ELLIPSIS
usage: streameval score [-h] --true COL --pred COL ...
...
0
"""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import CLIError, StreamevalError
from .demo import make_demo_stream
from .render import PROG, warn

__all__ = ["main", "build_parser", "console", "make_demo_stream", "CLIError"]


def build_parser() -> argparse.ArgumentParser:
    """The ``streameval`` argument parser (``pss``'s own options come from :mod:`streameval.pss`).
    O(options), once per run.

    >>> args = build_parser().parse_args(["score", "rows.csv", "--true", "t", "--pred", "p"])
    >>> args.command, args.file, args.true, args.pred, args.format
    ('score', 'rows.csv', 't', 'p', 'table')
    """
    from .. import __version__
    from . import compare, data, demo, pss, score, watch

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Exact streaming evaluation of clusterings: score files, watch live streams.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    demo.add_parser(sub)
    score.add_parser(sub)
    compare.add_parser(sub)  # streameval compare GOLD SYS... --unit COL
    watch.add_parser(sub)
    data.add_parsers(sub)
    pss.add_parser(sub)
    return parser


def main(argv=None) -> int:
    """Run the command line; return the exit status (0 success, 1 bad input, 2 usage error).
    Cost: the subcommand's (each states its own; ``score`` O(1) per row).

    Four rows, hand-checked: the table ``n[0,a] = 2``, ``n[1,a] = n[1,b] = 1`` has Rand ``3/6``
    (of 6 pairs, 3 agree) and purity ``(2 + 1)/4``:

    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p\\n0,a\\n0,a\\n1,a\\n1,b\\n")
    >>> main(["score", path, "--true", "t", "--pred", "p", "--metrics", "Rand", "Purity",
    ...       "--format", "json"])
    {"Rand": 0.5, "Purity": 0.75}
    0
    >>> main(["score", path, "--true", "t", "--pred", "nope"])   # one line on standard error
    1
    >>> main(["score", path, "--bad-option"])                    # a usage error
    2
    >>> tmp.cleanup()
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "pss":
            from .pss import cmd_pss

            return cmd_pss(argv[1:])
        args = build_parser().parse_args(argv)
        return args.func(args)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except (CLIError, StreamevalError) as e:  # InputError is a StreamevalError
        warn(f"error: {e}")
        return 1
    except KeyboardInterrupt:
        warn("interrupted")
        return 130
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            # the reader went away (e.g. '| head'); silence the flush at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        where = f"{e.filename}: " if e.filename else ""
        warn(f"error: {where}{e.strerror or e}")
        return 1


def console() -> None:  # the console script's entry point
    """The ``streameval`` console script: :func:`main` on ``sys.argv``, its status as the process's
    exit status. Cost: the subcommand's.

    >>> from unittest import mock
    >>> with mock.patch("sys.argv", ["streameval", "--version"]):
    ...     try:
    ...         console()
    ...     except SystemExit as e:
    ...         print("exit", e.code)
    streameval ...
    exit 0
    """
    sys.exit(main())
