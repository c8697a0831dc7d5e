"""Type stub of the compiled core (src/py.rs): the native state behind :class:`streameval.Contingency`.

Labels are arbitrary hashable Python objects (``Any`` here); counts and sums are Python ints.
"""

from collections.abc import Callable, Hashable
from typing import Any

from typing_extensions import Self

MAX_TOTAL: int
"""A table holds fewer than ``2**57`` elements."""

FORMULAS: list[str]
"""The names of the metric formulas the table computes natively: the one table ``FORMULAS`` of
src/values.rs, looked up by name (:class:`Formula`), never by position."""

STAT_NAMES: list[str]
"""The running sums' names, from the one list ``STATS`` of src/core.rs (each a read-only attribute
of :class:`Table`; ``streameval.stats.STAT_NAMES`` is the same list, a test holds them equal)."""

def _true_divide(a: int, b: int) -> float | None:
    """Python's ``a / b`` for ints below ``2**127`` in magnitude, as the native formulas compute
    it (correctly rounded); ``None`` when ``b == 0``."""

def block_sums(t: Any, p: Any, w: Any, block: int, names: list[str],
               specs: list[tuple[bool, int, int]],
               means: bool = False) -> tuple[dict[str, list[int]], list[list[Any]]]:
    """The exact sums ``names`` of the table of each whole block of ``block`` rows (int64 code
    arrays ``t``, ``p`` from 0 to 2**22, weights ``w`` or ``None``), and the element-averaged F
    sums of ``specs`` (``(elm, num, den)``; with ``means``: their means over each block's
    elements, as floats): the twin of ``streameval.detect.block_stats`` (src/block_sums.rs)."""

def row_end(chunk: bytes, pos: int, rows: int) -> tuple[int, int] | None:
    """From byte ``pos`` of ``chunk`` (a line's start), the ``rows``-th line that is not blank:
    ``(offset after it, lines from pos through it)``, ``None`` when fewer follow (src/lines.rs)."""

class Formula:
    """A native formula looked up by the name its Python metric declares, with its float parameter
    (``beta``, or unused); ``KeyError`` for a name :data:`FORMULAS` lacks. Pickled by name."""

    def __init__(self, name: str, param: float = 0.0) -> None: ...
    def read(self, table: Any) -> float | None:
        """The value over ``table`` now, with the Python formula's exact operations; ``None`` to
        leave it to the Python formula (or for a table that is not native). O(1)."""
    @property
    def name(self) -> str: ...
    @property
    def param(self) -> float: ...
    def __reduce__(self) -> tuple[Any, tuple[str, float]]: ...

class FormulaDeclined(Exception):
    """A native formula of a :class:`ValuePlan` left its value to Python (its Python twin would
    raise, or the sums exceed the native widths): read the metrics through their Python formulas."""

class ValuePlan:
    """What an Evaluator reads natively: its metrics' names, each with its :class:`Formula` or
    ``None`` (a metric read by Python)."""

    def __init__(self, names: list[Any], formulas: list[Formula | None]) -> None: ...
    def read(self, table: Table) -> dict[Any, float | None]:
        """``{name: value}``: every native formula's value over ``table``, ``None`` for the
        metrics without one; :class:`FormulaDeclined` when a formula leaves its value to Python.
        Kept while the table's version is unchanged. Never calls back into Python. O(len)."""
    def bind(self, table: Table, fallback: Callable[[], dict[Any, float]]) -> Reading:
        """The reading of ``table`` as one native callable: :meth:`read`'s dict, or
        ``fallback()``'s when a formula declines. O(len) a call."""
    def __len__(self) -> int: ...

class Reading:
    """A :class:`ValuePlan`'s reading of one table (``ValuePlan.bind``): call it for the dict."""

    def __call__(self) -> dict[Any, float]: ...

