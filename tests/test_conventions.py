"""The edge-case conventions, one named test per row of the table in docs/conventions.md.

Each test asserts the values streameval gives, and where a peer defines the metric (scikit-learn),
that the peer gives the same value. ``tests/test_docs.py`` checks that every test named in the
conventions table exists here.
"""

import math
import warnings
from fractions import Fraction

import pytest
from contingency_rounding import (
    assert_element_within,
    element_close,
    exact_and_bound,
    fixed_close,
    pair_bounds,
    within,
)
from oracles import element_scores

import streameval as se
from streameval import batch
from streameval.contingency import NATIVE

BATCH_PATH = "ours" if NATIVE else "twin"  # the batch functions: the native sums, or the numpy twin

sk = pytest.importorskip("sklearn.metrics")


def stream(metric, y_true, y_pred):
    for t, p in zip(y_true, y_pred):
        metric.update(t, p)
    return metric.get()


def elm_prf(y_true, y_pred):
    m = se.ELM()
    stream(m, y_true, y_pred)
    return m.precision, m.recall, m.get()


EMPTY = {
    "ELM": 1.0, "BCubed": 1.0, "Rand": 1.0, "AdjustedRand": 1.0, "PairPrecision": 1.0,
    "PairRecall": 1.0, "PairF1": 1.0, "PairJaccard": 1.0, "FowlkesMallows": 0.0,
    "MutualInfo": 0.0, "NormalizedMutualInfo": 1.0, "Homogeneity": 1.0, "Completeness": 1.0,
    "VBeta": 1.0, "VariationOfInformation": 0.0, "Purity": 1.0, "InversePurity": 1.0,
}  # fmt: skip


def test_empty_table_values():
    values = {name: cls().get() for name, cls in se.REGISTRY.items() if name in EMPTY}
    assert values == EMPTY
    assert sk.rand_score([], []) == 1.0 and sk.adjusted_rand_score([], []) == 1.0
    assert sk.fowlkes_mallows_score([], []) == 0.0
    assert sk.normalized_mutual_info_score([], []) == 1.0
    assert sk.homogeneity_completeness_v_measure([], []) == (1.0, 1.0, 1.0)


# every registered metric on the empty table: the scikit-learn families above (EMPTY), and the
# coreference and matching family, whose ratios with an empty denominator are 0 as in the reference
# scorers (conll scorer.pl, coval), while the matching scores follow scikit-learn (AMI 1.0) or
# "nothing disagrees" (cluster accuracy 1.0) and a distance is 0 (docs/metrics.md, "The empty table")
EMPTY_ALL = {**EMPTY, "MUC": 0.0, "BLANC": 0.0, "LEA": 0.0, "BasicMergeDistance": 0.0,
             "AdjustedMutualInfo": 1.0, "CEAF": 0.0, "ClusterAccuracy": 1.0}
# the precision and recall a P/R/F metric reports beside its F on the empty table
EMPTY_PR = {"ELM": 1.0, "BCubed": 1.0, "MUC": 0.0, "BLANC": 0.0, "LEA": 0.0, "CEAF": 0.0}
BATCH = {
    "ELM": "elm_precision_recall_fscore", "BCubed": "bcubed_precision_recall_fscore",
    "Rand": "rand_score", "AdjustedRand": "adjusted_rand_score",
    "PairPrecision": "pair_precision_score", "PairRecall": "pair_recall_score",
    "PairF1": "pair_f1_score", "PairJaccard": "pair_jaccard_score",
    "FowlkesMallows": "fowlkes_mallows_score", "MUC": "muc_precision_recall_fscore",
    "BLANC": "blanc_precision_recall_fscore", "LEA": "lea_precision_recall_fscore",
    "BasicMergeDistance": "basic_merge_distance", "MutualInfo": "mutual_info_score",
    "NormalizedMutualInfo": "normalized_mutual_info_score", "Homogeneity": "homogeneity_score",
    "Completeness": "completeness_score", "VBeta": "v_measure_score",
    "VariationOfInformation": "variation_of_information",
    "AdjustedMutualInfo": "adjusted_mutual_info_score", "Purity": "purity_score",
    "InversePurity": "inverse_purity_score", "CEAF": "ceaf_precision_recall_fscore",
    "ClusterAccuracy": "cluster_accuracy_score",
}  # fmt: skip


