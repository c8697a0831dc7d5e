"""Which rows get a report in ``streameval watch``: ``--every N`` (a report every N rows) or the
default ``--every auto``, which keeps the cost of the reports a bounded share of reading the rows.

A report costs about a millisecond whatever happened since the previous one (the window's table
rebuilt from its rows, every metric read twice, the line written), and brings the all-time table
up to date with the rows since: with ELM or BCubed that catch-up re-settles the element-averaged F
terms of every cluster the new rows touch and of every cell of those clusters (a cell's term
depends on the sizes of both its clusters), up to every cell of the table, whatever the number of
new rows. Reading a row costs a tenth to a half of a microsecond. ``auto`` therefore looks every
:data:`AUTO_STEP` rows, and reports when the rows since its last report reach
:data:`AUTO_MIN_ROWS` plus :data:`AUTO_ROWS_PER_CELL` times the cells the table held then (a bound
of the catch-up's work), so that reports cost a small share of reading the rows between them
(measured in ``docs/benchmarks/cli-watch.md``); and when drop detection flagged a drop since
(drop detection reads every row as they come): that report comes at the first look after the
drop. The rule reads row counts, cell counts and alarms only, so which rows get a report is a
property of the input; reports on ``--interval T`` come on top and do not move it.

>>> c = Cadence(None)  # --every auto
>>> c.start(0)
>>> c.next_look, c.due(10_000, drops=0), c.due(100_000, drops=0)
(10000, False, True)
>>> c.reported(100_000, cells=5_000, drops=0)  # next: 100,000 + 16 × 5,000 rows further on
>>> [c.due(rows, drops=0) for rows in (200_000, 270_000, 280_000)], c.due(110_000, drops=1)
([False, False, True], True)
"""

from __future__ import annotations

__all__ = ["Cadence", "AUTO_STEP", "AUTO_MIN_ROWS", "AUTO_ROWS_PER_CELL", "every_option"]

AUTO_STEP = 10_000  # rows between two looks of --every auto: at most one report per this many
# Rows since the last auto report before the next one: AUTO_MIN_ROWS (a report's own cost, about a
# millisecond, is then under a tenth of reading the rows at 0.1 µs each) plus AUTO_ROWS_PER_CELL
# per cell of the table (a catch-up re-settles up to every cell, up to about 0.3 µs a cell: then
# under a sixth of reading 16 rows per cell)
AUTO_MIN_ROWS = 100_000
AUTO_ROWS_PER_CELL = 16


def every_option(s: str) -> int | None:
    """``--every``: ``auto`` (``None``) or a number of rows at least 1. O(length).

    >>> every_option("auto"), every_option("500")
    (None, 500)
    """
    from .options import positive

    return None if s == "auto" else positive(s)


class Cadence:
    """The rows at which ``watch`` reports: every ``every`` rows, or (``every`` ``None``, auto)
    at a look every :data:`AUTO_STEP` rows when the rows since the last report reach
    :data:`AUTO_MIN_ROWS` plus :data:`AUTO_ROWS_PER_CELL` times the table's cells then, or a
    drop was flagged since. O(1) per look.

    With ``--every 3`` a look comes every 3 rows and always reports; under auto a look comes
    every :data:`AUTO_STEP` rows and reports once the rows since the last report reach
    ``AUTO_MIN_ROWS + AUTO_ROWS_PER_CELL · cells``, or a drop came:

    >>> c = Cadence(3); c.start(0)
    >>> c.next_look, c.due(3, 0)
    (3, True)
    >>> c.reported(3); c.next_look
    6
    >>> auto = Cadence(None); auto.start(0)
    >>> auto.next_look == AUTO_STEP, auto.due(AUTO_STEP, 0), auto.due(AUTO_STEP, 1)
    (True, False, True)
    >>> auto.looked(); auto.next_look == 2 * AUTO_STEP
    True
    """

    def __init__(self, every: int | None):
        self.every = every
        self.step = AUTO_STEP if every is None else every
        self.last = 0  # rows at the last report of this cadence
        self.cells = 0  # the table's cells then (auto)
        self.drops = 0  # drops flagged by then (auto)
        self.next_look = self.step

    def start(self, rows: int, drops: int = 0) -> None:
        """Begin at ``rows`` (a resumed run: the checkpoint's rows). O(1)."""
        self.last, self.drops, self.next_look = rows, drops, rows + self.step

    def due(self, rows: int, drops) -> bool:
        """At a look (``rows == next_look``): whether a report is due; ``drops``: the drops
        flagged so far, or a callable giving them (called only when the rows do not decide).
        O(1) (plus the callable's cost)."""
        if self.every is not None or (rows - self.last
                                      >= AUTO_MIN_ROWS + AUTO_ROWS_PER_CELL * self.cells):
            return True
        return (drops() if callable(drops) else drops) > self.drops

    def reported(self, rows: int, cells: int = 0, drops: int = 0) -> None:
        """A report of this cadence at ``rows`` (the table then held ``cells`` cells). O(1)."""
        self.last, self.cells, self.drops = rows, cells, drops
        self.next_look = rows + self.step

    def on_interval(self, rows: int) -> None:
        """A report on ``--interval`` at ``rows``: ``--every N`` counts its N rows from there
        (as it always has); auto's looks and rule do not move. O(1)."""
        if self.every is not None:
            self.reported(rows)

    def looked(self) -> None:
        """A look at which no report was due: the next one. O(1)."""
        self.next_look += self.step