class Table:
    """The native state of a contingency table (see ``streameval.Contingency`` for the API)."""

    skipped: int
    """Elements skipped for a missing label (``missing="skip"``)."""
    version: int
    """Bumped by every mutation (on-demand metrics cache their value against it)."""

    def __new__(cls, missing: str | None = None, *args: Any, **kwargs: Any) -> Self: ...

    # the running sums, read-only attributes made from src/core.rs STATS (see
    # streameval.stats.ContingencyStats)
    @property
    def n(self) -> int: ...
    @property
    def cells(self) -> int: ...
    @property
    def k_true(self) -> int: ...
    @property
    def k_pred(self) -> int: ...
    @property
    def sum_cell_sq(self) -> int: ...
    @property
    def sum_row_sq(self) -> int: ...
    @property
    def sum_col_sq(self) -> int: ...
    @property
    def sum_cell_xlogx(self) -> int: ...
    @property
    def sum_row_xlogx(self) -> int: ...
    @property
    def sum_col_xlogx(self) -> int: ...
    @property
    def bcubed_p_sum(self) -> int: ...
    @property
    def bcubed_r_sum(self) -> int: ...
    @property
    def elm_p_sum(self) -> int: ...
    @property
    def elm_r_sum(self) -> int: ...
    @property
    def sum_col_max(self) -> int: ...
    @property
    def sum_row_max(self) -> int: ...
    @property
    def true_singletons(self) -> int: ...
    @property
    def pred_singletons(self) -> int: ...
    @property
    def both_singletons(self) -> int: ...
    @property
    def missing(self) -> str:
        """``"raise"`` or ``"skip"``: what a missing label does."""

    def update(self, y_true: Hashable, y_pred: Hashable, w: int = 1) -> None:
        """Add ``w`` elements with true label ``y_true`` and predicted label ``y_pred``. O(1)."""
    def revert(self, y_true: Hashable, y_pred: Hashable, w: int = 1) -> None:
        """Remove ``w`` elements added by :meth:`update` with the same arguments. O(1)."""
    def get_cell(self, t: Hashable, p: Hashable) -> int:
        """The count of cell ``(t, p)``, 0 if absent. O(1)."""
    def cell_list(self) -> list[tuple[Any, Any, int]]:
        """Every non-zero cell as a list of ``(true, pred, count)``. O(cells)."""
    def sizes(self, side: int) -> dict[Any, int]:
        """``{label: size}`` of the non-empty clusters of a side (0 true, 1 predicted). O(k)."""
    def cluster_cells(self, side: int, label: Hashable) -> dict[Any, int]:
        """The cells of cluster ``label`` of a side as ``{other label: count}``. O(its cells)."""
    def cluster_stats(self, side: int, label: Hashable) -> tuple[int, int, int] | None:
        """``(size, sum of squared cells, largest cell)`` of cluster ``label`` of a side, or None."""
    def labels_of(self, side: int) -> list[Any]:
        """The labels of the non-empty clusters of a side. O(k)."""
    def stat_values(self) -> list[int]:
        """Every running sum, in the order of ``streameval.stats.STAT_NAMES``. O(1)."""
    def f_items(self) -> list[tuple[tuple[str, float], int]]:
        """``[((kind, beta), Σ n·F_e)]`` for the tracked element-averaged F-scores."""
    def _track(self, kind: str, beta: float, num: int, den: int) -> bool:
        """Start tracking ``kind`` with ``beta**2 = num/den`` under key ``(kind, beta)``."""
    def relabel_pred(self, old: Hashable, new: Hashable) -> None:
        """Move predicted cluster ``old`` into ``new``."""
    def relabel_true(self, old: Hashable, new: Hashable) -> None:
        """Move true cluster ``old`` into ``new``."""
    def _add_triples(self, triples: list[tuple[Any, Any, int]]) -> None:
        """Add checked ``(true, pred, count)`` triples (labels valid, counts >= 1)."""
    def _add_int_arrays(self, t: Any, p: Any, w: Any = None) -> bool:
        """Add elements given as native-endian int64 buffers; ``False`` (nothing changed) when
        the labels' ranges are too wide for one 64-bit key."""
    def _add_coded_cells(self, tu: list[Any], pu: list[Any], t: bytes, p: bytes, c: bytes,
                         skipped: int = 0) -> None:
        """Add cells given by codes into lists of distinct labels (int64 buffers of codes, counts)."""
    def _merge_from(self, other: Table) -> None:
        """Add the cells of ``other`` (a different table) in bulk. O(cells of both)."""
    def _copy_from(self, other: Table) -> None:
        """Make this (empty) table a copy of ``other``. O(cells)."""
    def _check_native(self) -> None:
        """Assert the native invariants (cells mirrored, records, classes, groups, sums). O(cells)."""

