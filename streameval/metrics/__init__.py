"""Metric views over the contingency table, one family per module."""

# ruff: noqa: I001  (the import order is the registration order in REGISTRY: the default metrics'
# order everywhere, ELM and BCubed first)
from .base import REGISTRY, Metric
from .element import ELM, BCubed
from .coreference import BLANC, LEA, MUC
from .information import (
    AdjustedMutualInfo,
    Completeness,
    Homogeneity,
    MutualInfo,
    NormalizedMutualInfo,
    VariationOfInformation,
    VBeta,
)
from .matching import CEAF, ClusterAccuracy, InversePurity, Purity
from .resolve import UnknownMetricError, resolve
from .pairs import (
    AdjustedRand,
    FowlkesMallows,
    PairF1,
    PairJaccard,
    PairPrecision,
    PairRecall,
    Rand,
)

__all__ = [
    "REGISTRY",
    "resolve",
    "UnknownMetricError",
    "default_metrics",
    "Metric",
    "ELM",
    "BCubed",
    "Rand",
    "AdjustedRand",
    "PairPrecision",
    "PairRecall",
    "PairF1",
    "PairJaccard",
    "FowlkesMallows",
    "MutualInfo",
    "NormalizedMutualInfo",
    "Homogeneity",
    "Completeness",
    "VBeta",
    "VariationOfInformation",
    "Purity",
    "InversePurity",
    # coreference and on-demand matching metrics
    "MUC",
    "BLANC",
    "LEA",
    "CEAF",
    "ClusterAccuracy",
    "AdjustedMutualInfo",
]


def default_metrics() -> list:
    """One fresh instance, default parameters, of every registered O(1) label metric.

    The classes of ``resolve("all")`` (and of ``resolve(None)``), in registration order. O(metrics).

    >>> [type(m) for m in default_metrics()] == resolve("all")
    True
    """
    return [cls() for cls in resolve(None)]
