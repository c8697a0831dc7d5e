"""CEAF, ClusterAccuracy and AdjustedMutualInfo (computed in get(), cached by table.version):
streaming == batch == oracle / scikit-learn at every prefix, the laws, the cache, and Luo (2005)'s
worked example."""

from __future__ import annotations

import collections

import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles_coreference import ceaf, close, cluster_accuracy, labels
from sklearn.metrics import adjusted_mutual_info_score as sk_ami
from sklearn.metrics.cluster import contingency_matrix
from sklearn.metrics.cluster._expected_mutual_info_fast import expected_mutual_information

from streameval import (
    CEAF,
    MUC,
    AdjustedMutualInfo,
    ClusterAccuracy,
    Contingency,
    CountWindow,
    Evaluator,
    batch,
)
from streameval.metrics import REGISTRY, default_metrics
from streameval.metrics.information import expected_mutual_info

AVERAGES = ("arithmetic", "geometric", "min", "max")
element = st.tuples(st.integers(0, 5), st.sampled_from("abcdef"), st.integers(1, 3))
streams = st.lists(element, max_size=14)


def metrics(averages=("arithmetic",)):
    ms = [CEAF(), CEAF(variant="mention"), ClusterAccuracy()]
    return ms + [AdjustedMutualInfo(average_method=a) for a in averages]


def run(stream, ms=None):
    ev = Evaluator(ms if ms is not None else metrics())
    for t, p, w in stream:
        ev.update(t, p, w)
    return ev


def expected(name, prefix):
    yt, yp = labels(prefix)
    if name.startswith("CEAF"):
        variant = "mention" if "mention" in name else "entity"
        return ceaf(prefix, variant)[2], batch.ceaf_score(yt, yp, variant=variant)
    if name == "ClusterAccuracy":
        return cluster_accuracy(prefix), batch.cluster_accuracy_score(yt, yp)
    method = name.split("'")[1] if "'" in name else "arithmetic"
    return (
        sk_ami(yt, yp, average_method=method),
        batch.adjusted_mutual_info_score(yt, yp, average_method=method),
    )


@pytest.mark.slow
@given(streams)
def test_streaming_equals_batch_equals_oracle_at_every_prefix(stream):
    ev = Evaluator(metrics())
    for i, (t, p, w) in enumerate(stream):
        ev.update(t, p, w)
        got = ev.get()
        for name, value in got.items():
            oracle, twin = expected(name, stream[: i + 1])
            tol = 1e-9 if name.startswith("Adjusted") else 1e-12
            assert close(value, oracle, tol) and close(twin, oracle, tol), (name, value, oracle, twin)


@pytest.mark.slow
@given(streams)
def test_ami_matches_scikit_learn_with_each_average_method(stream):
    ev = run(stream, [AdjustedMutualInfo(average_method=a) for a in AVERAGES])
    yt, yp = labels(stream)
    for method, value in zip(AVERAGES, ev.get().values()):
        assert close(value, sk_ami(yt, yp, average_method=method), 1e-9), method
        assert close(batch.adjusted_mutual_info_score(yt, yp, average_method=method), value, 1e-9)


@pytest.mark.slow
@given(streams)
def test_ceaf_precision_and_recall_match_the_oracle(stream):
    for variant in ("entity", "mention"):
        m = CEAF(variant=variant)
        for t, p, w in stream:
            m.update(t, p, w)
        want = ceaf(stream, variant)
        assert close(m.precision, want[0]) and close(m.recall, want[1]) and close(m.f1, want[2])
        assert all(close(a, b) for a, b in zip(batch.ceaf_precision_recall_fscore(*labels(stream), variant=variant), want))


@pytest.mark.slow
@given(streams)
def test_cluster_accuracy_equals_ceaf_m_when_every_element_is_in_both(stream):
    ev = run(stream, [ClusterAccuracy(), CEAF(variant="mention")])
    if ev.table.n:
        acc, ceaf_m = ev.get().values()
        assert close(acc, ceaf_m)


