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
from collections.abc import Mapping, MappingView, Set
from typing import Any

import numpy as np

from .errors import (
    InvalidLabelError,
    InvalidVectorError,
    InvalidWeightError,
    MissingLabelError,
    SettingsMismatchError,
)

MAX_TOTAL = 2**57
"""Every count (a weight, a cell, a table's total ``n``) must stay below ``2**57`` (about
1.4·10¹⁷): every running sum of the table then fits in a signed 128-bit integer (the largest,
``Σ x log x · 2**64``, stays below ``2**127``)."""


MAX_VECTOR_VALUE = 2.0**256
"""Every value of a feature vector must have a magnitude below ``2**256`` (about 1.2·10⁷⁷): then
every squared distance between two vectors or means (below ``d·2**514``), and every scatter or sum
of squares over fewer than ``2**57`` elements (below ``d·2**571``), stays finite for any dimension
``d`` below ``2**452``. A larger value would turn the sums into ``inf`` or ``NaN``."""


def real_array(x, what: str, copy: bool = True) -> np.ndarray:
    """``x`` (a vector, or rows of vectors) as a float64 array (a new one, or ``x`` itself when it
    is one and not ``copy``), refusing with
    :class:`~streameval.errors.InvalidVectorError` what a float64 conversion would misread
    silently: complex values (numpy drops the imaginary part), strings and bytes (numpy parses
    ``"1"``), dates, and integers too large for a float. Booleans read as 0 and 1; ``None`` reads
    as NaN (refused by the callers' finiteness check). Ragged input is refused. The values are
    not checked here for finiteness or size (:func:`vector_problem`). O(size).

    >>> real_array([1, 2.5], "vector").tolist()
    [1.0, 2.5]
    >>> real_array(["1", 2.0], "vector")
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidVectorError: vector values must be real numbers, got text or bytes: ['1', '2.0']
    """
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        return x.copy() if copy else x
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError, OverflowError) as e:
        raise InvalidVectorError(f"{what} values must be numbers: {e}") from None
    kind = arr.dtype.kind
    if kind == "O":
        for v in arr.flat:
            if isinstance(v, (str, bytes)):
                kind = "U"
                break
            if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
                kind = "c"
                break
    if kind == "c":
        raise InvalidVectorError(
            f"{what} values must be real numbers, got complex values (the imaginary part would be "
            f"lost): {_short(arr)}"
        )
    if kind in "USaVmM":
        raise InvalidVectorError(
            f"{what} values must be real numbers, got "
            f"{'text or bytes' if kind in 'USaO' else arr.dtype}: {_short(arr)}"
        )
    try:
        return np.array(arr, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as e:
        raise InvalidVectorError(f"{what} values must be numbers: {e}") from None


def _short(arr: np.ndarray) -> str:
    return f"{arr.ravel()[:8].tolist()!r:.200}"


def vector_problem(arr: np.ndarray) -> str | None:
    """Why a float64 vector (or block of them) is refused: ``"has a non-finite value"``, ``"has
    a value of magnitude 2**256 or more"`` (see :data:`MAX_VECTOR_VALUE`), or ``None``. O(size).

    >>> vector_problem(np.array([1.0, 2.0**256])), vector_problem(np.array([-1e300, 1.0])) is None
    ('has a value of magnitude 2**256 or more', False)
    """
    if not np.isfinite(arr).all():
        return "has a non-finite value"
    if arr.size and float(np.abs(arr).max()) >= MAX_VECTOR_VALUE:
        return "has a value of magnitude 2**256 or more"
    return None


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
    """Return ``w`` as a positive ``int`` below ``2**57``, or raise: one rule, an exact integer or a
    refusal.

    Accepted: an ``int`` (not a ``bool``), any :class:`numbers.Integral` (``numpy.int64``), and a
    :class:`numbers.Real` whose value *is* an integer (River's ``1.0``, ``Fraction(4, 2)``,
    ``numpy.longdouble(2**53 + 1)``): it is converted exactly with ``int()`` and kept only when
    it equals the given value, never rounded through a float. ``Fraction(3, 2)``, ``NaN``,
    ``inf``, strings, ``Decimal`` and bools are refused. The bound: a table's total ``n`` (after
    the update) must stay below ``2**57``, so a single weight of ``2**57`` or more can never be
    added (the table also checks ``n + w``). O(1).

    >>> from fractions import Fraction
    >>> check_weight(Fraction(2**54 + 2, 2)) == 2**53 + 1
    True
    >>> check_weight(Fraction(2**54 + 1, 2))
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidWeightError: weight w must be a positive integer multiplicity (an integral float such as 1.0 is accepted), got Fraction(18014398509481985, 2)
    """
    if w.__class__ is int:
        if 0 < w < MAX_TOTAL:
            return w
        v: int | None = w
    elif isinstance(w, (bool, np.bool_)):
        v = None
    elif isinstance(w, numbers.Integral):
        v = int(w)
    elif isinstance(w, numbers.Real):
        v = _exact_int(w)
    else:
        v = None
    if v is not None and 0 < v < MAX_TOTAL:
        return v
    if v is not None and v >= MAX_TOTAL or v is None and _huge(w):
        raise InvalidWeightError(
            f"weight w={w!r} is too large: a weight, and a table's total count, must stay below "
            "2**57"
        )
    raise InvalidWeightError(
        f"weight w must be a positive integer multiplicity (an integral float such as 1.0 is "
        f"accepted), got {w!r}"
    )


def _exact_int(w) -> int | None:
    """The integer a real number ``w`` equals exactly, or ``None`` (NaN, inf, a fraction)."""
    try:
        v = int(w)  # truncates exactly (Fraction, numpy.longdouble, float): no float rounding
        real: Any = w
        return v if real == v else None
    except (OverflowError, TypeError, ValueError, ArithmeticError):
        return None


def _huge(w) -> bool:
    """``w`` is a real number, not an integer, but at least ``2**57`` (named in the error)."""
    try:
        real: Any = w
        return isinstance(w, numbers.Real) and bool(real >= MAX_TOTAL) and bool(real != math.inf)
    except Exception:  # pragma: no cover - exotic numbers whose comparison raises
        return False


def check_weights(w, n: int) -> np.ndarray | None:
    """``None`` (every weight 1) or ``w`` as an int64 array of checked weights, one per element.

    The one weight rule of :func:`check_weight`, for a whole batch (the native and the reference
    tables' ``update_many`` both use it): integer arrays are checked by bounds, float arrays by
    exactness (``1.0`` accepted, ``1.5`` refused), and object arrays (``Fraction``, Python ints,
    ``numpy.longdouble`` ...) element by element with :func:`check_weight`; bool and other dtypes
    are refused. Every weight is below ``2**57``, so it fits an int64 (sums of many may not: see
    :func:`sum_by_group`). O(n).

    >>> check_weights([1, 2.0], 2).tolist()
    [1, 2]
    >>> check_weights(np.array([1, 0]), 2)
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidWeightError: weight w must be a positive integer multiplicity (an integral float such as 1.0 is accepted), got 0
    """
    if w is None:
        return None
    if isinstance(w, np.ndarray) or hasattr(w, "__array__"):
        arr = np.asarray(w)
    else:
        check_ordered(w, "w")
        seq = list(w)
        arr = np.asarray(seq) if seq and all(type(v) is int for v in seq) else np.asarray(seq, dtype=object)
    if arr.ndim != 1 or len(arr) != n:
        raise ValueError(f"w must have the same length as the labels, got shape {arr.shape}")
    kind = arr.dtype.kind
    if kind in "iu":
        bad = (arr < 1) | (arr >= MAX_TOTAL)
        if bad.any():
            check_weight(arr[int(np.argmax(bad))].item())
        return arr.astype(np.int64, copy=False)
    if kind == "f" and arr.dtype.itemsize <= 8:
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr < 1) | (arr != np.floor(arr)) | (arr >= float(MAX_TOTAL))
        if bad.any():
            check_weight(arr[int(np.argmax(bad))].item())
        return arr.astype(np.int64)
    if kind in "fO":  # numpy.longdouble and objects: each weight exactly, by the scalar rule
        return np.fromiter((check_weight(v) for v in arr), dtype=np.int64, count=len(arr))
    raise InvalidWeightError(f"w must hold positive integer multiplicities, got dtype {arr.dtype}")


