"""Shared by test_intrinsic (in process) and test_dask (on Dask): data sets with the intrinsic
edge cases, every registered view, the streaming reference and the comparison.

The streaming reference feeds the rows one by one through an IntrinsicEvaluator; an engine, which
sees every point, is compared with each summary view's ``get()`` and with each silhouette's exact
``final()`` (its ``get()`` is the prequential value, which only a stream has).
"""

import math

import numpy as np
import pytest

import streameval as se
from streameval.intrinsic import INTRINSIC_REGISTRY


def views() -> dict:
    """Every registered view under its name, plus Alink's singleton convention under its own key."""
    out = {name: cls() for name, cls in INTRINSIC_REGISTRY.items()}
    out["AlinkSqEuclideanSilhouette"] = se.SqEuclideanSilhouette(singleton=1.0)
    out["AlinkCosineSilhouette"] = se.CosineSilhouette(singleton=1.0)
    return out


def case(name: str, seed: int = 0):
    """``(X, y, w)``: vectors, predicted clusters, integer weights."""
    rng = np.random.default_rng(seed)
    if name == "general":
        y = rng.integers(0, 6, 400)
        X = rng.normal(size=(400, 3)) + y[:, None] * [0.5, 1.0, -0.3]
        return X, y, rng.integers(1, 4, 400)
    if name == "empty":
        return np.zeros((0, 3)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if name == "one_cluster":
        return rng.normal(size=(50, 2)) + 3.0, np.zeros(50, dtype=np.int64), rng.integers(1, 3, 50)
    if name == "singletons":  # three clusters, five alone (w = 1), one alone with w = 2
        y = np.concatenate([rng.integers(0, 3, 60), np.arange(10, 16)])
        X = rng.normal(size=(66, 2)) + y[:, None] * 0.7
        w = np.ones(66, dtype=np.int64)
        w[-1] = 2
        return X, y, w
    if name == "zero_scatter":  # every cluster one repeated point: SSW = 0, CH = 1 by convention
        y = np.repeat([0, 1, 2], 5)
        X = np.array([[1.0, 2.0], [4.0, -1.0], [0.5, 7.0]])[y]
        return X, y, np.ones(15, dtype=np.int64)
    if name == "large_k":  # k > 2,000: the engines once left Separation out above 2,000
        y = np.concatenate([np.arange(2100), rng.integers(0, 2100, 900)])
        X = rng.normal(size=(3000, 2)) + np.stack([y % 50, y // 50], axis=1) * 3.0
        return X, y, np.ones(3000, dtype=np.int64)
    raise ValueError(name)


CASES = ["general", "empty", "one_cluster", "singletons", "zero_scatter"]


def streamed(X, y, w) -> dict:
    """The streaming views' values: ``get()``, and ``final()`` for the silhouettes."""
    ev = se.IntrinsicEvaluator(views())
    for x, p, wi in zip(X, y.tolist(), w.tolist()):
        ev.update(x, p, wi)
    return {name: (m.final() if m.needs_points else m.get()) for name, m in ev.metrics.items()}


def assert_same(engine: dict, ref: dict) -> None:
    """Same keys in the same order; NaN exactly where the reference is NaN; values equal up to
    the rounding of two summation orders."""
    assert list(engine) == list(ref)
    for key, want in ref.items():
        got = engine[key]
        assert isinstance(got, float), (key, got)
        if math.isnan(want):
            assert math.isnan(got), (key, got)
        else:
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12), key