def _read(metric) -> tuple:
    """``(P, R, F)`` of a P/R/F metric, else its value alone."""
    name = type(metric).__name__
    return (metric.precision, metric.recall, metric.get()) if name in EMPTY_PR else (metric.get(),)


def test_empty_table_values_agree_on_every_path():
    """Every metric family, every path, the same value on the empty table: the streaming metric on
    the native table and on the reference table, each fresh, after updates reverted back to empty
    (the table then equal to a fresh one) and holding only skipped elements; an
    :class:`~streameval.Evaluator` and an event-time window whose elements all left; the batch
    function, its independent numpy twin where there is one, the brute-force oracles; the
    engines' reading path (:func:`streameval.sql.from_rows`, and DuckDB itself when installed)."""
    import importlib.util

    import oracles
    import oracles_coreference as oc

    from streameval.batch import reference as twin
    from streameval.reference import ReferenceContingency
    from streameval.sql import evaluate_duckdb, from_rows

    assert set(EMPTY_ALL) == set(se.REGISTRY) == set(BATCH)
    stream = [(0, "a", 2), (1, "a", 1), (1, "b", 3), (None, "a", 1)]
    for name, cls in se.REGISTRY.items():
        want = (EMPTY_PR[name], EMPTY_PR[name], EMPTY_ALL[name]) if name in EMPTY_PR else (EMPTY_ALL[name],)
        for table in (se.Contingency, ReferenceContingency):
            fresh, emptied, skipped, blank = cls(), cls(), cls(), cls()
            fresh.bind(table())
            for m in (emptied, skipped, blank):
                m.bind(table(missing="skip"))
            for t, p, w in stream:
                emptied.update(t, p, w)
            for t, p, w in reversed(stream):
                emptied.revert(t, p, w)
            skipped.update(None, "a", 5)
            assert emptied.table == blank.table and skipped.table.n == 0  # tracked F sums too
            for m in (fresh, emptied, skipped):
                assert _read(m) == want, (name, table.__name__)
        got = getattr(batch, BATCH[name])([], [])
        assert (got if isinstance(got, tuple) else (got,)) == want, name
        if hasattr(twin, BATCH[name]):
            got = getattr(twin, BATCH[name])([], [])
            assert (got if isinstance(got, tuple) else (got,)) == want, name
    ev = se.Evaluator()
    assert ev.get() == {name: EMPTY_ALL[name] for name in ev.get()}
    w = se.EventTimeWindow(5)
    for t, p, _ in stream[:3]:
        w.update(t, p, t=1)
    w.advance(10)  # every element left
    assert len(w) == 0 and w.get() == ev.get()
    assert oracles.all_scores([]) == {k: EMPTY_ALL[k] for k in oracles.all_scores([])}
    for f, name in ((oc.muc, "MUC"), (oc.blanc, "BLANC"), (oc.lea, "LEA"), (oc.ceaf, "CEAF")):
        assert f([]) == (EMPTY_PR[name], EMPTY_PR[name], EMPTY_ALL[name])
    assert oc.cluster_accuracy([]) == EMPTY_ALL["ClusterAccuracy"]
    engine = from_rows([]).values
    assert engine == {k: EMPTY_ALL[k] for k in engine}
    if importlib.util.find_spec("duckdb") is not None:
        import duckdb

        con = duckdb.connect()
        con.execute("CREATE TABLE t (t INTEGER, p INTEGER)")
        assert evaluate_duckdb("t", "t", "p", connection=con).values == engine
        con.execute("INSERT INTO t VALUES (NULL, 1)")  # only a skipped element: still empty
        assert evaluate_duckdb("t", "t", "p", connection=con, missing="skip").values == engine


