"""Batch functions: scikit-learn-style ``f(labels_true, labels_pred) -> value``.

The label metrics (:mod:`.labels`) count both labellings natively in one bulk call and read the
streaming metrics' exact sums, so a batch value has the streaming value's bits; their independent
numpy twins (:mod:`.reference`, written from the formulas apart from the streaming code) are the
tests' oracle and the fallback without the native extension. Inputs are any
one-dimensional sequences of equal length (lists, numpy arrays, pandas Series). Labels are grouped
as :meth:`streameval.Contingency.update` groups them (Python equality: ``1 == 1.0 == True``, while
``1`` and ``"1"`` differ; see :mod:`streameval.labels`), and a missing label (``None``, NaN,
``pandas.NA``, ``NaT``) raises :class:`~streameval.errors.MissingLabelError`. Label metrics live in :mod:`.labels`; intrinsic metrics over feature vectors,
``f(X, labels_pred)``, in :mod:`.intrinsic`.

>>> from streameval import batch
>>> batch.elm_score([1, 1, 2], [1, 1, 1])   # every *_score returns a float, as in scikit-learn
0.4444444444444444
>>> batch.elm_precision_recall_fscore([1, 1, 2], [1, 1, 1])   # the (P, R, F) triple
(0.3333333333333333, 1.0, 0.4444444444444444)
>>> batch.adjusted_rand_score([0, 0, 1, 1], [1, 1, 0, 0])
1.0
"""

# ruff: noqa: F403  (each module's __all__ is re-exported whole)
from typing import TYPE_CHECKING

from . import coreference, intrinsic, labels, pss, sample
from .coreference import *
from .intrinsic import *
from .labels import *
from .pss import *  # many candidate segmentations against one truth
from .sample import *

# The public names are the modules' own __all__ lists: a batch function added to its module and
# to that module's __all__ is exported here with no edit. Type checkers take the star-imported
# names as exported (mypy reads no __all__ built from other lists); the interpreter and the API
# pages read this one.
if not TYPE_CHECKING:
    __all__ = []
    __all__ += sample.__all__
    __all__ += labels.__all__
    __all__ += coreference.__all__
    __all__ += intrinsic.__all__
    __all__ += pss.__all__