# ------------------------------------------------------------------------ expected mutual info
histogram = st.dictionaries(st.integers(1, 40), st.integers(1, 6), min_size=1, max_size=6)


def sizes_to_labels(hist):
    out, c = [], 0
    for size, count in sorted(hist.items()):
        for _ in range(count):
            out += [c] * size
            c += 1
    return out


@pytest.mark.slow
@given(histogram, st.randoms(use_true_random=False))
def test_expected_mutual_info_matches_scikit_learn(hist_t, rnd):
    yt = sizes_to_labels(hist_t)
    yp = list(yt)
    rnd.shuffle(yp)
    yp = [v % rnd.randint(1, 6) * 7 + (i % 2) for i, v in enumerate(yp)]
    hist_p = collections.Counter(collections.Counter(yp).values())
    n = len(yt)
    want = expected_mutual_information(contingency_matrix(yt, yp, sparse=True), n)
    assert abs(expected_mutual_info(hist_t, hist_p, n) - want) <= 1e-12


@pytest.mark.slow
def test_expected_mutual_info_large_n_agrees_with_scikit_learn():
    """n = 30000 with hundreds of clusters: both computations round each log-gamma term at the
    ~n·eps level; against a 40-digit mpmath evaluation both were within 1e-11 (see the doc)."""
    import numpy as np

    rng = np.random.default_rng(1)
    yt, yp = rng.integers(0, 300, 30000), rng.integers(0, 30, 30000)
    ht = collections.Counter(collections.Counter(yt.tolist()).values())
    hp = collections.Counter(collections.Counter(yp.tolist()).values())
    want = expected_mutual_information(contingency_matrix(yt, yp, sparse=True), 30000)
    assert abs(expected_mutual_info(ht, hp, 30000) - want) < 5e-11


@pytest.mark.parametrize(
    "sizes_true, sizes_pred, n, message",
    [
        ({2: 2}, {4: 1}, 5, "add up to 4"),
        ({0: 1}, {1: 1}, 1, "non-positive"),
        ({2.5: 2}, {5: 1}, 5, "int sizes"),
        ({2: 2}, {4: 1}, -1, "non-negative"),
    ],
)
def test_expected_mutual_info_rejects_bad_histograms(sizes_true, sizes_pred, n, message):
    with pytest.raises(ValueError, match=message):
        expected_mutual_info(sizes_true, sizes_pred, n)


def test_expected_mutual_info_is_zero_with_one_cluster_on_a_side():
    assert expected_mutual_info({5: 1}, {1: 5}, 5) == 0.0
    assert expected_mutual_info({}, {}, 0) == 0.0


# ------------------------------------------------------------------------ laws and the cache
@pytest.mark.slow
@given(streams, streams, st.randoms(use_true_random=False))
def test_update_then_revert_restores_state_and_values(stream, extra, rnd):
    ev = run(stream)
    state, before = ev.table.to_dict(), ev.get()
    for e in extra:
        ev.update(*e)
    undo = list(extra)
    rnd.shuffle(undo)
    for e in undo:
        ev.revert(*e)
    assert ev.table.to_dict() == state
    after = ev.get()
    assert all(close(after[k], before[k], 1e-12) for k in before)


@pytest.mark.slow
@given(streams, streams)
def test_merge_equals_one_stream(s1, s2):
    whole = run(s1 + s2).get()
    ev = Evaluator(metrics())
    ev.table.merge(run(s1, []).table)
    ev.table.merge(run(s2, []).table)
    got = ev.get()
    assert all(close(got[k], whole[k], 1e-12) for k in whole)


@pytest.mark.slow
@given(streams)
def test_relabelling_changes_nothing(stream):
    renamed = [(("t", t * 3), p * 2, w) for t, p, w in stream]
    a, b = run(stream).get(), run(renamed).get()
    assert all(close(a[k], b[k], 1e-12) for k in a)


