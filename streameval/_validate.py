"""Input checks shared by the streaming objects. Each raises before any state is touched.

One rule for missing labels, used by every path (``update``, ``update_many``, the batch functions,
the intrinsic summaries): a label is *missing* when it is ``None``, ``pandas.NA``, or a value
unequal to itself (float NaN from Python or numpy, ``pandas.NaT``, ``numpy.datetime64("NaT")``).

>>> import math
>>> [is_missing(v) for v in (None, math.nan, float("nan"), 0, "", (math.nan,))]
[True, True, True, False, False, False]
>>> check_weight(2.0), MAX_TOTAL == 2**57
(2, True)
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import Any

import numpy as np

from .errors import InvalidLabelError, InvalidWeightError, MissingLabelError

MAX_TOTAL = 2**57
"""Every count (a weight, a cell, a table's total ``n``) must stay below ``2**57`` (about
1.4·10¹⁷): every running sum of the table then fits in a signed 128-bit integer (the largest,
``Σ x log x · 2**64``, stays below ``2**127``)."""


def is_missing(y) -> bool:
    """``True`` for ``None``, ``pandas.NA`` and values unequal to themselves (NaN, ``NaT``). O(1).

    A tuple holding a NaN is a label (tuples compare element by element, by identity first).
    """
    if y is None:
        return True
    pd = sys.modules.get("pandas")
    if pd is not None and (y is pd.NA or y is pd.NaT):
        return True
    try:
        r = y != y  # NaN and NaT are the values unequal to themselves
        return r is True or (type(r) is np.bool_ and bool(r))
    except Exception:  # pragma: no cover - exotic objects whose != raises
        return False


def missing_repr(y) -> str:
    """How a missing label is named in error messages: ``NaN`` for a float NaN, else ``repr``."""
    if isinstance(y, float) and y != y:
        return "NaN"
    return repr(y)


_CONTINGENCY_HINT = (
    '; pass a label, or use Contingency(missing="skip") to skip and count such elements'
)


def check_label(y, name: str, hint: str = _CONTINGENCY_HINT):
    """Return ``y`` if it can name a cluster, else raise a clear error.

    :class:`~streameval.errors.MissingLabelError` for a missing label (see :func:`is_missing`),
    :class:`~streameval.errors.InvalidLabelError` for an unhashable one.
    """
    if is_missing(y):
        raise MissingLabelError(f"{name} is missing ({missing_repr(y)}){hint}")
    try:
        hash(y)
    except TypeError:
        raise InvalidLabelError(
            f"{name} must be hashable to name a cluster, got {type(y).__name__}: {y!r}"
        ) from None
    return y


def check_weight(w) -> int:
    """Return ``w`` as a positive ``int`` below ``2**57``; accept integral floats (River's ``1.0``).

    The bound: a table's total ``n`` (after the update) must stay below ``2**57``, so a single
    weight of ``2**57`` or more can never be added (the table also checks ``n + w``).
    """
    if w.__class__ is int:
        if 0 < w < MAX_TOTAL:
            return w
    elif isinstance(w, bool):
        pass
    elif isinstance(w, numbers.Integral):
        if 0 < int(w) < MAX_TOTAL:
            return int(w)
    elif isinstance(w, numbers.Real):
        try:
            f = float(w)
        except OverflowError:  # an int-like Real too large for a float
            f = math.inf
        if math.isfinite(f) and 0 < f < MAX_TOTAL and f == int(f):
            return int(f)
    too_big = False
    if isinstance(w, numbers.Real) and not isinstance(w, bool):
        real: Any = w  # the numbers ABCs declare no comparison with an int
        try:
            too_big = real >= MAX_TOTAL and (isinstance(w, numbers.Integral) or math.isfinite(w))
        except (OverflowError, TypeError, ValueError):  # pragma: no cover - exotic numbers
            too_big = False
    if too_big:
        raise InvalidWeightError(
            f"weight w={w!r} is too large: a weight, and a table's total count, must stay below "
            "2**57"
        )
    raise InvalidWeightError(
        f"weight w must be a positive integer multiplicity (an integral float such as 1.0 is "
        f"accepted), got {w!r}"
    )


def check_labels(y_true, y_pred, skip: bool):
    """``(y_true, y_pred)`` if both can name clusters; ``None`` when one is missing and ``skip``.

    Otherwise raise :class:`~streameval.errors.MissingLabelError` or
    :class:`~streameval.errors.InvalidLabelError` naming the argument. Never compares labels with
    each other, so array-like labels cannot broadcast. O(1).
    """
    try:
        bad = bool(y_true is None or y_true != y_true or y_pred is None or y_pred != y_pred)
        hash(y_true), hash(y_pred)
    except (TypeError, ValueError):
        bad = True
    if not bad:
        return y_true, y_pred
    if skip and (is_missing(y_true) or is_missing(y_pred)):
        return None
    check_label(y_true, "y_true")
    check_label(y_pred, "y_pred")
    raise InvalidLabelError(f"invalid labels {y_true!r}, {y_pred!r}")  # pragma: no cover


def check_total(n: int, w: int, what: str = "the table") -> None:
    """Raise :class:`~streameval.errors.InvalidWeightError` unless ``n + w < 2**57``. O(1)."""
    if n + w >= MAX_TOTAL:
        raise InvalidWeightError(
            f"adding w={w} to {what}, which holds {n} elements, would reach 2**57: the total count "
            "must stay below 2**57"
        )
