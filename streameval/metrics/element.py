"""Element-based metrics: ELM ("Elements Like Me", the repaired BCubed) and BCubed.

For an element in cell ``(i, j)`` with ``n = n[i,j]``, ``a = a[i]``, ``b = b[j]``:

======================  =====================  =========================================
                        BCubed                 ELM (the element's neighbours only)
======================  =====================  =========================================
precision ``P_e``       ``n / b``              ``(n-1)/(b-1)``, ``1`` when ``b = 1``
recall ``R_e``          ``n / a``              ``(n-1)/(a-1)``, ``1`` when ``a = 1``
F-beta ``F_e``          ``(1+β²)n/(β²a+b)``    ``(1+β²)(n-1)/(β²(a-1)+(b-1))``, ``1`` when
                                               ``a = b = 1``
======================  =====================  =========================================

``P = mean_e P_e`` and ``R = mean_e R_e``. F has two conventions, chosen with ``f_convention``:
``"element_averaged"`` (default; the ELM paper's and Bagga & Baldwin's ``mean_e F_e``) and
``"f_of_averages"`` (Amigó et al.'s ``(1+β²)PR/(β²P+R)``).

O(1) maintenance: with ``Q[j] = Σ_i n[i,j]²`` and ``S[i] = Σ_j n[i,j]²``, BCubed
``N·P = Σ_j Q[j]/b[j]`` and ELM ``N·P = Σ_{b[j]>1} (Q[j]-b[j])/(b[j]-1) + #{j: b[j] = 1}``
(recall likewise over rows); one update changes one row and one column term. The element-averaged F
has no such decomposition: the native table notes each update in O(1) and settles at the next read,
O(cells of the rows and columns changed since); the reference pays O(cells in the element's row +
cells in its column) per update and revert, O(1) per read. ``f_of_averages`` keeps every call O(1).

Empty table: every score is 1.0 (nothing disagrees).

Reference: van Heusden, Kamps & Marx, "BCubed revisited: Elements Like Me" (2022);
Bagga & Baldwin (1998); Amigó, Gonzalo, Artiles & Verdejo (2009).
"""

from __future__ import annotations

from typing import Any

from .base import Metric, fixed_mean, harmonic
from .quantities import NativeValue

__all__ = ["ELM", "BCubed"]

_CONVENTIONS = ("element_averaged", "f_of_averages")


class _ElementMetric(NativeValue, Metric, register=False):
    _kind = ""
    symmetric = False

    def __init__(self, beta: float = 1.0, f_convention: str = "element_averaged"):
        if f_convention not in _CONVENTIONS:
            raise ValueError(f"f_convention must be one of {_CONVENTIONS}, got {f_convention!r}")
        self.beta = float(beta)
        self.f_convention = f_convention
        params: dict[str, Any] = {}
        if self.beta != 1.0:
            params["beta"] = beta
        if f_convention != "element_averaged":
            params["f_convention"] = f_convention
        super().__init__(**params)

    @property
    def f_specs(self) -> list[tuple[str, float]]:
        """``(kind, β)`` and ``(kind, 1.0)`` (the F₁ property) under the element-averaged convention."""
        if self.f_convention != "element_averaged":
            return []
        return [(self._kind, self.beta)] + ([(self._kind, 1.0)] if self.beta != 1.0 else [])

    def _formula_key(self) -> str:
        return f"{self._formula}:{self.f_convention}"

    def _formula_param(self) -> float:
        return self.beta

    def _p(self, s) -> float:
        return fixed_mean(getattr(s, f"{self._kind}_p_sum"), s.n)

    def _r(self, s) -> float:
        return fixed_mean(getattr(s, f"{self._kind}_r_sum"), s.n)

    def _f(self, s, beta: float) -> float:
        if self.f_convention == "f_of_averages":
            return harmonic(self._p(s), self._r(s), beta) if s.n else 1.0
        return fixed_mean(s.f_sums[(self._kind, beta)], s.n)

    @property
    def precision(self) -> float:
        """Mean per-element precision ``Σ_e P_e / N`` (the module's table). O(1)."""
        return self._p(self._table)

    @property
    def recall(self) -> float:
        """Mean per-element recall ``Σ_e R_e / N`` (the module's table). O(1)."""
        return self._r(self._table)

    @property
    def f(self) -> float:
        """F-beta in the chosen convention, ``Σ_e F_e / N`` or ``(1+β²)PR/(β²P + R)`` (what
        :meth:`get` returns). O(1)."""
        return self._f(self._table, self.beta)

    @property
    def f1(self) -> float:
        """F1 (β = 1) in the chosen convention. O(1)."""
        return self._f(self._table, 1.0)

    def value(self, s) -> float:
        """F-beta from the stats ``s`` in the chosen convention: ``Σ_e F_e / N`` (element-averaged)
        or ``(1+β²)PR / (β²P + R)`` (``f_of_averages``); 1.0 on the empty table. O(1) from the
        sums (the element-averaged F sums are settled by the table when read)."""
        return self._f(s, self.beta)

    @property
    def mean_f_spec(self) -> tuple | None:
        """``(kind, β)``: the F sum whose mean over the elements is :meth:`value`
        (``fixed_mean(s.f_sums[spec], s.n)``: the element-averaged F, ``value`` and ``_f`` not
        overridden), else ``None``. What reads a value from F sums alone uses it. O(1).

        >>> ELM().mean_f_spec, ELM(f_convention="f_of_averages").mean_f_spec
        (('elm', 1.0), None)
        """
        cls = type(self)
        if (self.f_convention == "element_averaged" and cls.value is _ElementMetric.value
                and cls._f is _ElementMetric._f):
            return (self._kind, self.beta)
        return None


class ELM(_ElementMetric):
    """ELM, "Elements Like Me": BCubed with each element removed from its own clusters.

    ``get()`` returns F-beta (element-averaged by default); ``precision``, ``recall``, ``f``
    and ``f1`` are properties. Cost: O(1) per update/revert/read with
    ``f_convention="f_of_averages"``; with the default element-averaged F (native table), O(1)
    per update and revert and O(cells of the rows and columns changed since) per read.

    Edge cases: a predicted singleton inside a larger true cluster scores ``P=1, R=0, F=0``; a true
    singleton placed in a larger predicted cluster scores ``P=0, R=1, F=0``; ELM can be 0 for every
    element; the empty table scores 1.0.

    >>> elm = ELM()
    >>> for t, p in [(1, "a"), (1, "a"), (1, "b"), (2, "b"), (2, "b"), (3, "c")]:
    ...     elm.update(t, p)
    ...     print(f"{elm.get():.4f}")
    1.0000
    1.0000
    0.4444
    0.3333
    0.5333
    0.6111
    >>> round(elm.precision, 4), round(elm.recall, 4)
    (0.6667, 0.6667)
    """

    _formula = "ELM"

    _kind = "elm"


class BCubed(_ElementMetric):
    """BCubed (Bagga & Baldwin): per-element precision ``n/b`` and recall ``n/a``, averaged.

    Same interface and costs as :class:`ELM`. BCubed is never 0 on a non-empty table: every element
    counts itself.

    >>> bc = BCubed()
    >>> for t, p in [(1, "a"), (1, "a"), (1, "b"), (2, "b"), (2, "b"), (3, "c")]:
    ...     bc.update(t, p)
    >>> round(bc.precision, 4), round(bc.recall, 4), round(bc.get(), 4)
    (0.7778, 0.7778, 0.7556)
    >>> BCubed(f_convention="f_of_averages").f_convention
    'f_of_averages'
    """

    _formula = "BCubed"

    _kind = "bcubed"
