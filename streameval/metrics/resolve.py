"""One resolver for metric names, shared by every subcommand of the command line and the Python API.

A *spec* names label metrics. Each name may be

- a streameval (and River) class name: ``AdjustedRand``, ``NormalizedMutualInfo``, ``VBeta`` ...;
- a scikit-learn function name: ``adjusted_rand_score``, ``normalized_mutual_info_score``,
  ``v_measure_score``, ``fowlkes_mallows_score`` ...;
- a usual short form: ``ARI``, ``RI``, ``NMI``, ``AMI``, ``MI``, ``VI``, ``FMI``, ``B3`` ...;
- ``all``: every O(1) label metric, the set ``Evaluator()`` uses (with ``on_demand=True``, also
  the on-demand metrics ``AdjustedMutualInfo``, ``CEAF`` and ``ClusterAccuracy``, which are
  otherwise added by name).

Names are case-insensitive; underscores, hyphens and spaces inside a name are ignored, and so is a
trailing ``_score``. A spec is a string of names separated by commas or spaces, a list of such
strings, or ``None`` (the default set). The result is a list of metric classes without repeats,
in the order named.

>>> [c.__name__ for c in resolve("ARI, nmi adjusted_mutual_info_score VI")]
['AdjustedRand', 'NormalizedMutualInfo', 'AdjustedMutualInfo', 'VariationOfInformation']
>>> resolve(["elm", "ELM", "b3"]) == resolve("ELM,BCubed")
True
>>> from streameval import Evaluator
>>> resolve("all") == resolve(None) == [type(m) for m in Evaluator().metrics.values()]
True
>>> [c.__name__ for c in resolve("all", on_demand=True) if c not in resolve("all")]
['AdjustedMutualInfo', 'CEAF', 'ClusterAccuracy']
>>> resolve("adjusted_randomness")
Traceback (most recent call last):
...
streameval.metrics.resolve.UnknownMetricError: unknown metric 'adjusted_randomness'; ...

Cost: O(names) per call, against a table built once per call from the registry.
"""

from __future__ import annotations

from ..errors import StreamevalError
from .base import REGISTRY

__all__ = ["resolve", "UnknownMetricError", "ALIASES"]


class UnknownMetricError(StreamevalError):
    """A metric name that no metric answers to (the message lists the names accepted).

    >>> issubclass(UnknownMetricError, ValueError)
    True
    """


ALIASES = {
    "ari": "AdjustedRand", "ri": "Rand", "nmi": "NormalizedMutualInfo",
    "ami": "AdjustedMutualInfo", "mi": "MutualInfo", "vi": "VariationOfInformation",
    "fmi": "FowlkesMallows", "fm": "FowlkesMallows", "b3": "BCubed",
    "v": "VBeta", "vmeasure": "VBeta", "acc": "ClusterAccuracy", "accuracy": "ClusterAccuracy",
}
"""The short forms, and the scikit-learn names that differ from a class name (``v_measure_score``):
``{key: class name}``. A class name, and a scikit-learn name that is the class name in snake case
(``adjusted_rand_score``, ``variation_of_information``), need no entry: the resolver derives its
key from every registered class. ``tests/test_lists.py`` fails on an entry the resolver derives."""


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _label_metrics() -> dict:
    return {k: c for k, c in REGISTRY.items() if c.requires_labels}


def _lookup(name: str, table: dict):
    key = _key(name)
    for k in (key, key[:-5] if key.endswith("score") and len(key) > 5 else None):
        if k is None:
            continue
        if k in table:
            return table[k]
        if k in ALIASES and ALIASES[k] in REGISTRY:
            return REGISTRY[ALIASES[k]]
    return None


def _names(spec) -> list:
    if isinstance(spec, str):
        spec = [spec]
    out = []
    for item in spec:
        if not isinstance(item, str):
            raise UnknownMetricError(f"a metric name must be a string, got {item!r}")
        out += [n for n in item.replace(",", " ").split() if n]
    return out


def resolve(spec=None, on_demand: bool = False) -> list:
    """The metric classes a spec names (see the module's docstring for the names accepted).

    ``None``, an empty string or an empty list: every O(1) label metric (the metrics whose
    :attr:`~streameval.metrics.base.Metric.on_demand` is false). ``on_demand=True`` makes ``all``
    also include the on-demand label metrics. Raises :class:`UnknownMetricError` (a
    ``ValueError``) for a name no metric answers to. This is the one resolver: the command line,
    :class:`~streameval.Evaluator` (and so the windows and the monitor), :mod:`streameval.pss`,
    :func:`streameval.compare` and the distributed engines all read names through it.
    Cost: O(names + metrics).

    >>> [c.__name__ for c in resolve("ARI, nmi")], [c.__name__ for c in resolve(["b3"])]
    (['AdjustedRand', 'NormalizedMutualInfo'], ['BCubed'])
    >>> resolve("foo")
    Traceback (most recent call last):
    ...
    streameval.metrics.resolve.UnknownMetricError: unknown metric 'foo'; choose from ELM, ...
    """
    labels = _label_metrics()
    default = [c for c in labels.values() if not c.on_demand]
    names = [] if spec is None else _names(spec)
    if not names:
        return default
    table = {_key(k): c for k, c in labels.items()}
    out: list = []
    for name in names:
        if name.lower() == "all":
            found = list(labels.values()) if on_demand else default
        else:
            cls = _lookup(name, table)
            if cls is None:
                raise UnknownMetricError(
                    f"unknown metric {name!r}; choose from {', '.join(labels)}, their "
                    "scikit-learn function names (adjusted_rand_score, ...), the short forms "
                    f"{', '.join(a.upper() for a in ALIASES if len(a) <= 3)}, or 'all'"
                )
            found = [cls]
        out.extend(c for c in found if c not in out)
    return out
