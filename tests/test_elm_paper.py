"""The ELM paper's claims as properties over random clusterings, Amigó's constraints, and the
reproduction script's quick mode."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from contingency_rounding import element_close, element_error
from hypothesis import assume, example, given
from hypothesis import strategies as st

from streameval.batch import (
    bcubed_precision_recall_fscore,
    bcubed_score,
    elm_precision_recall_fscore,
    elm_score,
)
from streameval.contingency import NATIVE

BATCH_PATH = "ours" if NATIVE else "twin"  # the batch functions: the native sums, or the numpy twin

ROOT = Path(__file__).resolve().parents[1]

labels = st.lists(st.integers(0, 4), min_size=1, max_size=25)


@st.composite
def clusterings(draw, min_size=1):
    t = draw(st.lists(st.integers(0, 4), min_size=min_size, max_size=25))
    p = draw(st.lists(st.integers(0, 4), min_size=len(t), max_size=len(t)))
    return t, p


def per_element(t, p):
    """Per-element (n, a, b), BCubed F_e and ELM F_e, straight from the definitions."""
    t, p = np.asarray(t), np.asarray(p)
    n = np.array([np.sum((t == t[e]) & (p == p[e])) for e in range(len(t))])
    a = np.array([np.sum(t == t[e]) for e in range(len(t))])
    b = np.array([np.sum(p == p[e]) for e in range(len(t))])
    bc = 2 * n / (a + b)
    elm = np.where(a + b == 2, 1.0, 2 * (n - 1) / np.maximum(a + b - 2, 1))
    return n, a, b, bc, elm


# --------------------------------------------------------------------------- the paper's claims
@pytest.mark.slow
@given(clusterings())
def test_elm_never_exceeds_bcubed_per_element_and_overall(case):
    t, p = case
    n, a, b, bc, elm = per_element(t, p)
    assert np.all(elm <= bc)  # one correctly rounded quotient of small integers each: rounding is monotone
    for x, y in zip(elm_precision_recall_fscore(t, p), bcubed_precision_recall_fscore(t, p)):  # P, R and F
        # the exact ELM is at most the exact BCubed; each float within its path's bound of its own
        assert Fraction(x) <= Fraction(y) + element_error(x, BATCH_PATH, len(t)) + element_error(y, BATCH_PATH, len(t))


@given(clusterings())
def test_per_element_equality_exactly_when_the_element_is_perfectly_clustered(case):
    t, p = case
    n, a, b, bc, elm = per_element(t, p)
    perfect = (a == n) & (b == n)
    # each a correctly rounded quotient of small integers: equal exactly when the fractions are,
    # and distinct fractions of denominators <= 50 lie far more than an ulp apart
    assert np.array_equal(elm == bc, perfect)


@given(clusterings())
def test_score_one_iff_perfect(case):
    t, p = case
    same = len(set(zip(t, p))) == len(set(t)) == len(set(p))  # a bijection between clusters
    # F = 1 exactly when perfect (every term n/n); else below 1 by at least 1/(N(2N + 1)) >= 1/1275
    assert (elm_score(t, p) == 1.0) == same == (bcubed_score(t, p) == 1.0)


@given(labels)
def test_all_singletons_scores_the_share_of_true_singletons(t):
    sizes = np.bincount(np.unique(t, return_inverse=True)[1].ravel())
    share = Fraction(int(sizes[sizes == 1].sum()), len(t))
    p, r, f = elm_precision_recall_fscore(t, list(range(len(t))))
    assert p == 1.0 and element_close(r, share, BATCH_PATH, len(t)) and element_close(f, share, BATCH_PATH, len(t))
    assert bcubed_score(t, list(range(len(t)))) > 0


@given(labels)
def test_one_cluster_has_elm_recall_one(t):
    p, r, f = elm_precision_recall_fscore(t, [0] * len(t))
    assert r == 1.0
    k = len(t)
    sizes = np.bincount(np.unique(t, return_inverse=True)[1].ravel())
    expected = Fraction(1) if k == 1 else Fraction(int((sizes * (sizes - 1)).sum()), k * (k - 1))
    assert element_close(p, expected, BATCH_PATH, k)


@given(clusterings(min_size=2))
def test_elm_can_be_zero_bcubed_never(case):
    t, p = case
    assert bcubed_score(t, p) > 0
    # ZeroScore: every element alone in the prediction, none alone in the truth
    t2 = [e // 2 for e in range(2 * len(t))]
    assert elm_score(t2, list(range(len(t2)))) == 0.0


# --------------------------------------------------------------------------- Amigó's constraints
def _score(metric, t, p, conv="f_of_averages"):
    """F in Amigó et al.'s convention (F of the averaged P and R) unless ``conv`` says otherwise."""
    return (elm_score if metric == "elm" else bcubed_score)(t, p, f_convention=conv)


context = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=12)


@pytest.mark.parametrize("conv", ["f_of_averages", "element_averaged"])
@given(context, st.integers(1, 4), st.integers(1, 4), st.integers(0, 5), st.integers(0, 5))
# an unseeded run's (F of the averages: 0.2 -> 0.3, which the old claim of "no change" refused)
@example(ctx=[(0, 0), (0, 0), (1, 0)], ki=1, kj=1, li=0, lj=1)
@example(ctx=[(0, 1), (1, 2)], ki=1, kj=1, li=0, lj=1)  # no recall anywhere: F of the averages is 0 both ways
def test_cluster_homogeneity(conv, ctx, ki, kj, li, lj):
    """Splitting a cluster that mixes two categories into its two pure parts never hurts;
    BCubed always gains; ELM gains unless both parts are single elements of larger categories.
    There, under element-averaged F, each of the two has ``F_e = 0`` in the mixed pair and alone
    (``n = 1 < a``): no change. Under F of the averaged P and R their precision goes from 0
    (``n − 1 = 0`` of ``b − 1 = 1`` pairs) to 1 (a predicted singleton, metrics.md) and recall
    stays, so F rises unless the averaged recall is 0 (F is 0 either way)."""
    assume(li != lj)
    t = [c[0] for c in ctx] + [li] * ki + [lj] * kj
    d1 = [c[1] for c in ctx] + [10] * (ki + kj)
    d2 = [c[1] for c in ctx] + [10] * ki + [11] * kj
    assert _score("bcubed", t, d2, conv) > _score("bcubed", t, d1, conv)
    lo, hi = _score("elm", t, d1, conv), _score("elm", t, d2, conv)
    assert Fraction(hi) >= Fraction(lo) - element_error(hi, BATCH_PATH, len(t)) - element_error(lo, BATCH_PATH, len(t))
    if ki > 1 or kj > 1 or t.count(li) == 1 or t.count(lj) == 1:
        assert hi > lo
    elif conv == "element_averaged":  # the same exact value: the floats within both bounds
        assert abs(Fraction(hi) - Fraction(lo)) <= element_error(hi, BATCH_PATH, len(t)) + element_error(lo, BATCH_PATH, len(t))
    else:
        p1, r1, _ = elm_precision_recall_fscore(t, d1)
        p2, r2, _ = elm_precision_recall_fscore(t, d2)
        gap = Fraction(p2) - Fraction(p1) - Fraction(2, len(t))  # 0 exactly
        assert abs(gap) <= element_error(p1, BATCH_PATH, len(t)) + element_error(p2, BATCH_PATH, len(t)) and r2 == r1
        if r1 > 0:
            assert hi > lo
        else:
            assert hi == lo == 0


@pytest.mark.slow
@pytest.mark.parametrize("conv", ["f_of_averages", "element_averaged"])
@given(context, st.integers(0, 5), st.integers(1, 4), st.integers(1, 4))
def test_cluster_completeness(conv, ctx, cat, s1, s2):
    """Merging two clusters whose items all belong to the same category improves the score."""
    t = [c[0] for c in ctx] + [cat] * (s1 + s2)
    d1 = [c[1] for c in ctx] + [10] * s1 + [11] * s2
    d2 = [c[1] for c in ctx] + [10] * (s1 + s2)
    for metric in ("bcubed", "elm"):
        assert _score(metric, t, d2, conv) > _score(metric, t, d1, conv)


@pytest.mark.slow
@given(context, st.integers(2, 5), st.integers(0, 3))
def test_rag_bag(ctx, n, cat):
    """A new item from a new category does less harm in a cluster of n unary-category items
    than in a clean cluster of n items of one category (precision rises, recall is unchanged)."""
    t = [c[0] for c in ctx] + [cat] * n + [100 + i for i in range(n)] + [999]
    base = [c[1] for c in ctx] + [10] * n + [11] * n
    d1, d2 = base + [10], base + [11]
    for metric, fn in (("bcubed", bcubed_precision_recall_fscore), ("elm", elm_precision_recall_fscore)):
        (p1, r1, _), (p2, r2, _) = fn(t, d1), fn(t, d2)
        assert p2 > p1 and abs(Fraction(r2) - Fraction(r1)) <= element_error(r1, BATCH_PATH, len(t)) + element_error(r2, BATCH_PATH, len(t))
        assert _score(metric, t, d2) > _score(metric, t, d1)