def test_get_is_cached_until_the_table_changes(monkeypatch):
    calls = []
    m = CEAF()
    original = CEAF._compute

    def counting(self, table):
        calls.append(table.version)
        return original(self, table)

    monkeypatch.setattr(CEAF, "_compute", counting)
    for t, p in [(0, "a"), (0, "a"), (1, "b")]:
        m.update(t, p)
    first = m.get()
    assert (m.get(), m.precision, m.recall, m.f1) == (first, m.precision, m.recall, first)
    assert len(calls) == 1
    m.update(1, "a")
    m.get()
    m.revert(1, "a")
    assert m.get() == first and len(calls) == 3  # a revert is a change too: recomputed, same value


def test_on_demand_metrics_need_the_table_not_summary_stats():
    table = Contingency()
    table.update(0, "a")
    for m in metrics(AVERAGES):
        with pytest.raises(TypeError, match="pass a Contingency"):
            m.value(table.stats())
        assert m.value(table) == m.clone().value(table)


def test_on_demand_flag_keeps_them_out_of_the_default_evaluator():
    names = {"CEAF", "ClusterAccuracy", "AdjustedMutualInfo"}
    assert names <= set(REGISTRY)
    assert all(REGISTRY[n].on_demand is True for n in names)
    assert not names & {type(m).__name__ for m in default_metrics()}


@pytest.mark.parametrize("bad", [{"variant": "entities"}, {"average_method": "median"}])
def test_bad_parameters_are_rejected(bad):
    cls = CEAF if "variant" in bad else AdjustedMutualInfo
    with pytest.raises(ValueError):
        cls(**bad)


@pytest.mark.slow
@given(streams, st.integers(1, 5))
def test_count_window_equals_batch_on_its_tail(stream, size):
    w = CountWindow(size, metrics())
    for i, (t, p, wt) in enumerate(stream):
        w.update(t, p, wt)
        tail = stream[max(0, i + 1 - size): i + 1]
        for name, value in w.get().items():
            oracle, _ = expected(name, tail)
            assert close(value, oracle, 1e-9), (name, tail)


# ------------------------------------------------------------------------ worked examples
LUO_KEY = [set(range(1, 6)), {6, 7}, set(range(8, 13))]


@pytest.mark.parametrize(
    "response, muc_f, ceaf_m, ceaf_e",
    [
        ([set(range(1, 6)), set(range(6, 13))], 0.947, 0.833, 0.733),
        ([set(range(1, 6)) | set(range(8, 13)), {6, 7}], 0.947, 0.583, 0.667),
        ([set(range(1, 13))], 0.900, 0.417, 0.294),
        ([{i} for i in range(1, 13)], 0.0, 0.250, 0.178),
    ],
    ids=["system-a", "system-b", "system-c", "system-d"],
)
def test_luo_2005_figure_1(response, muc_f, ceaf_m, ceaf_e):
    """Luo (2005), "On coreference resolution performance metrics", Figure 1 / Table 1: key
    {1-5} {6,7} {8-12} and four responses; F-measures as tabulated (to three decimals) in neleval's
    test suite (wikilinks/neleval, LUO05_RESPS)."""
    t = {m: i for i, e in enumerate(LUO_KEY) for m in e}
    p = {m: j for j, e in enumerate(response) for m in e}
    ev = Evaluator([MUC(), CEAF(variant="mention"), CEAF()])
    for m in sorted(t):
        ev.update(t[m], p[m])
    got = list(ev.get().values())
    assert got == pytest.approx([muc_f, ceaf_m, ceaf_e], abs=5e-4)


def test_reference_scorer_tc_a_1_ceaf_perfect():
    """conll/reference-coreference-scorers TC-A-1: identical key and response, CEAF-m = CEAF-e = 1."""
    ev = run([(0, 0, 1), (1, 1, 2), (2, 2, 3)], [CEAF(), CEAF(variant="mention")])
    assert list(ev.get().values()) == [1.0, 1.0]


# ------------------------------------------------------------------------ conventions table
def test_edge_empty_table_on_demand():
    assert [m.get() for m in metrics(AVERAGES)] == [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]