def sum_by_group(w: np.ndarray, starts: np.ndarray) -> tuple[list[int], int]:
    """The exact sums of ``w[starts[i]:starts[i+1]]`` (the last group to the end), and their total.

    ``numpy.add.reduceat`` when no int64 sum can wrap (the largest weight times the count stays
    below ``2**63``), Python integers otherwise: a batch of weights near ``2**57`` is summed
    exactly, and its total then refused by the bound, never wrapped. O(n).

    >>> sum_by_group(np.array([2**57 - 1] * 129), np.array([0]))[1] == 129 * (2**57 - 1)
    True
    """
    if not len(w):
        return [], 0
    if int(w.max()) * len(w) < 2**63:
        counts = np.add.reduceat(w, starts).tolist()
        return counts, sum(counts)
    ws = w.tolist()
    ends = starts[1:].tolist() + [len(ws)]
    counts = [sum(ws[i:j]) for i, j in zip(starts.tolist(), ends)]
    return counts, sum(counts)


def check_ordered(values, name: str) -> None:
    """Raise ``ValueError`` if ``values`` is a set or a mapping rather than a sequence. O(1).

    Labels, weights and units are read element by element, position ``i`` of each sequence
    belonging to element ``i``: a set has no such order (and has merged its repeated values),
    and a mapping iterates its keys, not its values. Dict views (``d.values()``, ``d.keys()``)
    keep their order and pass.

    >>> check_ordered({"a", "b"}, "y_pred")
    Traceback (most recent call last):
    ...
    ValueError: y_pred must be a sequence with one entry per element, got a set: a set has no order and keeps one copy of each value; pass a list
    >>> check_ordered({}.values(), "y_pred")
    """
    if isinstance(values, Mapping):
        raise ValueError(
            f"{name} must be a sequence with one entry per element, got a "
            f"{type(values).__name__}, whose iteration gives its keys; pass list(d.values()) for "
            "its values"
        )
    if isinstance(values, Set) and not isinstance(values, MappingView):
        raise ValueError(
            f"{name} must be a sequence with one entry per element, got a "
            f"{type(values).__name__}: a set has no order and keeps one copy of each value; pass "
            "a list"
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


def check_same_settings(kind: str, settings) -> None:
    """Refuse to merge two ``kind`` objects whose settings differ. ``settings``: ``(name, this
    object's value, the other's value)`` triples, in order; the first pair of unequal values raises
    :class:`~streameval.errors.SettingsMismatchError` naming the setting and both values. Called
    before any change, so a refused merge leaves both objects as they were. O(settings).

    >>> check_same_settings("BootstrapEvaluator", [("n_replicas", 200, 200), ("confidence", 0.95, 0.9)])
    Traceback (most recent call last):
    ...
    streameval.errors.SettingsMismatchError: cannot merge a BootstrapEvaluator with confidence=0.9 into one with confidence=0.95: the confidence must be the same in both
    """
    for name, mine, theirs in settings:
        if not (mine is theirs or mine == theirs):
            raise SettingsMismatchError(
                f"cannot merge a {kind} with {name}={theirs!r} into one with {name}={mine!r}: "
                f"the {name} must be the same in both"
            )
