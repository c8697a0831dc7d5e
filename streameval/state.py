"""Saved states: the header every ``to_dict`` writes, the check every ``from_dict`` makes, and the
JSON form of a label.

**Header.** A saved state is a JSON object whose ``"format"`` names what it is (for example
``"streameval.Contingency"``) and whose ``"version"`` the reader must know. :func:`header` writes
the pair; :func:`check_header` is the one check of a state's type, format, version and required
keys, used by :meth:`Contingency.from_dict <streameval.Contingency.from_dict>`,
:meth:`ClusterSummaries.from_dict <streameval.ClusterSummaries.from_dict>`,
:meth:`CountWindow.from_dict <streameval.CountWindow.from_dict>` and the ``watch`` checkpoint.

**Labels.** :func:`label_to_json` writes a label in one canonical, standard-JSON form, whichever
of equal labels arrived first: a string as itself; a number equal to an integer (``True``,
``1.0``, ``numpy.int64(1)``) as that integer; another finite number as a float;
``inf``/``-inf`` as ``{"float": "inf"}``/``{"float": "-inf"}`` (``NaN`` as
``{"float": "nan"}``, which only a tuple label can hold); a tuple as a list of its encoded items,
nested at most :data:`MAX_DEPTH` deep. :func:`label_from_json` reads that form back (a list as a
tuple). Other label types (bytes, dates, ...) cannot be saved and raise
:class:`~streameval.errors.InvalidLabelError`.

>>> [label_to_json(v) for v in (True, 1.0, 2.5, float("inf"), ("x", 3.0))]
[1, 1, 2.5, {'float': 'inf'}, ['x', 3]]
>>> label_from_json({"float": "-inf"}), label_from_json(["x", [1, 2]])
(-inf, ('x', (1, 2)))
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .errors import InvalidLabelError, InvalidStateError

__all__ = ["header", "check_header", "label_to_json", "label_from_json", "label_index", "MAX_DEPTH"]

MAX_DEPTH = 32
"""The deepest nesting of tuple labels that :func:`label_to_json` / :func:`label_from_json` accept."""


def header(fmt: str, version: int) -> dict[str, Any]:
    """The first two keys of a saved state: ``{"format": fmt, "version": version}``. O(1).

    >>> header("streameval.CountWindow", 1)
    {'format': 'streameval.CountWindow', 'version': 1}
    """
    return {"format": fmt, "version": version}


def check_header(state: Any, fmt: str, version: int | tuple[int, ...], keys=(), *,
                 what: str | None = None, error: type[Exception] = InvalidStateError) -> None:
    """Check that ``state`` is a dict written as ``fmt`` version ``version`` and holds every key of
    ``keys``; raise ``error`` naming the first problem (what the state should be, what was
    found). ``version`` may be a tuple of the versions read. ``what`` names the state in messages (default: the part of ``fmt`` after its last
    dot). O(len(keys)).

    >>> check_header({"format": "streameval.CountWindow", "version": 1, "size": 3},
    ...              "streameval.CountWindow", 1, ("size", "items"))
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidStateError: CountWindow state lacks the key 'items'
    >>> check_header([], "streameval.CountWindow", 1)
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidStateError: a CountWindow state must be a dict, got list
    """
    what = what or fmt.rsplit(".", 1)[-1]
    if not isinstance(state, dict):
        raise error(f"a {what} state must be a dict, got {type(state).__name__}")
    if state.get("format") != fmt:
        raise error(f"not a streameval {what} state: format is {state.get('format')!r}, "
                    f"expected {fmt!r}")
    versions = version if isinstance(version, tuple) else (version,)
    if isinstance(state.get("version"), bool) or state.get("version") not in versions:
        reads = "version" + ("s " if len(versions) > 1 else " ") + ", ".join(map(str, versions))
        raise error(f"unsupported {what} state version {state.get('version')!r:.40} "
                    f"(this streameval reads {reads})")
    for key in keys:
        if key not in state:
            raise error(f"{what} state lacks the key {key!r}")


def label_to_json(v, _depth: int = 0):
    """The canonical standard-JSON form of label ``v`` (see the module docstring). O(size of v).

    >>> import numpy as np
    >>> label_to_json(np.float64(3.0)), label_to_json(-0.0), label_to_json(float("-inf"))
    (3, 0, {'float': '-inf'})
    """
    if isinstance(v, str):
        return str(v)
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isfinite(f):
            return int(f) if f.is_integer() else f
        return {"float": "nan" if f != f else ("inf" if f > 0 else "-inf")}
    if isinstance(v, tuple):
        if _depth >= MAX_DEPTH:
            raise InvalidLabelError(
                f"a tuple label nested more than {MAX_DEPTH} deep cannot be saved as JSON"
            )
        return [label_to_json(x, _depth + 1) for x in v]
    if v is None:
        return None
    raise InvalidLabelError(
        f"label {v!r} of type {type(v).__name__} cannot be saved as JSON; use str, int, float, "
        "bool or tuples of these"
    )


_FLOATS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def label_from_json(v, _depth: int = 0, *, fresh_nan: bool = False):
    """Read a label written by :func:`label_to_json` (a list becomes a tuple). O(size of v).

    ``fresh_nan``: each ``{"float": "nan"}`` becomes a new NaN object. Tuples holding NaN are
    equal only when they hold the *same* NaN object (Python compares tuple items by identity
    first), so two distinct labels ``(nan, 1)`` of a table are read back as two distinct labels
    from a saved label index (:func:`label_index`), where each label is written once.

    Raises :class:`~streameval.errors.InvalidLabelError` for anything that form cannot hold
    (objects other than ``{"float": ...}``, nesting deeper than :data:`MAX_DEPTH`).

    >>> label_from_json([1, {"float": "inf"}, "a"])
    (1, inf, 'a')
    """
    if isinstance(v, list):
        if _depth >= MAX_DEPTH:
            raise InvalidLabelError(f"a label nested more than {MAX_DEPTH} deep is not accepted")
        return tuple(label_from_json(x, _depth + 1, fresh_nan=fresh_nan) for x in v)
    if v is None or isinstance(v, (str, int, float)):
        return v
    if isinstance(v, dict) and len(v) == 1 and v.get("float") in _FLOATS:
        return float("nan") if fresh_nan and v["float"] == "nan" else _FLOATS[v["float"]]
    raise InvalidLabelError(
        f"{v!r} is not a saved label (str, int, float, a list, or {{'float': 'inf'|'-inf'|'nan'}})"
    )


def label_index(labels) -> tuple[list, dict]:
    """Each distinct label of ``labels`` once: ``(their JSON forms, {label: position})``.

    A saved state writes each label once, in this index, and refers to it by position (a label
    of 100 MiB in ten cells is written once, not ten times). The order is canonical: by the
    label's JSON text (labels equal under Python's equality are one entry, written in
    :func:`label_to_json`'s form whichever arrived first); labels with the same text (distinct
    tuples holding NaN) keep the order they came in. O(k log k) for ``k`` distinct labels.

    >>> forms, where = label_index(["b", 1, "a", 1.0, True, "b"])
    >>> forms, where["a"], where[1]
    (['a', 'b', 1], 0, 2)
    """
    import json

    distinct = list(dict.fromkeys(labels))  # Python equality: 1, 1.0, True are one label
    encoded = [label_to_json(v) for v in distinct]
    texts = [json.dumps(e, ensure_ascii=False, allow_nan=False) for e in encoded]
    order = sorted(range(len(distinct)), key=texts.__getitem__)  # stable: ties keep their order
    return [encoded[i] for i in order], {distinct[i]: k for k, i in enumerate(order)}
