"""What every contingency table shares, whatever holds its state: equality, serialisation, checks.

:class:`TableAPI` is mixed into the native table (:class:`streameval.Contingency`) and into the
pure-Python reference (:class:`streameval.reference.ReferenceContingency`). It reads a table only
through the public surface both provide: ``items()``, the sums named in
:data:`~streameval.stats.STAT_NAMES`, ``f_sums``, ``tracked_f()``, ``skipped``, ``missing``,
``track_f`` and ``_add_cells`` (a bulk add of checked cells).
"""

from __future__ import annotations

import json  # noqa: F401  (the doctests use it)
import numbers
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from ._validate import check_label
from .errors import InvalidLabelError, InvalidStateError, MissingLabelError, StreamevalError
from .state import check_header, header, label_from_json, label_index
from .stats import MAX_TOTAL, STAT_NAMES, ContingencyStats

_FORMAT = "streameval.Contingency"
_VERSION = 2  # 2: each label once, in an index (1: labels written in every cell, still read)


class TableAPI:
    """Equality, ``stats()``, ``to_dict``/``from_dict`` and the sums check, over the public surface."""

    __slots__ = ()

    if TYPE_CHECKING:
        # What the mixin reads, supplied by each table class (the native table's properties,
        # the reference's attributes): the sums named in STAT_NAMES, and the rest below.
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
        def missing(self) -> str: ...
        @property
        def f_sums(self) -> dict[tuple[str, float], int]: ...
        @property
        def skipped(self) -> int: ...
        @skipped.setter
        def skipped(self, value: int) -> None: ...

        def __init__(self, missing: str = "raise") -> None: ...
        def items(self) -> Iterator[tuple[Any, Any, int]]: ...
        def tracked_f(self) -> list[tuple[str, float]]: ...
        def track_f(self, kind: str, beta: float = 1.0) -> tuple[str, float]: ...
        def _add_cells(self, triples: Iterable[tuple[Any, Any, int]]) -> None: ...

    def _check_same_policy(self, other: TableAPI) -> None:
        """The merge law on missing labels: two tables merge only under the same ``missing``
        policy. A ``"raise"`` table holds no skipped element (it could never revert one), and a
        ``"skip"`` table's ``skipped`` would otherwise count some shards' missing labels and not
        others': refused with :class:`~streameval.errors.StreamevalError`, before anything
        changes, whatever the counts. O(1).

        >>> from streameval import Contingency
        >>> skip = Contingency(missing="skip")
        >>> skip.update(None, "a")
        >>> Contingency().merge(skip)
        Traceback (most recent call last):
        ...
        streameval.errors.StreamevalError: cannot merge a table with missing='skip' (1 skipped) into one with missing='raise': the missing-label policies must match
        """
        if other.missing != self.missing:
            raise StreamevalError(
                f"cannot merge a table with missing={other.missing!r} ({other.skipped} skipped) "
                f"into one with missing={self.missing!r}: the missing-label policies must match"
            )

    def stats(self) -> ContingencyStats:
        """A snapshot of the sufficient statistics. O(number of tracked F-scores)."""
        s = ContingencyStats(**{name: getattr(self, name) for name in STAT_NAMES})
        s.f_sums = dict(self.f_sums)
        return s

    def _state(self):
        cells: dict = {}
        for t, p, c in self.items():
            cells.setdefault(t, {})[p] = c
        return (
            cells,
            tuple(getattr(self, name) for name in STAT_NAMES),
            self.f_sums,
            self.skipped,
        )

    def __eq__(self, other) -> bool:
        """Two tables are equal when their cells, every sum and the tracked F-scores are equal."""
        if not isinstance(other, TableAPI):
            return NotImplemented
        return self._state() == other._state()

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable

    def __len__(self) -> int:
        """The number of non-zero cells."""
        return self.cells

    def __repr__(self) -> str:
        return (
            f"Contingency(n={self.n}, cells={self.cells}, k_true={self.k_true}, "
            f"k_pred={self.k_pred})"
        )

    def _check_sums(self) -> None:
        """Assert that every kept sum equals its recomputation from the cells (the definition)."""
        ref = ContingencyStats.from_cells(self.items(), self.tracked_f())
        for name in STAT_NAMES:
            assert getattr(self, name) == getattr(ref, name), f"sum {name} drifted"
        assert self.f_sums == ref.f_sums, "tracked F sums drifted"
        assert self.skipped >= 0

    def to_dict(self) -> dict:
        """A JSON-safe dict of the state (labels: str, int, float, bool, or tuples of these).

        Version 2: each label is written once, in ``labels`` (``{"true": [...], "pred": [...]}``,
        in the canonical order of :func:`~streameval.state.label_index`), and each cell as
        ``[true position, pred position, count]``, sorted. Equal tables give equal dicts. O(cells
        log cells).

        >>> from streameval import Contingency
        >>> t = Contingency(); t.update("a", ("x", 1), w=2); t.update("b", ("x", 1))
        >>> d = t.to_dict(); d["labels"], d["cells"]
        ({'true': ['a', 'b'], 'pred': [['x', 1]]}, [[0, 0, 2], [1, 0, 1]])
        >>> Contingency.from_dict(json.loads(json.dumps(d))) == t
        True
        """
        items = list(self.items())
        true, t_at = label_index(t for t, _, _ in items)
        pred, p_at = label_index(p for _, p, _ in items)
        cells = sorted([t_at[t], p_at[p], c] for t, p, c in items)
        return {
            **header(_FORMAT, _VERSION),
            "missing": self.missing,
            "skipped": self.skipped,
            "n": self.n,
            "track_f": [[kind, beta] for kind, beta in self.tracked_f()],
            "labels": {"true": true, "pred": pred},
            "cells": cells,
        }

    @classmethod
    def from_dict(cls, state: dict) -> TableAPI:
        """Rebuild a table from :meth:`to_dict`'s output, validating it. O(cells).

        Raises :class:`~streameval.errors.InvalidStateError` naming the first problem found,
        whatever it is (a number too large for a float, a value of the wrong type, a state too
        large for memory): never a bare ``TypeError``, ``OverflowError`` or ``MemoryError``.
        """
        try:
            return cls._from_dict(state)
        except InvalidStateError:
            raise
        except (ArithmeticError, LookupError, MemoryError, RecursionError, TypeError,
                ValueError) as e:
            raise InvalidStateError(f"invalid saved state: {e}") from None

    @classmethod
    def _from_dict(cls, state: dict) -> TableAPI:
        check_header(state, _FORMAT, (1, _VERSION), ("missing", "skipped", "n", "track_f", "cells"))
        if state["missing"] not in ("raise", "skip"):
            raise InvalidStateError(f"invalid 'missing' policy {state['missing']!r}")
        skipped = state["skipped"]
        if not _is_count(skipped, allow_zero=True):
            raise InvalidStateError(f"'skipped' must be an int >= 0 and < 2**57, got {_short(skipped)}")
        if not _is_count(state["n"], allow_zero=True):
            raise InvalidStateError(f"'n' must be an int >= 0 and < 2**57, got {_short(state['n'])}")
        triples = _cells_v1(state["cells"]) if state["version"] == 1 else _cells_v2(state)
        total = sum(c for _, _, c in triples)
        if total >= MAX_TOTAL:
            raise InvalidStateError(f"the cells sum to {total}: the total must stay below 2**57")
        if state["n"] != total:
            raise InvalidStateError(
                f"inconsistent state: 'n' is {_short(state['n'])} but the cells sum to {total}"
            )
        table = cls(state["missing"])
        table.skipped = skipped
        track = state["track_f"]
        if not isinstance(track, list):
            raise InvalidStateError("'track_f' must be a list of [kind, beta]")
        for spec in track:
            try:
                kind, beta = spec
                table.track_f(kind, beta)
            except (ArithmeticError, TypeError, ValueError) as e:
                raise InvalidStateError(f"invalid track_f entry {_short(spec)}: {e}") from None
        table._add_cells(triples)
        return table


