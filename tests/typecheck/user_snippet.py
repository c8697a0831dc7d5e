"""A user's code, type-checked with ``mypy --strict`` (tests/test_quality.py): the types it sees
are streameval's own annotations (the package ships ``py.typed``), not ``Any``.

``mypy --strict`` rejects a call to an unannotated function, so every call below is to annotated
code; tests/test_quality.py also checks that assigning the same expressions to ``str`` is rejected
(so the types are real, not ``Any``).
"""

from __future__ import annotations

import streameval as se
from streameval import batch


def evaluate(stream: list[tuple[str, int]]) -> dict[str, float]:
    ev = se.Evaluator([se.ELM(), se.BCubed(), se.AdjustedRand(), se.NormalizedMutualInfo()])
    for y_true, y_pred in stream:
        ev.update(y_true, y_pred)
    ev.revert(*stream[-1])
    values: dict[str, float] = ev.get()
    return values


def one_metric(stream: list[tuple[str, int]]) -> float:
    elm = se.ELM(beta=2.0)
    for y_true, y_pred in stream:
        elm.update(y_true, y_pred)
    precision: float = elm.precision
    recall: float = elm.recall
    f: float = elm.get()
    table: se.Contingency = elm.table
    n: int = table.n
    return f + precision + recall + n


def batch_functions(truth: list[int], pred: list[int]) -> float:
    f: float = batch.elm_score(truth, pred)
    p, r, f2 = batch.bcubed_precision_recall_fscore(truth, pred)
    ari: float = batch.adjusted_rand_score(truth, pred)
    muc: float = batch.muc_score(truth, pred)
    sil: float = batch.silhouette_score([[0.0], [1.0], [5.0]], [0, 0, 1])
    return f + p + r + f2 + ari + muc + sil


def window(stream: list[tuple[str, int]]) -> dict[str, float]:
    w = se.CountWindow(100, [se.ELM(), se.Purity()])
    for y_true, y_pred in stream:
        w.update(y_true, y_pred)
    values: dict[str, float] = w.get()
    return values


if __name__ == "__main__":
    demo = [("cat", 0), ("cat", 0), ("dog", 1), ("dog", 0)]
    print(evaluate(demo), one_metric(demo), batch_functions([0, 0, 1], [0, 1, 1]), window(demo))
