"""streameval: exact, O(1), mergeable evaluation of clusterings while they happen.

>>> import streameval as se
>>> ev = se.Evaluator([se.ELM(), se.BCubed(), se.AdjustedRand()])
>>> for t, p in [(1, "a"), (1, "a"), (2, "b"), (2, "a")]:
...     ev.update(t, p)
>>> {k: round(v, 3) for k, v in ev.get().items()}
{'ELM': 0.333, 'BCubed': 0.667, 'AdjustedRand': 0.0}
"""

from . import batch
from .contingency import Contingency
from .errors import (
    InvalidLabelError,
    InvalidStateError,
    InvalidVectorError,
    InvalidWeightError,
    MissingLabelError,
    StreamevalError,
    UnknownElementError,
)
from .evaluator import Evaluator
from .metrics import (
    ELM,
    REGISTRY,
    AdjustedRand,
    BCubed,
    Completeness,
    FowlkesMallows,
    Homogeneity,
    InversePurity,
    Metric,
    MutualInfo,
    NormalizedMutualInfo,
    PairF1,
    PairJaccard,
    PairPrecision,
    PairRecall,
    Purity,
    Rand,
    VariationOfInformation,
    VBeta,
)
from .stats import ContingencyStats
from .window import CountWindow

# page-stream segmentation (issue 6)
from . import pss
from .pss import PageStream, PageStreamError, PageStreamEvaluator

__version__ = "0.1.0"

__all__ = [
    "batch",
    "Contingency",
    "ContingencyStats",
    "Evaluator",
    "CountWindow",
    "Metric",
    "REGISTRY",
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
    "StreamevalError",
    "MissingLabelError",
    "InvalidLabelError",
    "InvalidWeightError",
    "UnknownElementError",
    "InvalidStateError",
    "InvalidVectorError",
    # page-stream segmentation (issue 6)
    "pss",
    "PageStream",
    "PageStreamEvaluator",
    "PageStreamError",
]