def _checked_label(v, where: str, fresh_nan: bool):
    """A saved label read back and checked (missing, unhashable: ``InvalidStateError``)."""
    try:
        label = label_from_json(v, fresh_nan=fresh_nan)
        check_label(label, where)
    except (MissingLabelError, InvalidLabelError) as e:
        raise InvalidStateError(f"{where}: {e}") from None
    return label


def _check_cell(k: int, key: tuple, c, seen: set) -> None:
    """Cell ``k`` (of labels or positions ``key``) has a valid count and appears once."""
    if not _is_count(c):
        raise InvalidStateError(f"cells[{k}]: count must be an int >= 1 and < 2**57, got {_short(c)}")
    if key in seen:
        raise InvalidStateError(f"cells[{k}]: cell ({key[0]!r}, {key[1]!r}) appears twice")
    seen.add(key)


def _cells_v1(cells) -> list:
    """The ``(true, pred, count)`` cells of a version-1 state (labels written in each cell)."""
    if not isinstance(cells, list):
        raise InvalidStateError("'cells' must be a list of [true, pred, count]")
    triples = []
    seen: set = set()
    for k, cell in enumerate(cells):
        if not (isinstance(cell, (list, tuple)) and len(cell) == 3):
            raise InvalidStateError(f"cells[{k}] must be [true, pred, count], got {_short(cell)}")
        t = _checked_label(cell[0], f"cells[{k}]: true", False)
        p = _checked_label(cell[1], f"cells[{k}]: pred", False)
        _check_cell(k, (t, p), cell[2], seen)
        triples.append((t, p, cell[2]))
    return triples