def test_single_element_values():
    values = {name: stream(cls(), [7], ["x"]) for name, cls in se.REGISTRY.items() if name in EMPTY}
    assert values == EMPTY  # one element: no pair, one cluster a side, nothing disagrees
    assert sk.fowlkes_mallows_score([7], [0]) == 0.0 and sk.adjusted_rand_score([7], [0]) == 1.0


def test_elm_predicted_singleton_in_true_cluster():
    # the third element is alone in predicted cluster "b" but shares true cluster 1 with two others:
    # it scores P = 1 (b = 1), R = (1-1)/(3-1) = 0, F = 0; the pair in "a" scores P = 1, R = 1/2
    m = se.ELM()
    stream(m, [1, 1, 1], ["a", "a", "b"])
    assert m.precision == 1.0
    # the exact fractions, within the fixed-point bound (or the numpy twin's, without the native path)
    assert fixed_close(m.recall, Fraction(1, 3)) and fixed_close(m.get(), Fraction(4, 9))
    got = batch.elm_precision_recall_fscore([1, 1, 1], ["a", "a", "b"])
    assert all(element_close(g, w, BATCH_PATH, 3) for g, w in zip(got, (Fraction(1), Fraction(1, 3), Fraction(4, 9))))


def test_elm_true_singleton_in_predicted_cluster():
    # element 3 is a true singleton placed in predicted cluster "a" with two others
    m = se.ELM()
    stream(m, [1, 1, 2], ["a", "a", "a"])
    assert m.recall == 1.0  # a = 1 for element 3, and the pair of 1s is fully recalled
    assert fixed_close(m.precision, Fraction(1, 3))  # element 3: P = 0/2
    assert fixed_close(m.get(), Fraction(4, 9))  # element 3: F = 0


def test_elm_zero_score():
    # the ELM paper's two-element example: truth together, prediction apart
    assert elm_prf([1, 1], ["a", "b"]) == (1.0, 0.0, 0.0)
    assert batch.elm_precision_recall_fscore([1, 1], ["a", "b"]) == (1.0, 0.0, 0.0)
    got = batch.bcubed_precision_recall_fscore([1, 1], ["a", "b"])
    assert all(element_close(g, w, BATCH_PATH, 2) for g, w in zip(got, (Fraction(1), Fraction(1, 2), Fraction(2, 3))))


def test_bcubed_never_zero():
    m = se.BCubed()
    stream(m, [1, 1, 2, 2], ["a", "b", "a", "b"])  # as wrong as it gets: still 1/2 per element
    assert m.precision == 0.5 and m.recall == 0.5 and m.get() == 0.5


def test_elm_all_singletons_predicted():
    y_true = [1, 1, 1, 2, 3, 4, 4, 5]  # true singletons: 2, 3, 5 -> 3 of 8 elements
    assert elm_prf(y_true, range(8))[2] == 3 / 8
    assert batch.elm_score(y_true, list(range(8))) == 3 / 8


def test_f_conventions_differ():
    y_true, y_pred = [1, 1, 1, 2], ["a", "a", "b", "b"]
    avg = se.ELM()
    of_avg = se.ELM(f_convention="f_of_averages")
    stream(avg, y_true, y_pred), stream(of_avg, y_true, y_pred)
    p, r = avg.precision, avg.recall
    assert of_avg.get() == 2 * p * r / (p + r)  # the same p and r, the same operations in order
    # exact (oracles): P = R = 1/2, element-averaged F = 1/3, the F of the averages 1/2; each
    # float within its derived bound of its own (contingency_rounding), so the two differ
    P, R, F, FO = element_scores(list(zip(y_true, y_pred)), "elm", exact=True)
    assert (Fraction(1, 2), Fraction(1, 2), Fraction(1, 3), Fraction(1, 2)) == (P, R, F, FO)
    assert element_close(batch.elm_score(y_true, y_pred), F, BATCH_PATH, 4) and fixed_close(avg.get(), F)
    assert_element_within((of_avg.precision, of_avg.recall, of_avg.get()), P, R, FO, "f_of_averages", 1.0, 3, 4, "ours")
    assert avg.get() != of_avg.get()


