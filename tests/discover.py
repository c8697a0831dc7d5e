"""What the tests learn from the registry of metrics, so that a new metric needs no test edit.

A label metric registers itself (``streameval.REGISTRY``); its batch twin is found by its name:
the resolver reads a scikit-learn function name as the metric it names (``adjusted_rand_score`` is
``AdjustedRand``, ``variation_of_information`` is ``VariationOfInformation``), so every function
of ``streameval.batch.__all__`` that resolves is the twin of that metric. The differential,
property and batch-twin tests iterate over these dicts; ``tests/test_lists.py`` checks that every
registered label metric has exactly one twin.
"""

from __future__ import annotations

from streameval import REGISTRY, batch
from streameval.metrics import UnknownMetricError, resolve


def twins() -> dict:
    """``{class name: batch function}`` for every batch function that names a metric."""
    out: dict = {}
    for fname in batch.__all__:
        try:
            (cls,) = resolve(fname)
        except UnknownMetricError:
            continue
        assert cls.__name__ not in out, f"two batch twins of {cls.__name__}: {out[cls.__name__]}, {fname}"
        out[cls.__name__] = getattr(batch, fname)
    return out


LABEL_METRICS = {name: cls for name, cls in REGISTRY.items() if cls.requires_labels}
TWINS = twins()
BATCH = {name: TWINS[name] for name, cls in LABEL_METRICS.items() if name in TWINS and not cls.on_demand}
"""The batch twin of every O(1) label metric, in registration order."""
ON_DEMAND = {name: TWINS[name] for name, cls in LABEL_METRICS.items() if name in TWINS and cls.on_demand}
"""The batch twin of every on-demand label metric (computed from the cells when read)."""
