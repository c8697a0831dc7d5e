"""The labelled-sample vocabulary shared by the streaming estimator and its batch twin: the
sampling design, declared once, and the :class:`Estimate` record.

>>> SampleDesign.of("size").weight_of("any entity", 4)
Fraction(1, 4)
>>> round(normal_quantile(0.95), 6)
1.959964
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from fractions import Fraction
from statistics import NormalDist
from typing import Any, NamedTuple

from ._validate import check_label
from .errors import SampleDesignError
from .state import label_to_json

__all__ = ["Estimate", "SampleDesign", "normal_quantile", "positive_weight", "probability"]


def normal_quantile(confidence: float) -> float:
    """``z`` of the two-sided normal interval at ``confidence`` (``1.96`` at 0.95): the
    ``(1 + c)/2`` quantile of the standard normal distribution. O(1).

    >>> round(normal_quantile(0.95), 4), round(normal_quantile(0.6827), 3)   # 1.96; about 1σ
    (1.96, 1.0)
    """
    if not (isinstance(confidence, float | int) and 0 < confidence < 1):
        raise SampleDesignError(f"confidence must be in (0, 1), got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


class Estimate(NamedTuple):
    """One estimate: ``value``, its standard error ``stderr`` and the normal interval
    ``[low, high] = value ∓ z·stderr``. When the standard error is undefined (one sampled entity,
    a zero mean), ``stderr``, ``low`` and ``high`` are NaN and ``reason`` says why. A named tuple:
    O(1) per field.

    >>> Estimate(0.5, 0.1, 0.304, 0.696).high
    0.696
    """

    value: float
    stderr: float
    low: float
    high: float
    reason: str | None = None


# --- the design ------------------------------------------------------------------------------


class SampleDesign:
    """How the sampled entities were drawn, declared once.

    - ``SampleDesign("uniform")``: entities drawn with equal probability (``w_i = 1``);
    - ``SampleDesign("size")``: drawn with probability proportional to size (``w_i = 1/c_i``);
    - :meth:`weights` / :meth:`probabilities`: explicit weights ``w_i > 0`` or inclusion
      probabilities ``0 < π_i ≤ 1`` (``w_i = 1/π_i``) per sampled entity; a labelled element of
      an entity outside them is an error.

    Weights are held as exact fractions (a float is the exact binary fraction it denotes). Cost:
    O(1) per weight looked up; building an explicit design O(S) for ``S`` sampled entities.

    >>> SampleDesign.probabilities({"a": 0.5}).weight_of("a", 3)
    Fraction(2, 1)
    >>> SampleDesign("size").weight_of("a", 4)
    Fraction(1, 4)
    """

    __slots__ = ("kind", "_weights")

    def __init__(self, kind: str = "uniform", weights: Mapping[Any, Fraction] | None = None):
        if kind not in ("uniform", "size", "explicit"):
            raise SampleDesignError(
                f"design must be 'uniform', 'size', SampleDesign.weights(...) or "
                f"SampleDesign.probabilities(...), got {kind!r}"
            )
        self.kind = kind
        self._weights: dict[Any, Fraction] = dict(weights or {})

    @classmethod
    def weights(cls, weights: Mapping[Any, float]) -> SampleDesign:
        """Explicit sampling weights ``w_i ∝ 1/π_i`` (positive, finite) per sampled entity. O(S)."""
        return cls("explicit", {check_label(k, "entity", ""): positive_weight(v) for k, v in
                                dict(weights).items()})

    @classmethod
    def probabilities(cls, probabilities: Mapping[Any, float]) -> SampleDesign:
        """Explicit inclusion probabilities ``0 < π_i ≤ 1`` per sampled entity (``w_i = 1/π_i``).
        O(S)."""
        return cls("explicit", {check_label(k, "entity", ""): 1 / probability(v) for k, v in
                                dict(probabilities).items()})

    @classmethod
    def of(cls, design) -> SampleDesign:
        """``design`` as a :class:`SampleDesign`: a string, a design, or a mapping of weights.
        O(1), or O(S) for a mapping or an explicit design (copied).

        >>> SampleDesign.of("size").kind, SampleDesign.of({"a": 2}).declared_weights()
        ('size', {'a': Fraction(2, 1)})
        """
        if isinstance(design, SampleDesign):
            return cls(design.kind, design.declared_weights())
        if isinstance(design, str):
            return cls(design)
        if isinstance(design, Mapping):
            return cls.weights(design)
        raise SampleDesignError(
            f"design must be 'uniform', 'size', a SampleDesign or a mapping of weights, got "
            f"{type(design).__name__}"
        )

    def weight_of(self, entity, size: int) -> Fraction:
        """The weight of ``entity`` of ``size`` labelled elements. O(1)."""
        if self.kind == "uniform":
            return Fraction(1)
        if self.kind == "size":
            return Fraction(1, size)
        try:
            return self._weights[entity]
        except KeyError:
            raise SampleDesignError(
                f"entity {entity!r} is labelled but outside the declared sample (declare its "
                "weight or probability first)"
            ) from None

    def declared(self, entity) -> bool:
        """Whether ``entity`` may carry labels under this design. O(1)."""
        return self.kind != "explicit" or entity in self._weights

    def declare(self, entity, weight: Fraction) -> None:
        """Add ``entity`` with ``weight`` to an explicit design; a different weight for an entity
        already declared is an error (its weight cannot change). O(1)."""
        if self.kind != "explicit":
            raise SampleDesignError(f"a {self.kind!r} design takes no declared weights")
        old = self._weights.get(entity)
        if old is not None and old != weight:
            raise SampleDesignError(
                f"the weight of entity {entity!r} cannot change: declared {float(old)!r}, now "
                f"{float(weight)!r}"
            )
        self._weights[entity] = weight

    def declared_weights(self) -> dict[Any, Fraction]:
        """A copy of the declared ``{entity: weight}`` of an explicit design (empty otherwise).
        O(S)."""
        return dict(self._weights)

    def to_json(self) -> Any:
        """The design as JSON: its kind, or the weights as ``[label, numerator, denominator]``.
        O(S).

        >>> SampleDesign("uniform").to_json(), SampleDesign.probabilities({"a": 0.25}).to_json()
        ('uniform', [['a', 4, 1]])
        """
        if self.kind != "explicit":
            return self.kind
        return [[label_to_json(k), w.numerator, w.denominator] for k, w in self._weights.items()]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SampleDesign) and self.kind == other.kind
                and self._weights == other._weights)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if self.kind != "explicit":
            return f"SampleDesign({self.kind!r})"
        return f"SampleDesign.weights({ {k: float(w) for k, w in self._weights.items()} !r})"


def _exact(v) -> Fraction:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(v)
    return Fraction(v) if isinstance(v, numbers.Rational) else Fraction(float(v))


def positive_weight(v) -> Fraction:
    """``v`` as an exact positive Fraction (``w > 0``, finite), else :class:`SampleDesignError`. O(1).

    >>> positive_weight(3), positive_weight(0.5)
    (Fraction(3, 1), Fraction(1, 2))
    """
    try:
        f = _exact(v)
    except (TypeError, ValueError, OverflowError):
        raise SampleDesignError(f"a sampling weight must be a positive finite number, got {v!r}") \
            from None
    if not f > 0:
        raise SampleDesignError(f"a sampling weight must be a positive finite number, got {v!r}")
    return f


def probability(v) -> Fraction:
    """``v`` as an exact Fraction ``π`` with ``0 < π ≤ 1``, else :class:`SampleDesignError`. O(1).

    >>> probability(0.25), 1 / probability(0.25)     # the weight 1/π
    (Fraction(1, 4), Fraction(4, 1))
    """
    try:
        f = _exact(v)
    except (TypeError, ValueError, OverflowError):
        raise SampleDesignError(f"an inclusion probability must be in (0, 1], got {v!r}") from None
    if not 0 < f <= 1:
        raise SampleDesignError(f"an inclusion probability must be in (0, 1], got {v!r}")
    return f


