"""Metric views over the contingency table, one family per module.

The public names are the family modules' own ``__all__`` lists, gathered here (and from here into
``streameval``): a metric class added to its family module and to that module's ``__all__`` is
exported by ``streameval.metrics`` and ``streameval`` with no edit here (``tests/test_lists.py``
fails on a registered metric missing from these lists).
"""

# ruff: noqa: F403, I001  (the family modules' names are re-exported whole; the import order is
# the registration order in REGISTRY: the default metrics' order everywhere, ELM and BCubed first)
from typing import TYPE_CHECKING

from . import base, element, coreference, information, matching
from . import resolve as _resolve
from . import pairs
from .base import *
from .element import *
from .coreference import *
from .information import *
from .matching import *
from .resolve import *
from .pairs import *


def default_metrics() -> list:
    """One fresh instance, default parameters, of every registered O(1) label metric.

    The classes of ``resolve("all")`` (and of ``resolve(None)``), in registration order. O(metrics).

    >>> [type(m) for m in default_metrics()] == resolve("all")
    True
    """
    return [cls() for cls in _resolve.resolve(None)]


# Type checkers take every name star-imported above as exported (mypy reads no ``__all__`` built
# from other lists, and would then hide them); the interpreter and the documentation's API pages
# (griffe) read this one, built from the families' lists.
if not TYPE_CHECKING:
    __all__ = ["default_metrics"]
    __all__ += base.__all__
    __all__ += element.__all__
    __all__ += pairs.__all__
    __all__ += information.__all__
    __all__ += matching.__all__
    __all__ += coreference.__all__
    __all__ += _resolve.__all__
