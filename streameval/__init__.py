"""streameval: exact, O(1), mergeable evaluation of clusterings while they happen.

>>> import streameval as se
>>> ev = se.Evaluator([se.ELM(), se.BCubed(), se.AdjustedRand()])
>>> for t, p in [(1, "a"), (1, "a"), (2, "b"), (2, "a")]:
...     ev.update(t, p)
>>> {k: round(v, 3) for k, v in ev.get().items()}
{'ELM': 0.333, 'BCubed': 0.667, 'AdjustedRand': 0.0}
"""

# ruff: noqa: I001  (the imports are grouped by family, in the order of the documentation)
from typing import TYPE_CHECKING

from . import batch
from .contingency import Contingency
from .errors import (
    InvalidLabelError,
    InvalidStateError,
    InvalidVectorError,
    InvalidWeightError,
    MissingLabelError,
    SampleDesignError,
    SettingsMismatchError,
    StreamevalError,
    UnknownElementError,
)
from .evaluator import Evaluator
# the label metrics: every family module's __all__, as streameval.metrics gathers them
from .metrics import *  # noqa: F403
from . import metrics
from .stats import ContingencyStats
from .window import CountWindow, EventTimeWindow  # windows, live monitoring
from .monitor import ClusterCostRanking, Monitor
from .detect import BlockDrops, Cusum, IntervalRule, RiverRule  # drop detection
from .breakdown import ErrorAccount  # what broke

# intrinsic (feature-based) metrics: per-cluster vector summaries, views, Alink's report
from .intrinsic import (
    INTRINSIC_REGISTRY,
    SSB,
    SSW,
    CalinskiHarabasz,
    CosineCompactness,
    CosineDaviesBouldin,
    CosineSeparation,
    CosineSilhouette,
    CosineSSB,
    IntrinsicEvaluator,
    IntrinsicMetric,
    RMSCompactness,
    RMSDaviesBouldin,
    Separation,
    SqEuclideanSilhouette,
)
from .report import ClusterReport, cluster_report
from .summaries import ClusterSummaries

# page-stream segmentation
from . import pss
from .pss import PageStream, PageStreamError, PageStreamEvaluator

# label identity, threads
from . import labels
from .errors import ConcurrentUseError, MissingDependencyError
from .sync import Synchronized

if "river.metrics.base" in __import__("sys").modules:  # river_metric + streameval_metric
    from .metrics.base import register_with_river

    register_with_river()

# confidence intervals and paired tests over resampling units
from .comparison import ComparisonReport, Difference, compare, confidence_interval
from .intervals import Interval
from .bootstrap import BootstrapEvaluator

# estimates from a labelled sample of entities
from .sample import Estimate, SampleDesign, SampleEstimator

from ._version import __version__ as __version__  # pyproject.toml's version, via the metadata

if TYPE_CHECKING:  # type checkers: every name of streameval.metrics is exported here too (mypy
    # reads no __all__ built from other lists, so streameval.metrics builds its own out of sight)
    from .metrics import __all__ as __all__  # type: ignore[attr-defined]
__all__ = [
    "batch",
    "labels",
    "Contingency",
    "ContingencyStats",
    "Evaluator",
    "CountWindow",
    "EventTimeWindow",
    "Monitor",
    "ClusterCostRanking",
    "BlockDrops",
    "Cusum",
    "RiverRule",
    "IntervalRule",
    "ErrorAccount",
    "StreamevalError",
    "MissingLabelError",
    "InvalidLabelError",
    "InvalidWeightError",
    "UnknownElementError",
    "InvalidStateError",
    "InvalidVectorError",
    "SettingsMismatchError",
    "ConcurrentUseError",
    "MissingDependencyError",
    "Synchronized",
    # intrinsic (feature-based) metrics
    "ClusterSummaries",
    "IntrinsicMetric",
    "INTRINSIC_REGISTRY",
    "IntrinsicEvaluator",
    "SSW",
    "SSB",
    "CalinskiHarabasz",
    "Separation",
    "RMSCompactness",
    "RMSDaviesBouldin",
    "CosineCompactness",
    "CosineSSB",
    "CosineSeparation",
    "CosineDaviesBouldin",
    "SqEuclideanSilhouette",
    "CosineSilhouette",
    "ClusterReport",
    "cluster_report",
    # page-stream segmentation
    "pss",
    "PageStream",
    "PageStreamEvaluator",
    "PageStreamError",
    # confidence intervals and paired tests
    "compare",
    "confidence_interval",
    "ComparisonReport",
    "Interval",
    "Difference",
    "BootstrapEvaluator",
    # estimates from a labelled sample of entities
    "SampleEstimator",
    "SampleDesign",
    "Estimate",
    "SampleDesignError",
]
if not TYPE_CHECKING:  # the label metrics, their helpers, their resolver (see below)
    __all__ += metrics.__all__