class SummaryKernel:
    """The per-point work of a ``ClusterSummaries`` in place on its numpy arrays (src/summaries_py.rs):
    every method returns ``None``/``False`` having changed nothing when the reference path must
    take the call."""

    def __init__(self, cosine: bool) -> None: ...
    def bind(self, count: Any, mean: Any, m2: Any, gmean: Any, touched: Any) -> None: ...
    def state(self) -> bytes: ...
    def restore(self, state: bytes) -> None: ...
    def stale_rows(self, width: int, version: int) -> list[int] | None: ...
    def bind_dist(self, dist: Any) -> None: ...
    def update(self, slot: int, x: Any, w: int, n: int, gm2: float, version: int) -> float | None: ...
    def score(self, own: int, x: Any, width: int, singleton: float, scored: bool,
              version: int | None = None) -> tuple[bytes, float | None] | None: ...
    def update_score(self, slot: int, x: Any, w: int, n: int, gm2: float, version: int, width: int,
                     singleton: float, scored: bool, label: Any = None, points: dict[Any, Any] | None = None
                     ) -> tuple[float, bytes | None, float | None, int | None] | None: ...
    def update_values(self, slot: int, x: Any, w: int, n: int, gm2: float, version: int, width: int, k: int,
                      singleton: float, db: DaviesBouldinKernel | None, codes: bytes, names: tuple[Any, ...],
                      out: dict[Any, Any], label: Any, points: dict[Any, Any]
                      ) -> tuple[float, bytes | None, float | None, int | None] | None: ...
    def changed_slots(self, since: int, width: int, version: int) -> list[int]: ...
    def key(self, x: Any) -> bytes | None: ...
    def refresh(self, since: int, width: int) -> bool: ...
    def dist_sum(self, width: int) -> float | None: ...
    def ssb(self, width: int, n: int, version: int) -> float: ...
    def cosine_ssb(self, width: int) -> float: ...
    def compactness(self, width: int, k: int) -> float: ...
    def ssw(self, width: int) -> float: ...
    def read(self, width: int, n: int, k: int, version: int, db: DaviesBouldinKernel | None,
             db_rebuild: bool) -> tuple[float, float, float | None, float, float | None]: ...
    def values(self, width: int, n: int, k: int, version: int, db: DaviesBouldinKernel | None,
               db_rebuild: bool, codes: bytes) -> list[float] | None: ...
    def values_into(self, width: int, n: int, k: int, version: int, db: DaviesBouldinKernel | None,
                    db_rebuild: bool, codes: bytes, names: tuple[Any, ...], out: dict[Any, Any]) -> bool: ...
    def check_block(self, x: Any) -> tuple[int, str] | None: ...
    def update_many(self, slots: Any, x: Any, w: Any, n: int, gm2: float, version: int,
                    table: Any = None) -> float: ...

class DaviesBouldinKernel:
    """The incremental Davies-Bouldin index of one view over a ``SummaryKernel`` (src/summaries_py.rs)."""

    def __init__(self) -> None: ...
    def state(self) -> bytes: ...
    def restore(self, state: bytes) -> None: ...
    def value(self, kernel: SummaryKernel, width: int, version: int, rebuild: bool) -> float | None: ...

class ReportStep:
    """A ``ClusterReport``'s plain update, get and update+get in one native call each, over a
    ``ClusterSummaries``' and a silhouette's instance dicts (``ClusterSummaries.report_step``;
    src/summaries_py.rs)."""

    def __init__(self, owner: Any, state: dict[str, Any], sil: dict[str, Any], account: Any,
                 db: DaviesBouldinKernel | None, singleton: float, codes: bytes, names: tuple[Any, ...],
                 keys: dict[Any, Any], heads: tuple[Any, ...], mean_name: Any) -> None: ...
    def __call__(self, x: Any, y_pred: Any, w: Any) -> dict[Any, Any] | None: ...
    def update(self, x: Any, y_pred: Any, w: Any) -> bool: ...
    def read(self) -> dict[Any, Any] | None: ...

def _simd_paths() -> list[str]:
    """The distance kernels' paths this CPU runs, narrowest first (``plain``, ``avx2``), for
    the tests (src/summaries_py.rs)."""

def _sq_dists(rows: Any, b: Any, out: Any, path: str) -> None:
    """``out[j] = ||rows_j - b||²`` for float64 arrays ``rows`` ``(m, d)``, ``b`` ``(d,)`` and a
    writable ``out`` ``(m,)``, by the kernel of ``path`` (one of :func:`_simd_paths`), for the
    tests and the benchmark. O(m·d)."""

class RowPass:
    """The floor of one exact distance row, for the benchmark: a copy of ``k`` means ``(k, d)``;
    a call ``(j)`` computes the squared distances from mean ``j`` to every mean by the kernel of
    ``path`` and returns the first. O(k·d) per call."""

    def __init__(self, means: Any, path: str) -> None: ...
    def __call__(self, j: int) -> float: ...