def test_rag_bag_with_element_averaged_f():
    """Element-averaged F (the ELM paper's) keeps rag bag on the textbook instance, but not in
    every context: one more item of the clean category elsewhere (found by hypothesis) turns it."""
    t = [0, 0, 100, 101, 999]
    d1, d2 = [10, 10, 11, 11, 10], [10, 10, 11, 11, 11]
    for metric in ("bcubed", "elm"):
        assert _score(metric, t, d2, "element_averaged") > _score(metric, t, d1, "element_averaged")
    t, d1, d2 = [0, 0, 0, 100, 101, 999], [0, 10, 10, 11, 11, 10], [0, 10, 10, 11, 11, 11]
    assert element_close(_score("bcubed", t, d2, "element_averaged"), Fraction(3, 5), BATCH_PATH, len(t))
    assert element_close(_score("bcubed", t, d1, "element_averaged"), Fraction(11, 18), BATCH_PATH, len(t))


@pytest.mark.slow
@pytest.mark.parametrize("conv", ["f_of_averages", "element_averaged"])
@given(context, st.integers(2, 6))
def test_cluster_size_vs_quantity(conv, ctx, n):
    """One item split off a big cluster is better than n pairs each split in two."""
    t = [c[0] for c in ctx] + [50] * (n + 1) + [60 + i for i in range(n) for _ in range(2)]
    big = [10] * (n + 1)
    pairs = [20 + i for i in range(n) for _ in range(2)]
    d1 = [c[1] for c in ctx] + [10] * n + [11] + pairs
    d2 = [c[1] for c in ctx] + big + [30 + k for k in range(2 * n)]
    for metric in ("bcubed", "elm"):
        assert _score(metric, t, d1, conv) > _score(metric, t, d2, conv)


def test_homogeneity_edge_case_is_a_tie_for_elm():
    t, mixed, split = [0, 0, 1, 1], [0, 1, 1, 2], [0, 1, 2, 3]
    assert elm_score(t, mixed) == elm_score(t, split) == 0.0
    assert bcubed_score(t, split) > bcubed_score(t, mixed)


def test_five_element_example_ranks_the_systems_oppositely():
    t, s1, s2 = [0, 0, 1, 1, 1], [0, 1, 2, 2, 2], [0, 0, 1, 2, 2]
    for f, s, want in ((bcubed_score, s1, Fraction(13, 15)), (bcubed_score, s2, Fraction(41, 50)),
                       (elm_score, s1, Fraction(3, 5)), (elm_score, s2, Fraction(2, 3))):
        assert element_close(f(t, s), want, BATCH_PATH, len(t)), (f.__name__, s)


# --------------------------------------------------------------------------- the reproduction
@pytest.mark.slow
def test_reproduction_quick_mode(tmp_path, monkeypatch):
    script = ROOT / "examples" / "reproduce_elm_paper.py"
    monkeypatch.setattr(sys, "argv", [str(script), "--quick", "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(script), run_name="__main__")
    assert done.value.code == 0
    md = (tmp_path / "elm-paper.md").read_text()
    rows = [r.split(" | ") for r in md.splitlines() if r.startswith("| 15 elements")]
    assert len(rows) >= 21
    for row in rows:
        ours, published = row[2], row[3]
        if published not in ("not found", "-") and "of" not in ours:
            assert f"{float(ours):.2f}" == published, row  # every published value reproduced
    assert "all 512 x 512 contiguous clusterings (10 elements)" in md
    assert not (tmp_path / "img").exists()


@pytest.mark.slow
def test_reproduction_without_data_writes_to_its_folder_and_says_what_is_missing(tmp_path):
    script = ROOT / "examples" / "reproduce_elm_paper.py"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, str(script), "--quick", "--data", str(tmp_path / "no-data")],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "elm-paper-output" / "elm-paper.md").is_file()  # the default: not docs/
    assert "WARNING: the page-stream data was not found at" in run.stderr
    assert "BERT, 34 test streams: ELM and BCubed F1, precision, recall" in run.stderr
    assert "could NOT be produced" in run.stderr
    md = (tmp_path / "elm-paper-output" / "elm-paper.md").read_text()
    assert "the real-data rows are missing" in md and "| BERT" not in md
