"""Instruction counts of measured calls under ``valgrind --tool=callgrind``, for the benchmark scripts.

The measured code runs inside ``functools.reduce`` (:func:`measured`), as in ``bench_core.py``; a
child process run by :func:`counts` collects only that function (``--toggle-collect``) and dumps
its counters after each call of it (``--dump-after``), so one process under valgrind gives one
instruction count per measured call, in order, what it did before (imports, building the inputs,
warm-up calls) uncounted. Instruction counts are stable on a loaded machine, unlike CPU times.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

from bench_core import callgrind_total

__all__ = ["available", "measured", "counts"]


def available() -> bool:
    """Whether ``valgrind`` is on the PATH (without it the pages leave the counts out)."""
    return shutil.which("valgrind") is not None


def measured(fn, *args):
    """``fn(*args)``, called once inside ``functools.reduce`` (the collected function)."""
    return functools.reduce(lambda _acc, _item: fn(*args), [None], None)


def counts(cmd: list, expected: int, env=None, timeout: float = 3600) -> list[int]:
    """The instructions of the last ``expected`` :func:`measured` calls of the process ``cmd``, in
    order. Every ``functools.reduce`` is collected and dumped, including the few that imports
    make: the child makes its measured calls last (warm-up calls first), and they are the last
    ``expected`` dumps; fewer dumps than that is an error.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", "--collect-atstart=no",
             "--toggle-collect=functools_reduce", "--dump-after=functools_reduce",
             f"--callgrind-out-file={out}", *map(str, cmd)],
            env=env, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, cmd))} failed under callgrind:\n{proc.stderr[-2000:]}")
        dumps = sorted(Path(tmp).glob("cg.out.*"), key=lambda q: int(q.name.rsplit(".", 1)[1]))
        totals = [callgrind_total(d) for d in dumps]
    if len(totals) < expected:
        raise RuntimeError(f"expected {expected} measured calls under callgrind, got {len(totals)}")
    return totals[len(totals) - expected:]
