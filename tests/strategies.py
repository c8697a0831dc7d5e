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