def test_f_of_averages_zero_when_p_and_r_zero():
    # every cell holds one element of a pair on both sides: every P_e and R_e is 0
    y_true, y_pred = [1, 1, 2, 2], ["a", "b", "a", "b"]
    m = se.ELM(f_convention="f_of_averages")
    stream(m, y_true, y_pred)
    assert (m.precision, m.recall, m.get()) == (0.0, 0.0, 0.0)
    assert batch.elm_precision_recall_fscore(y_true, y_pred, f_convention="f_of_averages") == (0.0, 0.0, 0.0)


def test_rand_and_ari_one_without_disagreement():
    # all singletons on both sides: every pair is apart in both, none disagrees
    assert stream(se.Rand(), [1, 2, 3], "abc") == 1.0 == sk.rand_score([1, 2, 3], [0, 1, 2])
    assert stream(se.AdjustedRand(), [1, 2, 3], "abc") == 1.0
    assert sk.adjusted_rand_score([1, 2, 3], [0, 1, 2]) == 1.0


def test_fowlkes_mallows_zero_without_true_positive_pair():
    assert stream(se.FowlkesMallows(), [1, 2, 3], "abc") == 0.0
    assert sk.fowlkes_mallows_score([1, 2, 3], [0, 1, 2]) == 0.0
    assert stream(se.FowlkesMallows(), [1, 1], "ab") == 0.0 == sk.fowlkes_mallows_score([1, 1], [0, 1])


def test_pair_scores_one_on_empty_denominator():
    # no predicted link (PP = 0): pair precision 1; no true link (TT = 0): pair recall 1
    assert stream(se.PairPrecision(), [1, 1], "ab") == 1.0
    assert stream(se.PairRecall(), [1, 2], "aa") == 1.0
    assert stream(se.PairF1(), [1, 2], "ab") == 1.0 == stream(se.PairJaccard(), [1, 2], "ab")
    assert stream(se.PairF1(), [1, 1], "ab") == 0.0  # a true link missed, none predicted


def test_mutual_info_zero_with_one_cluster():
    assert stream(se.MutualInfo(), [1, 2, 3], "aaa") == 0.0 == sk.mutual_info_score([1, 2, 3], [0] * 3)
    assert stream(se.NormalizedMutualInfo(), [1, 2, 3], "aaa") == 0.0
    assert sk.normalized_mutual_info_score([1, 2, 3], [0] * 3) == 0.0


def test_nmi_one_when_both_sides_one_cluster():
    assert stream(se.NormalizedMutualInfo(), [1, 1, 1], "aaa") == 1.0
    assert sk.normalized_mutual_info_score([1, 1, 1], [0, 0, 0]) == 1.0


def test_homogeneity_completeness_v_degenerate():
    # truth one cluster: H(T) = 0, so homogeneity 1; prediction splits it: completeness 0; V 0
    y_true, y_pred = [1, 1, 1, 1], "aabb"
    h = stream(se.Homogeneity(), y_true, y_pred)
    c = stream(se.Completeness(), y_true, y_pred)
    v = stream(se.VBeta(), y_true, y_pred)
    assert (h, c, v) == (1.0, 0.0, 0.0)
    assert sk.homogeneity_completeness_v_measure(y_true, [0, 0, 1, 1]) == (1.0, 0.0, 0.0)


def test_perfect_match_is_exact():
    # relabelled but identical partitions: exact 1.0 / 0.0, not 0.9999999999999998
    y_true, y_pred = [0, 0, 1, 1, 1, 2], ["c", "c", "a", "a", "a", "b"]
    assert stream(se.NormalizedMutualInfo(), y_true, y_pred) == 1.0
    assert stream(se.NormalizedMutualInfo(average_method="geometric"), y_true, y_pred) == 1.0
    assert stream(se.VBeta(), y_true, y_pred) == 1.0
    assert stream(se.VariationOfInformation(), y_true, y_pred) == 0.0
    assert stream(se.ELM(), y_true, y_pred) == 1.0 == stream(se.AdjustedRand(), y_true, y_pred)


