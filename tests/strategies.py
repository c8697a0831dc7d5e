"""Hypothesis strategies for label streams: heavy tails, many singletons, one giant cluster."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def labels(draw, size: int):
    """A labelling of ``size`` elements in one of several shapes."""
    shape = draw(st.sampled_from(["few", "heavy", "singletons", "giant", "mixed"]))
    if shape == "few":
        return draw(st.lists(st.integers(0, 2), min_size=size, max_size=size))
    if shape == "heavy":  # Zipf-like: label k drawn with weight ~ 1/(k+1)
        pool = [k for k in range(12) for _ in range(12 // (k + 1))]
        return draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size))
    if shape == "singletons":
        return list(range(size))
    if shape == "giant":
        return [0 if draw(st.integers(0, 9)) else draw(st.integers(1, 30)) for _ in range(size)]
    return draw(st.lists(st.one_of(st.integers(0, 3), st.text("ab", min_size=1, max_size=2)),
                         min_size=size, max_size=size))


@st.composite
def streams(draw, max_size: int = 30, weights: bool = True):
    """A stream ``[(t, p, w)]`` of elements with multiplicities."""
    size = draw(st.integers(0, max_size))
    ts = draw(labels(size))
    ps = draw(labels(size))
    ws = [draw(st.integers(1, 3)) if weights and draw(st.booleans()) else 1 for _ in range(size)]
    return list(zip(ts, ps, ws))


# Labels of mixed types: values that Python equality merges (1, 1.0, True, numpy
# scalars) and values it keeps apart although numpy coercion would merge them (1 and "1", True and
# "True", "a" and "a\x00"), tuples, and the missing markers (None, NaN, pandas.NA, pandas.NaT).
def _mixed_pool():
    import math

    import numpy as np

    pool = [
        0, 1, 2, 1.0, 2.0, 0.5, True, False, np.int64(1), np.int32(2), np.float64(0.5),
        np.bool_(True), "1", "True", "a", "a\x00", "\x00", "", np.str_("a"), (1, "a"),
        (1.0, "a"), (np.int64(1), ("x",)), float("inf"), -math.inf,
    ]
    return pool


def _missing_pool():
    import math

    import numpy as np
    import pandas as pd

    return [None, math.nan, np.float64("nan"), pd.NA, pd.NaT]


@st.composite
def mixed_labels(draw, size: int, missing: bool = True):
    """``size`` labels of mixed types; with ``missing``, some are missing markers."""
    pool = _mixed_pool() + (_missing_pool() if missing else [])
    return draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size))


@st.composite
def mixed_streams(draw, max_size: int = 25, missing: bool = True):
    """``(y_true, y_pred)`` lists of mixed-type labels of equal length."""
    size = draw(st.integers(0, max_size))
    return draw(mixed_labels(size, missing)), draw(mixed_labels(size, missing))


class FailingLabel:
    """A label hashed as ``like`` whose ``==`` raises ``exc`` (``KeyboardInterrupt``: Ctrl-C
    arriving while the call compares labels)."""

    def __init__(self, like, exc):
        self.like, self.exc = like, exc

    def __hash__(self):
        return hash(self.like)

    def __eq__(self, other):
        if other is self:
            return True
        raise self.exc("== refused")