def _cells_v2(state) -> list:
    """The ``(true, pred, count)`` cells of a version-2 state: each label once in ``labels``,
    read once (a NaN inside a tuple label a new object, so distinct labels stay distinct), each
    cell ``[true position, pred position, count]``; every label used by some cell."""
    labels, cells = state.get("labels"), state["cells"]
    if not (isinstance(labels, dict) and isinstance(labels.get("true"), list)
            and isinstance(labels.get("pred"), list)):
        raise InvalidStateError("'labels' must be {\"true\": [labels], \"pred\": [labels]}")
    sides = []
    for which in ("true", "pred"):
        read: dict = {}
        for k, v in enumerate(labels[which]):
            label = _checked_label(v, f"labels.{which}[{k}]", True)
            if label in read:
                raise InvalidStateError(
                    f"labels.{which}[{k}]: label {_short(label)} appears twice (at {read[label]})"
                )
            read[label] = k
        sides.append(list(read))
    if not isinstance(cells, list):
        raise InvalidStateError("'cells' must be a list of [true position, pred position, count]")
    used: list[set[int]] = [set(), set()]
    triples: list = []
    seen: set = set()
    for k, cell in enumerate(cells):
        if not (isinstance(cell, list) and len(cell) == 3
                and all(_is_count(x, allow_zero=True) for x in cell[:2])
                and cell[0] < len(sides[0]) and cell[1] < len(sides[1])):
            raise InvalidStateError(
                f"cells[{k}] must be [true position, pred position, count] with positions into "
                f"'labels', got {_short(cell)}"
            )
        i, j, c = cell
        _check_cell(k, (i, j), c, seen)
        used[0].add(i)
        used[1].add(j)
        triples.append((sides[0][i], sides[1][j], c))
    for side, name in ((0, "true"), (1, "pred")):
        if len(used[side]) != len(sides[side]):
            unused = min(set(range(len(sides[side]))) - used[side])
            raise InvalidStateError(f"labels.{name}[{unused}] is in no cell")
    return triples


def _short(v, limit: int = 80) -> str:
    """``repr(v)``, cut to ``limit`` characters (a crafted state may hold a 400-digit number)."""
    r = repr(v) if not isinstance(v, int) or abs(v) < 10**limit else f"<int of {len(str(v))} digits>"
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _is_count(v, allow_zero=False) -> bool:
    """An int (not a bool, not a float) in ``[1, 2**57)`` (or ``[0, 2**57)``)."""
    return (
        isinstance(v, numbers.Integral)
        and not isinstance(v, bool)
        and (0 if allow_zero else 1) <= int(v) < MAX_TOTAL
    )