def test_missing_label_rejected_or_skipped():
    table = se.Contingency()
    table.update(1, "a")
    before = table.copy()
    for t, p in [(None, "a"), (1, None), (float("nan"), "a"), (1, math.nan)]:
        with pytest.raises(se.MissingLabelError):
            table.update(t, p)
    assert table == before
    skipping = se.Contingency(missing="skip")
    skipping.update(None, "a", w=2)
    skipping.update(1, float("nan"))
    assert (skipping.n, skipping.skipped) == (0, 3)


def test_unhashable_label_rejected():
    table = se.Contingency()
    with pytest.raises(se.InvalidLabelError, match="hashable"):
        table.update([1, 2], "a")
    assert table.n == 0 and table == se.Contingency()


def test_equal_labels_are_one_cluster():
    table = se.Contingency()
    table.update(1, "a")
    table.update(1.0, "a")
    table.update(True, "a")  # Python equality decides: 1 == 1.0 == True
    assert (table.k_true, table.cells, table[1, "a"]) == (1, 1, 3)


def test_weight_rules():
    table = se.Contingency()
    table.update(1, "a", w=1.0)  # River passes floats
    table.update(1, "a", w=2)
    assert table[1, "a"] == 3
    before = table.copy()
    for w in (0, -1, 0.5, math.nan, math.inf, True, "2"):
        with pytest.raises(se.InvalidWeightError):
            table.update(1, "a", w=w)
    assert table == before


def test_weight_equals_repeated_updates():
    weighted, repeated = se.ELM(), se.ELM()
    for t, p, w in [(1, "a", 3), (1, "b", 1), (2, "b", 2)]:
        weighted.update(t, p, w=w)
        for _ in range(w):
            repeated.update(t, p)
    assert weighted.table == repeated.table and weighted.get() == repeated.get()


def test_revert_unknown_element_rejected():
    table = se.Contingency()
    table.update(1, "a")
    before = table.copy()
    with pytest.raises(se.UnknownElementError, match="holds 0"):
        table.revert(1, "b")
    with pytest.raises(se.UnknownElementError, match="holds 1"):
        table.revert(1, "a", w=2)
    assert table == before


def test_reading_never_creates_cells():
    table = se.Contingency()
    table.update(1, "a")
    assert table[2, "b"] == 0 and table.true_size(2) == 0 and table.pred_size("b") == 0
    assert table.row(2) == {} and table.column("b") == {}
    assert (table.cells, table.k_true, table.k_pred) == (1, 1, 1)


def test_zero_cells_deleted():
    table = se.Contingency()
    table.update(1, "a")
    table.update(2, "b")
    table.revert(2, "b")
    assert list(table.items()) == [(1, "a", 1)]
    assert table.true_sizes() == {1: 1} and table.pred_sizes() == {"a": 1}
    assert (table.cells, table.k_true, table.k_pred) == (1, 1, 1)


def test_update_then_revert_is_bit_identical():
    ev = se.Evaluator()
    for i in range(200):
        ev.update(i % 7, i % 5)
    before, values = ev.table.copy(), ev.get()
    extra = [(i % 3, (i * 7) % 11, 1 + i % 2) for i in range(500)]
    for t, p, w in extra:
        ev.update(t, p, w)
    for t, p, w in reversed(extra):
        ev.revert(t, p, w)
    assert ev.table == before  # every count and fixed-point sum, bit for bit
    assert ev.get() == values  # so every value, to the last bit


def test_merge_equals_one_stream():
    pairs = [(i % 4, (i * 3) % 5) for i in range(60)]
    whole, left, right = se.Contingency(), se.Contingency(), se.Contingency()
    for table in (whole, left, right):
        table.track_f("elm")  # ELM's element-averaged F sum
    for k, (t, p) in enumerate(pairs):
        whole.update(t, p)
        (left if k % 2 else right).update(t, p)
    left.merge(right)
    assert left == whole
    assert se.ELM().value(left) == se.ELM().value(whole)


