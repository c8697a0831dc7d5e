"""What every subcommand prints: one-line messages on standard error, metric tables, JSON values,
progress bars.

>>> print(text_table({"ELM": [0.5], "ARI": [float("nan")]}))
metric       value
ELM       0.500000
ARI            nan
"""

from __future__ import annotations

import json
import math
import sys

from ..errors import install_hint

__all__ = ["PROG", "EXTRA_HINT", "warn", "finite", "text_table", "print_values", "progress"]

PROG = "streameval"
EXTRA_HINT = install_hint("cli")


def warn(msg: str) -> None:
    """``streameval: msg`` on standard error (flushed). O(length).

    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     warn("resumed from watch.ckpt")
    >>> err.getvalue()
    'streameval: resumed from watch.ckpt\\n'
    """
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def finite(v):
    """``v`` if it is a finite number, else ``None`` (JSON has no NaN or infinity). O(1).

    >>> finite(0.5), finite(float("nan")), finite("x")
    (0.5, None, None)
    """
    return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def text_table(columns: dict, header=("metric", "value")) -> str:
    """Rows ``name: [values...]`` as an aligned text table (6 decimals, ``nan`` for missing).
    O(cells).

    >>> print(text_table({"ELM": [0.5], "Rand": [float("nan")]}))
    metric       value
    ELM       0.500000
    Rand           nan
    """
    names = list(columns)
    width = max([len(header[0])] + [len(n) for n in names])
    lines = ["  ".join([header[0].ljust(width)] + [h.rjust(10) for h in header[1:]])]
    for n in names:
        cells = ["nan" if v is None or v != v else f"{v:.6f}" for v in columns[n]]
        lines.append("  ".join([n.ljust(width)] + [c.rjust(10) for c in cells]))
    return "\n".join(lines)


def print_values(ev, fmt: str, title: str, extra: dict | None = None) -> None:
    """The evaluator's values (and ``extra`` ones): a JSON object of name to value, or ``title``
    and a table. Cost: one :meth:`Evaluator.get <streameval.Evaluator.get>` and O(metrics).

    >>> from streameval import Evaluator, Purity
    >>> ev = Evaluator([Purity()]); ev.update_many([0, 0, 1], ["a", "a", "a"])
    >>> print_values(ev, "json", "unused", {"rows": 3})      # purity 2/3: column a's majority
    {"Purity": 0.6666666666666666, "rows": 3}
    """
    values = ev.get()
    values.update(extra or {})
    if fmt == "json":
        print(json.dumps({k: finite(v) for k, v in values.items()}))
    else:
        print(title)
        print(text_table({k: [v] for k, v in values.items()}))


class _Silent:
    def update(self, n=1):
        pass

    def close(self):
        pass


def progress(total: int, desc: str, enabled: bool, unit: str = "row"):
    """A tqdm bar on a terminal, or a silent counter otherwise. O(1) per ``update``.

    >>> bar = progress(10, "rows", enabled=False); bar.update(5); bar.close()
    >>> type(bar).__name__
    '_Silent'
    """
    if enabled and sys.stderr.isatty():
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "B",
                        file=sys.stderr, leave=False)
        except ImportError:
            pass
    return _Silent()
