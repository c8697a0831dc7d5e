"""Input checks shared by the streaming objects. Each raises before any state is touched."""

from __future__ import annotations

import math
import numbers

from .errors import InvalidLabelError, InvalidWeightError, MissingLabelError


def is_missing(y) -> bool:
    """``True`` for ``None`` and for float NaN (Python's or numpy's)."""
    if y is None:
        return True
    try:
        return bool(y != y)  # NaN is the one value unequal to itself
    except Exception:  # pragma: no cover - exotic objects whose != raises
        return False


def check_label(y, name: str):
    """Return ``y`` if it can name a cluster, else raise a clear error."""
    if y is None:
        raise MissingLabelError(
            f"{name} is missing (None); pass a label, or use Contingency(missing=\"skip\") "
            "to skip and count such elements"
        )
    try:
        hash(y)
    except TypeError:
        raise InvalidLabelError(
            f"{name} must be hashable to name a cluster, got {type(y).__name__}: {y!r}"
        ) from None
    if is_missing(y):
        raise MissingLabelError(
            f"{name} is missing (NaN); pass a label, or use Contingency(missing=\"skip\") "
            "to skip and count such elements"
        )
    return y


def check_weight(w) -> int:
    """Return ``w`` as a positive ``int``; accept integral floats (River passes ``1.0``)."""
    if w.__class__ is int:
        if w > 0:
            return w
    elif isinstance(w, bool):
        pass
    elif isinstance(w, numbers.Integral):
        if int(w) > 0:
            return int(w)
    elif isinstance(w, numbers.Real):
        f = float(w)
        if math.isfinite(f) and f > 0 and f == int(f):
            return int(f)
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
        bad = y_true is None or y_true != y_true or y_pred is None or y_pred != y_pred
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


def check_total(n: int, w: int) -> None:
    """Raise :class:`~streameval.errors.InvalidWeightError` unless a table of ``n`` elements can
    take ``w`` more: a table holds fewer than ``2**57`` elements (``stats.MAX_TOTAL``). O(1)."""
    if n + w >= 1 << 57:
        raise InvalidWeightError(
            f"weight {w} is too large: adding it to a table of {n} elements would reach the "
            "supported bound of 2**57 elements"
        )