# ------------------------------------------------- where scikit-learn raises and streameval answers
INTRINSIC = ("calinski_harabasz_score", "davies_bouldin_score", "silhouette_score")


def test_intrinsic_fewer_than_two_clusters_is_nan():
    X, one = [[0.0, 1.0], [1.0, 0.0], [3.0, 3.0]], [7, 7, 7]
    for name in INTRINSIC:
        assert math.isnan(getattr(batch, name)(X, one)), name
        with pytest.raises(ValueError, match="Number of labels is 1"):
            getattr(sk, name)(X, one)  # scikit-learn raises
    for view in (se.CalinskiHarabasz(), se.RMSDaviesBouldin(), se.SqEuclideanSilhouette()):
        ev = se.IntrinsicEvaluator([view])
        for x, p in zip(X, one):
            ev.update(x, p)
        assert math.isnan(view.get()), view.name  # a stream starts with one cluster: no error


def test_intrinsic_one_cluster_per_sample():
    X, apart = [[0.0, 1.0], [1.0, 0.0], [3.0, 3.0]], [0, 1, 2]
    want = {"calinski_harabasz_score": 1.0, "davies_bouldin_score": 0.0, "silhouette_score": 0.0}
    for name in INTRINSIC:
        assert getattr(batch, name)(X, apart) == want[name], name
        with pytest.raises(ValueError, match="Number of labels is 3"):
            getattr(sk, name)(X, apart)  # scikit-learn raises
    # the same values as scikit-learn's own conventions give just inside its range: SSW = 0
    # makes CH 1.0 and DB 0.0 (every scatter 0), and a point alone in its cluster scores 0
    X4, y4 = [[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [3.0, 3.0]], [0, 0, 1, 2]
    assert sk.calinski_harabasz_score(X4, y4) == batch.calinski_harabasz_score(X4, y4) == 1.0
    assert sk.davies_bouldin_score(X4, y4) == batch.davies_bouldin_score(X4, y4) == 0.0
    assert sk.silhouette_samples(X4, y4)[2:].tolist() == batch.silhouette_samples(X4, y4)[2:].tolist() == [0, 0]


def test_infinite_label_is_an_ordinary_label():
    inf = float("inf")
    y_true, y_pred = [inf, inf, 1.0, -inf], [0, 0, 1, 1]
    finite = [2.0, 2.0, 1.0, 3.0]  # the same partition with finite names
    for name in ("adjusted_rand_score", "normalized_mutual_info_score", "elm_score"):
        got = getattr(batch, name)(y_true, y_pred)
        assert got == getattr(batch, name)(finite, y_pred), name
        metric = {"adjusted_rand_score": "AdjustedRand", "normalized_mutual_info_score": "NormalizedMutualInfo",
                  "elm_score": "ELM"}[name]
        value = stream(se.REGISTRY[metric](), y_true, y_pred)
        assert within(value, exact_and_bound(finite, y_pred)[metric]), name  # ours: its rounding
        if NATIVE:  # the native batch functions read the same sums: the same bits
            assert got == value, name
    # ours (one correctly rounded quotient of exact integers) and scikit-learn's (the same below
    # 2**53) are the same float; the twin within its bound (contingency_rounding.pair_bounds)
    ari = batch.adjusted_rand_score(finite, y_pred)
    if NATIVE:
        assert ari == sk.adjusted_rand_score(finite, y_pred)
    else:
        assert within(ari, pair_bounds(finite, y_pred, "twin")["AdjustedRand"])
    with pytest.raises(ValueError, match="infinity"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's, inside scikit-learn's check
        sk.adjusted_rand_score(y_true, y_pred)  # scikit-learn rejects inf as a label
    with pytest.raises(se.MissingLabelError):
        batch.adjusted_rand_score([math.nan, 1.0], [0, 0])  # NaN stays a missing label
