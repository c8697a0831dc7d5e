"""Label identity: one rule for every path.

**Identity.** Two labels name the same cluster exactly when Python's ``dict`` says so: when they
are equal and hash alike. So ``1``, ``1.0``, ``True`` and ``numpy.int64(1)`` are one label, while
``1`` and ``"1"``, ``True`` and ``"True"``, ``"a"`` and ``"a\\x00"`` are three pairs of different
labels. :meth:`Contingency.update <streameval.Contingency.update>` keys its table by the labels;
:func:`factorize` gives :meth:`~streameval.Contingency.update_many` and every
:mod:`streameval.batch` function the same grouping. It never coerces a sequence through
``numpy.asarray`` (which would turn ``[1, "1"]`` into two equal strings and drop trailing NULs):
numeric and boolean numpy arrays, and numpy string arrays, take a vectorised path; everything
else (lists, tuples, object arrays, pandas objects holding mixed values) is grouped by a dict.

**Missing labels.** ``None``, ``pandas.NA``, and values unequal to themselves (float NaN, ``NaT``)
are missing (:func:`streameval._validate.is_missing`), on every path.

The JSON form that saved states give a label is in :mod:`streameval.state`.

>>> codes, uniques = factorize([1, "1", 1.0, True, "a", "a\\x00"], "y")
>>> codes.tolist(), uniques
([0, 1, 0, 0, 2, 3], [1, '1', 'a', 'a\\x00'])
"""

from __future__ import annotations

import numpy as np

from ._validate import check_ordered, is_missing, missing_repr
from .errors import InvalidLabelError, MissingLabelError

__all__ = ["factorize", "same_label"]

_FAST_KINDS = "biufUS"  # numeric, bool, and numpy string arrays: grouped by np.unique
_PY_SCALARS = (np.number, np.bool_, np.str_, np.bytes_)


def _py(v):
    """A numpy scalar as the equal Python scalar (so tables hold plain labels); else ``v``."""
    return v.item() if isinstance(v, _PY_SCALARS) else v


def factorize(values, name: str = "labels", *, missing: str = "raise", hint: str = ""):
    """Group a one-dimensional sequence of labels by Python equality: ``(codes, uniques)``.

    ``codes`` is an int64 array with ``uniques[codes[i]] == values[i]``; ``uniques`` is a list of
    plain Python labels (numpy scalars converted with ``.item()``). A missing label raises
    :class:`~streameval.errors.MissingLabelError` naming ``name[i]`` (``missing="raise"``), or gets
    code ``-1`` (``missing="skip"``); an unhashable one raises
    :class:`~streameval.errors.InvalidLabelError`. ``hint`` is appended to the missing-label message.

    The order of ``uniques`` is sorted on the vectorised path (numeric, bool and numpy string
    arrays) and first-seen otherwise. Cost O(N log N) vectorised, O(N) dict operations otherwise.

    >>> import numpy as np
    >>> factorize(np.array([3.0, 1.0, 3.0]))[0].tolist()
    [1, 0, 1]
    >>> factorize([None, "a"], missing="skip")
    (array([-1,  0]), ['a'])
    >>> factorize(["a", float("nan")], "y_pred")
    Traceback (most recent call last):
    ...
    streameval.errors.MissingLabelError: y_pred[1] is missing (NaN)
    """
    if missing not in ("raise", "skip"):
        raise ValueError(f'missing must be "raise" or "skip", got {missing!r}')
    if not isinstance(values, (np.ndarray, list, tuple)):
        if isinstance(values, (str, bytes)):
            raise ValueError(f"{name} must be a sequence of labels, got a single {type(values).__name__}")
        check_ordered(values, name)
        if hasattr(values, "__array__"):
            values = np.asarray(values)  # pandas objects: mixed values stay objects
        elif hasattr(values, "__len__") and hasattr(values, "__iter__"):
            values = list(values)  # range, dict views, ...: sized, so read more than once
        else:  # an iterator would be consumed by the first of several passes
            raise ValueError(
                f"{name} must be a one-dimensional sequence of labels (a list, tuple, numpy array "
                f"or pandas Series), got {type(values).__name__}"
            )
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
        kind = values.dtype.kind
        if kind in _FAST_KINDS:
            return _factorize_array(values, name, missing, hint)
        seq = values.tolist() if kind == "O" else list(values)
    else:
        seq = values
    return _factorize_seq(seq, name, missing, hint)


def _factorize_array(values: np.ndarray, name: str, missing: str, hint: str):
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        if nan.any():
            i = int(np.argmax(nan))
            if missing == "raise":
                raise MissingLabelError(f"{name}[{i}] is missing (NaN){hint}")
            codes = np.full(len(values), -1, dtype=np.int64)
            uniq, inv = np.unique(values[~nan], return_inverse=True)
            codes[~nan] = inv.reshape(-1)
            return codes, uniq.tolist()
    if values.dtype.kind in "iu" and len(values):
        lo, hi = int(values.min()), int(values.max())
        if hi - lo < max(4 * len(values), 1 << 16) and hi < 1 << 63:
            # integers in a range within a few times their number: their ranks from a table of
            # the values present (O(N + range), no sort), the codes and sorted uniques np.unique gives
            shifted = values.astype(np.int64) - lo if lo else values.astype(np.int64, copy=False)
            present = np.zeros(hi - lo + 1, dtype=bool)
            present[shifted] = True
            rank = np.cumsum(present, dtype=np.int64) - 1
            return rank[shifted], (np.flatnonzero(present) + lo).tolist()
    uniq, inv = np.unique(values, return_inverse=True)
    return inv.reshape(-1).astype(np.int64, copy=False), uniq.tolist()


def _factorize_seq(seq, name: str, missing: str, hint: str):
    try:
        first = dict.fromkeys(seq)  # first-seen representatives, grouped by Python equality
    except TypeError:
        for i, v in enumerate(seq):
            try:
                hash(v)
            except TypeError:
                raise InvalidLabelError(
                    f"{name}[{i}] must be hashable to name a cluster (labels are a one-dimensional "
                    f"sequence of hashable values), got {type(v).__name__}: {v!r}"
                ) from None
        raise  # pragma: no cover - a TypeError from __eq__ of some label
    pos: dict = {}
    uniques: list = []
    for k in first:
        if is_missing(k):
            pos[k] = -1
        else:
            pos[k] = len(uniques)
            uniques.append(_py(k))
    codes = np.fromiter(map(pos.__getitem__, seq), dtype=np.int64, count=len(seq))
    if missing == "raise" and len(uniques) < len(pos):
        i = int(np.argmax(codes < 0))
        raise MissingLabelError(f"{name}[{i}] is missing ({missing_repr(seq[i])}){hint}")
    return codes, uniques


def same_label(a, b) -> bool:
    """``True`` when ``a`` and ``b`` name the same cluster (Python equality, as a dict key).

    Never broadcasts: a numpy scalar against a tuple is simply a different label. O(1).

    >>> import numpy as np
    >>> same_label(np.int64(1), True), same_label(np.int64(1), (1, 1)), same_label("a", "a\\x00")
    (True, False, False)
    """
    if a is b:
        return True
    try:
        return hash(a) == hash(b) and bool(a == b)
    except (TypeError, ValueError):
        return False