def test_edge_one_cluster_on_one_side():
    ev = run([(0, "a", 1), (1, "a", 1), (2, "a", 2)], metrics(AVERAGES))
    got = ev.get()
    assert [v for k, v in got.items() if k.startswith("Adjusted")] == [0.0] * 4
    # CEAF-e: the one response entity aligns with the size-2 key entity, φ4 = 4/6; P = 2/3, R = 2/9
    assert got["CEAF"] == pytest.approx(1 / 3)


def test_edge_one_mention_on_demand():
    ev = run([("k", "r", 1)], metrics(AVERAGES))
    assert list(ev.get().values()) == [1.0] * 7


def test_edge_no_links_in_key_or_response_on_demand():
    ev = run([(i, i, 1) for i in range(6)], metrics(AVERAGES))
    assert list(ev.get().values()) == [1.0] * 7
    assert sk_ami(range(6), range(6)) == 1.0


@pytest.mark.parametrize(
    "system, ceaf_m_pct",
    [("A", 98.57), ("B", 98.57), ("C", 97.14), ("D", 95.71), ("E", 95.71), ("F", 94.29),
     ("G", 91.43), ("H", 5.71)],
)
def test_ceaf_m_recasens_2010_example(system, ceaf_m_pct):
    """Recasens' thesis (2010, pp. 124-125), the 70-mention example (see test_coreference.py):
    mention-based CEAF per response, as transcribed in BBN's scorer tests."""
    from test_coreference import RECASENS, RECASENS_KEY, _clusters, stream_of

    ev = run(stream_of(RECASENS_KEY, _clusters(RECASENS[system][0])),
             [CEAF(variant="mention"), ClusterAccuracy()])
    assert [100 * v for v in ev.get().values()] == pytest.approx([ceaf_m_pct] * 2, abs=0.01)


matrices = st.integers(1, 7).flatmap(
    lambda kt: st.integers(1, 7).flatmap(
        lambda kp: st.lists(
            st.lists(st.sampled_from([0, 0, 1, 2, 3]), min_size=kp, max_size=kp),
            min_size=kt, max_size=kt,
        )
    )
)


@pytest.mark.slow
@given(matrices)
def test_optimal_matching_equals_a_dense_assignment(matrix):
    """The pre-fixing of dominant cells plus the sparse solver give the dense optimum, for both
    similarities, on small matrices full of ties."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    from streameval.metrics.matching import optimal_matching

    m = np.array(matrix)
    cells = [(i, j, int(m[i, j])) for i in range(m.shape[0]) for j in range(m.shape[1]) if m[i, j]]
    a, b = m.sum(axis=1), m.sum(axis=0)
    for weight in (lambda n, x, y: n, lambda n, x, y: 2 * n / (x + y)):
        dense = np.zeros(m.shape)
        for i, j, n in cells:
            dense[i, j] = weight(n, a[i], b[j])
        r, c = linear_sum_assignment(dense, maximize=True)
        got = optimal_matching(cells, weight)
        assert sum(float(weight(n, x, y)) for n, x, y in got) == pytest.approx(dense[r, c].sum())


@pytest.mark.slow
@given(streams)
def test_declared_properties_hold_on_demand(stream):
    """Bounds, symmetry (swapping the sides) and 'a perfect clustering scores best', as the core's
    registry-wide test checks them for the O(1) metrics."""
    ms, swapped, perfect = metrics(AVERAGES), metrics(AVERAGES), metrics(AVERAGES)
    for t, p, w in stream:
        for m in ms:
            m.update(t, p, w)
        for m in swapped:
            m.update(p, t, w)
        for m in perfect:
            m.update(t, t, w)
    for m, s, best in zip(ms, swapped, perfect):
        lo, hi = m.bounds
        assert lo - 1e-12 <= m.get() <= hi + 1e-12
        assert m.symmetric and close(m.get(), s.get(), 1e-9)
        assert m.get() <= best.get() + 1e-12
