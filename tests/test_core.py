"""The core laws: streaming == batch == brute-force oracle; revert, merge and relabelling laws."""

from __future__ import annotations

import itertools
import json
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from contingency_rounding import assert_element_within, assert_paths_within, fixed_close
from discover import BATCH  # the batch twin of every registered O(1) label metric, from the registry
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from oracles import all_scores, element_scores, expand
from oracles_coreference import blanc, lea, muc
from strategies import labels, streams

import streameval as se
from streameval import batch
from streameval.batch import reference as twin
from streameval.contingency import NATIVE
from streameval.metrics import default_metrics

ORACLES = {"MUC": muc, "BLANC": blanc, "LEA": lea}  # the coreference oracles, by stream prefix


# the independent numpy twins of the batch functions (written apart from the streaming code)
TWIN = {name: getattr(twin, f.__name__) for name, f in BATCH.items() if f.__module__ == "streameval.batch.labels"}


def close(a, b, tol=1e-9):
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def test_every_registered_o1_metric_has_a_batch_twin():
    assert set(BATCH) == {type(m).__name__ for m in default_metrics()}
    # every brute-force oracle names a registered O(1) metric (a new metric may come without one:
    # its batch twin is then its differential check)
    assert set(all_scores([(1, 1)])) | set(ORACLES) <= set(BATCH)


def oracle_scores(stream) -> dict:
    """The brute-force oracles' values of a stream ``[(t, p, w)]`` (the metrics they cover)."""
    out = all_scores(expand(stream))
    out.update({name: float(f(stream)[2]) for name, f in ORACLES.items()})
    return out


@pytest.mark.slow
@given(streams(max_size=25))
def test_streaming_equals_batch_equals_oracle_at_every_prefix(stream):
    """Every registered O(1) metric: streaming == its batch twin at every prefix, and == the
    brute-force oracle where one is written."""
    ev = se.Evaluator([se.REGISTRY[name]() for name in BATCH])
    for k, (t, p, w) in enumerate(stream, 1):
        ev.update(t, p, w)
        elements = expand(stream[:k])
        ts, ps = [e[0] for e in elements], [e[1] for e in elements]
        got = ev.get()
        oracle = oracle_scores(stream[:k])
        for name, f in BATCH.items():
            b = f(np.array(ts, dtype=object), np.array(ps, dtype=object))
            assert close(got[name], b), (name, k, got[name], b)
            if name in TWIN:  # a label metric counted natively: its twin is the independent check
                tw = TWIN[name](np.array(ts, dtype=object), np.array(ps, dtype=object))
                assert close(tw, got[name]), (name, k, tw, got[name])
                # the native batch path reads the streaming sums: the same bits (the twin without it)
                assert b == (got[name] if NATIVE else tw), (name, k, b, got[name])
            if name in oracle:
                assert close(got[name], oracle[name]), (name, k, got[name], oracle[name])
                assert close(b, oracle[name]), (name, k, b, oracle[name])
    ev.table._check()


@given(streams(max_size=20), st.sampled_from([0.5, 1.0, 2.0, 3.0]))
def test_element_metrics_with_beta_and_both_conventions(stream, beta):
    elements = expand(stream)
    ts, ps = [e[0] for e in elements], [e[1] for e in elements]
    for cls, kind, bf, tf in (
        (se.ELM, "elm", batch.elm_precision_recall_fscore, twin.elm_precision_recall_fscore),
        (se.BCubed, "bcubed", batch.bcubed_precision_recall_fscore, twin.bcubed_precision_recall_fscore),
    ):
        # the oracle's exact fractions; each path within its derived bound of them
        # (contingency_rounding.assert_element_within: fixed point, or the twin's float sums)
        P, R, F, FO = element_scores(elements, kind, beta, exact=True)
        size = (len(set(elements)), len(elements))
        for conv, want in (("element_averaged", F), ("f_of_averages", FO)):
            m = cls(beta=beta, f_convention=conv)
            for t, p, w in stream:
                m.update(t, p, w)
            assert_element_within((m.precision, m.recall, m.get()), P, R, want, conv, beta, *size, "ours")
            bp, br, bfv = bf(np.array(ts, dtype=object), np.array(ps, dtype=object), beta=beta,
                             f_convention=conv)
            assert_element_within((bp, br, bfv), P, R, want, conv, beta, *size, "ours" if NATIVE else "twin")
            tp_, tr_, tf_ = tf(np.array(ts, dtype=object), np.array(ps, dtype=object), beta=beta,
                               f_convention=conv)
            assert_element_within((tp_, tr_, tf_), P, R, want, conv, beta, *size, "twin")
            if NATIVE:  # the batch triple is the streaming metric's, bit for bit
                assert (bp, br, bfv) == (m.precision, m.recall, m.get())
            P1, R1, F1, FO1 = element_scores(elements, kind, 1.0, exact=True)
            ea = conv == "element_averaged"
            assert_element_within((m.precision, m.recall, m.f1), P1, R1, F1 if ea else FO1, conv, 1.0, *size, "ours")


@given(streams(max_size=20))
def test_information_metrics_with_each_average_method(stream):
    # each path within its derived bound of the exact value (contingency_rounding)
    elements = expand(stream)
    ts, ps = [e[0] for e in elements], [e[1] for e in elements]
    for method in ("arithmetic", "geometric", "min", "max"):
        m = se.NormalizedMutualInfo(average_method=method)
        for t, p, w in stream:
            m.update(t, p, w)
        assert_paths_within({m.name: m.get()}, ts, ps, "ours")
        tw = twin.normalized_mutual_info_score(ts, ps, average_method=method)
        assert_paths_within({m.name: tw}, ts, ps, "twin")
        got = batch.normalized_mutual_info_score(ts, ps, average_method=method)
        assert got == m.get() if NATIVE else got == tw
    for beta in (0.5, 2.0):
        v = se.VBeta(beta=beta)
        for t, p, w in stream:
            v.update(t, p, w)
        assert_paths_within({v.name: v.get()}, ts, ps, "ours", betas=(beta,))


# ----------------------------------------------------------------------------- scikit-learn
SKLEARN_CASES = {
    "empty": ([], []),
    "one element": ([3], ["x"]),
    "all singletons": (list(range(6)), list("abcdef")),
    "one cluster": ([1] * 5, ["z"] * 5),
    "singletons vs one cluster": (list(range(5)), ["z"] * 5),
    "one cluster vs singletons": ([1] * 5, list(range(5))),
    "mixed": ([0, 0, 0, 1, 1, 1, 2, 2], [0, 0, 1, 1, 1, 2, 2, 2]),
}


@pytest.mark.parametrize("case", list(SKLEARN_CASES))
def test_scikit_learn_is_an_oracle_including_edge_cases(case):
    skm = pytest.importorskip("sklearn.metrics")
    ts, ps = SKLEARN_CASES[case]
    ev = se.Evaluator([se.Rand(), se.AdjustedRand(), se.MutualInfo(), se.Homogeneity(),
                       se.Completeness(), se.VBeta(), se.VBeta(beta=0.5), se.FowlkesMallows()]
                      + [se.NormalizedMutualInfo(average_method=m)
                         for m in ("arithmetic", "geometric", "min", "max")])
    for t, p in zip(ts, ps):
        ev.update(t, p)
    got = ev.get()
    want = {
        "Rand": skm.rand_score(ts, ps),
        "AdjustedRand": skm.adjusted_rand_score(ts, ps),
        "Homogeneity": skm.homogeneity_score(ts, ps),
        "Completeness": skm.completeness_score(ts, ps),
        "VBeta": skm.v_measure_score(ts, ps),
        "VBeta(beta=0.5)": skm.v_measure_score(ts, ps, beta=0.5),
        "FowlkesMallows": skm.fowlkes_mallows_score(ts, ps),
        "NormalizedMutualInfo": skm.normalized_mutual_info_score(ts, ps),
    }
    if ts:  # scikit-learn's mutual_info_score fails on empty input; ours returns 0.0
        want["MutualInfo"] = skm.mutual_info_score(ts, ps)
    else:
        assert got["MutualInfo"] == 0.0
    for m in ("geometric", "min", "max"):
        want[f"NormalizedMutualInfo(average_method={m!r})"] = skm.normalized_mutual_info_score(
            ts, ps, average_method=m)
    # each path within its own rounding bound of the exact value (contingency_rounding: ours,
    # scikit-learn's and the twin's operations, computed on these labels); Rand, ARI and FMI:
    # ours and scikit-learn's are the same correctly rounded operations on the same integers
    assert_paths_within(got, ts, ps, "ours", betas=(1.0, 0.5))
    assert_paths_within(want, ts, ps, "sklearn", betas=(1.0, 0.5))
    for name in ("Rand", "AdjustedRand", "FowlkesMallows"):
        assert got[name] == want[name], (case, name, got[name], want[name])
    # the batch functions (native, and their twins) of the same names
    for f, name in (("rand_score", "Rand"), ("adjusted_rand_score", "AdjustedRand"),
                    ("homogeneity_score", "Homogeneity"), ("completeness_score", "Completeness"),
                    ("v_measure_score", "VBeta"), ("fowlkes_mallows_score", "FowlkesMallows"),
                    ("normalized_mutual_info_score", "NormalizedMutualInfo"),
                    ("mutual_info_score", "MutualInfo")):
        if f == "mutual_info_score" and not ts:
            continue
        assert_paths_within({name: getattr(batch, f)(ts, ps)}, ts, ps, "ours" if NATIVE else "twin")
        assert_paths_within({name: getattr(twin, f)(ts, ps)}, ts, ps, "twin")


@pytest.mark.slow
@given(streams(max_size=40, weights=False))
def test_scikit_learn_agrees_on_random_streams(stream):
    skm = pytest.importorskip("sklearn.metrics")
    ts = [str(t) for t, _, _ in stream]
    ps = [str(p) for _, p, _ in stream]
    ev = se.Evaluator([se.Rand(), se.AdjustedRand(), se.MutualInfo(), se.NormalizedMutualInfo(),
                       se.Homogeneity(), se.Completeness(), se.VBeta(), se.FowlkesMallows()])
    for t, p in zip(ts, ps):
        ev.update(t, p)
    got = ev.get()
    if not ts:
        return
    for name, f in (("Rand", skm.rand_score), ("AdjustedRand", skm.adjusted_rand_score),
                    ("MutualInfo", skm.mutual_info_score),
                    ("NormalizedMutualInfo", skm.normalized_mutual_info_score),
                    ("Homogeneity", skm.homogeneity_score), ("Completeness", skm.completeness_score),
                    ("VBeta", skm.v_measure_score), ("FowlkesMallows", skm.fowlkes_mallows_score)):
        # each within its path's rounding bound of the exact value (contingency_rounding)
        assert_paths_within({name: got[name]}, ts, ps, "ours")
        assert_paths_within({name: f(ts, ps)}, ts, ps, "sklearn")


# ----------------------------------------------------------------------------- laws
def full_evaluator():
    return se.Evaluator([se.ELM(), se.BCubed(), se.ELM(beta=2.0), se.BCubed(beta=0.5)]
                        + [cls() for name, cls in se.REGISTRY.items()
                           if name in BATCH and name not in ("ELM", "BCubed")])


@given(streams(max_size=30), st.randoms(use_true_random=False))
def test_update_then_revert_restores_a_bit_identical_state(stream, rnd):
    """Random interleavings of updates and reverts, unwound one by one, return to each state."""
    ev = full_evaluator()
    done = []
    snapshots = [(ev.table.copy(), ev.table.stats(), ev.get())]
    for t, p, w in stream:
        if done and rnd.random() < 0.3:  # revert a random earlier element, then redo it
            i = rnd.randrange(len(done))
            ev.revert(*done[i])
            ev.update(*done[i])
        ev.update(t, p, w)
        done.append((t, p, w))
        snapshots.append((ev.table.copy(), ev.table.stats(), ev.get()))
    while done:
        ev.revert(*done.pop())
        d, s, values = snapshots[len(done)]
        assert ev.table.stats() == s
        assert ev.get() == values  # bit-identical floats
        assert ev.table == d  # cells, every sum and the tracked F sums
    assert ev.table == se.Evaluator(full_evaluator().metrics).table
    assert ev.table.n == 0 and ev.table.true_sizes() == {} and ev.table.pred_sizes() == {}


@pytest.mark.slow
def test_long_sliding_window_stays_bit_identical():
    """A window sliding over 20,000 elements returns exactly to a state seen before."""
    rng = random.Random(7)
    stream = [(rng.randrange(40), rng.randrange(50), rng.choice([1, 1, 2])) for _ in range(20_000)]
    w = se.CountWindow(500, full_evaluator())
    first = None
    for i, item in enumerate(stream * 2):
        w.update(*item)
        if i == len(stream) - 1:
            first = (w.evaluator.table.stats(), w.get())
    # The same 500 last elements again: the same state, bit for bit.
    assert (w.evaluator.table.stats(), w.get()) == first
    w.evaluator.table._check()


@given(streams(max_size=30), st.lists(st.integers(0, 3), max_size=30))
def test_merging_shards_equals_one_stream(stream, shard_of):
    whole = full_evaluator()
    shards = [full_evaluator() for _ in range(4)]
    for k, (t, p, w) in enumerate(stream):
        whole.update(t, p, w)
        shards[shard_of[k] if k < len(shard_of) else 0].update(t, p, w)
    merged = se.Contingency()
    for s in shards:
        merged.merge(s.table)
    assert merged == whole.table
    merged._check()
    # commutative and associative, with the empty table as identity
    a, b, c = (s.table for s in shards[:3])
    ab_c = a.copy(); ab_c.merge(b); ab_c.merge(c)
    bc = b.copy(); bc.merge(c)
    a_bc = a.copy(); a_bc.merge(bc)
    assert ab_c == a_bc
    ba = b.copy(); ba.merge(a)
    ab = a.copy(); ab.merge(b)
    assert ab == ba
    e = a.copy(); e.merge(se.Contingency())
    assert e == a
    # the merged table drives the metrics to the whole stream's values, bit for bit
    view = full_evaluator().metrics
    ev = se.Evaluator(view, table=merged)
    assert ev.get() == whole.get()


@given(streams(max_size=30), st.randoms(use_true_random=False))
def test_relabelling_either_side_changes_nothing(stream, rnd):
    ts = sorted({t for t, _, _ in stream}, key=repr)
    ps = sorted({p for _, p, _ in stream}, key=repr)
    new_t = dict(zip(ts, rnd.sample(range(1000), len(ts))))
    new_p = dict(zip(ps, [f"c{k}" for k in rnd.sample(range(1000), len(ps))]))
    a, b = full_evaluator(), full_evaluator()
    for t, p, w in stream:
        a.update(t, p, w)
        b.update(new_t[t], new_p[p], w)
    assert a.get() == b.get()
    assert a.table.stats() == b.table.stats()


@given(streams(max_size=40))
def test_update_many_equals_one_by_one(stream):
    one = full_evaluator()
    for t, p, w in stream:
        one.update(t, p, w)
    bulk = full_evaluator()
    ts = np.array([t for t, _, _ in stream], dtype=object)
    ps = np.array([p for _, p, _ in stream], dtype=object)
    bulk.update_many(ts, ps, np.array([w for _, _, w in stream], dtype=np.int64))
    assert bulk.table == one.table
    assert bulk.get() == one.get()


def test_update_many_numeric_arrays_and_increments():
    rng = np.random.default_rng(3)
    t = rng.integers(0, 30, 5000)
    p = rng.integers(0, 40, 5000)
    one = se.Contingency()
    one.track_f("elm")
    for a, b in zip(t.tolist(), p.tolist()):
        one.update(a, b)
    bulk = se.Contingency()
    bulk.track_f("elm")
    bulk.update_many(t[:4000], p[:4000])
    bulk.update_many(t[4000:4010], p[4000:4010])  # few cells: applied one by one
    bulk.update_many(t[4010:], p[4010:])
    assert bulk == one
    floats = se.Contingency()
    floats.track_f("elm")
    floats.update_many(t.astype(float), p, w=np.ones(5000))
    assert floats.stats() == one.stats()


class TableMachine(RuleBasedStateMachine):
    """Random updates, reverts, bulk updates and merges; every invariant checked after each."""

    def __init__(self):
        super().__init__()
        self.table = se.Contingency()
        self.table.track_f("elm")
        self.table.track_f("bcubed", 2.0)
        self.elements = []

    @rule(t=st.integers(0, 5), p=st.integers(0, 5), w=st.integers(1, 4))
    def update(self, t, p, w):
        self.table.update(t, p, w)
        self.elements.append((t, p, w))

    @precondition(lambda self: self.elements)
    @rule(i=st.integers(0, 10_000))
    def revert(self, i):
        t, p, w = self.elements.pop(i % len(self.elements))
        self.table.revert(t, p, w)

    @rule(items=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 8)), max_size=6))
    def update_many(self, items):
        self.table.update_many([t for t, _ in items], [p for _, p in items])
        self.elements.extend((t, p, 1) for t, p in items)

    @rule(items=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=4))
    def merge(self, items):
        other = se.Contingency()
        for t, p in items:
            other.update(t, p)
        self.table.merge(other)
        self.elements.extend((t, p, 1) for t, p in items)

    @invariant()
    def consistent(self):
        self.table._check()
        assert self.table.n == sum(w for _, _, w in self.elements)


TestTableMachine = TableMachine.TestCase
TestTableMachine.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
TestTableMachine.pytestmark = [pytest.mark.slow]  # a unittest class: marked here, not by decorator


# ----------------------------------------------------------------------------- the ELM paper
def test_two_element_example_bcubed_two_thirds_elm_zero():
    """Truth {1, 2}, prediction {1}, {2}: BCubed F1 0.667, ELM 0."""
    elm, bc = se.ELM(), se.BCubed()
    for m in (elm, bc):
        m.update("doc", 1)
        m.update("doc", 2)
    assert elm.get() == 0.0 and (elm.precision, elm.recall) == (1.0, 0.0)
    assert round(bc.get(), 3) == 0.667


def test_elm_reaches_zero_for_every_element_where_bcubed_never_does():
    # Every true cluster is split into singletons and every predicted cluster mixes true singletons:
    # each element has no like neighbour on either side.
    truth = ["A", "A", "B", "B", "c", "d"]
    pred = [1, 2, 3, 4, 5, 5]
    elm, bc = se.ELM(), se.BCubed()
    for t, p in zip(truth, pred):
        elm.update(t, p)
        bc.update(t, p)
    assert elm.get() == 0.0 and fixed_close(elm.precision, Fraction(2, 3)) and fixed_close(elm.recall, Fraction(1, 3))
    assert bc.get() > 0


@given(st.lists(st.integers(0, 8), min_size=1, max_size=40))
def test_elm_zero_everywhere_bcubed_never_zero(truth):
    bc = se.BCubed()
    for i, t in enumerate(truth):
        bc.update(t, i)
    assert bc.get() > 0


@given(labels(30))
def test_all_singletons_scores_elm_f1_equal_to_share_of_true_singletons(truth):
    elm = se.ELM()
    for i, t in enumerate(truth):
        elm.update(t, ("singleton", i))
    sizes = {}
    for t in truth:
        sizes[t] = sizes.get(t, 0) + 1
    share = Fraction(sum(1 for t in truth if sizes[t] == 1), len(truth)) if truth else Fraction(1)
    assert fixed_close(elm.get(), share)


def test_elm_edge_cases_from_the_spec():
    m = se.ELM()
    m.update("big", "alone")  # predicted singleton inside a larger true cluster
    m.update("big", "other")
    m.update("big", "other")
    e = se.ELM(f_convention="f_of_averages")
    # the first element: P=1, R=0; the two others: P=1, R=1/2
    assert fixed_close(m.precision, Fraction(1)) and fixed_close(m.recall, Fraction(1, 3))
    t = se.ELM()
    t.update("solo", "group")  # a true singleton placed in a larger predicted cluster
    t.update("x", "group")
    t.update("x", "group")
    assert fixed_close(t.precision, Fraction(1, 3)) and fixed_close(t.recall, Fraction(1))
    assert e.get() == 1.0  # empty table


# ----------------------------------------------------------------------------- metadata
@pytest.mark.parametrize("cls", [c for c in se.REGISTRY.values() if not c.on_demand],
                         ids=lambda c: c.__name__)
def test_declared_properties_hold(cls):
    rng = random.Random(cls.__name__)
    for _ in range(30):
        n = rng.randrange(1, 25)
        ts = [rng.randrange(rng.randrange(1, 6)) for _ in range(n)]
        ps = [rng.randrange(rng.randrange(1, 6)) for _ in range(n)]
        m, swapped, perfect = cls(), cls(), cls()
        for t, p in zip(ts, ps):
            m.update(t, p)
            swapped.update(p, t)
            perfect.update(t, t)
        lo, hi = cls.bounds
        assert lo - 1e-12 <= m.get() <= hi + 1e-12
        if m.symmetric:  # the integer sums swap sides exactly; the float steps commute
            assert m.get() == swapped.get()
        best = perfect.get()
        if cls.bigger_is_better:
            assert m.get() <= best + 1e-12
        else:
            assert m.get() >= best - 1e-12


@pytest.mark.parametrize("cls", [c for c in se.REGISTRY.values() if getattr(c, "adjusted", False)],
                         ids=lambda c: c.__name__)
def test_adjusted_metrics_average_zero_over_all_permutations(cls):
    truth = [0, 0, 0, 1, 1, 2]
    pred = [0, 0, 1, 1, 2, 2]
    values = []
    for perm in set(itertools.permutations(pred)):
        m = cls()
        for t, p in zip(truth, perm):
            m.update(t, p)
        values.append(m.get())
    # every distinct permutation of the multiset is equally likely under the permutation model
    assert abs(sum(values) / len(values)) < 1e-12


def test_metrics_follow_rivers_protocol():
    m = se.AdjustedRand()
    assert m.update(1, 1) is None and m.revert(1, 1) is None
    assert m.clone().table is not m.table
    assert se.VBeta(beta=2).clone().beta == 2.0
    assert repr(se.Purity()) == "Purity: 1.000000"
    assert se.VariationOfInformation.bigger_is_better is False

    class Model:
        def learn_one(self, x):
            pass

        def predict_one(self, x):
            return 0

    assert m.works_with(Model()) and not m.works_with(object())


def test_evaluator_adding_a_metric_changes_nothing_else():
    ev = se.Evaluator([se.AdjustedRand(), se.Purity()])
    for t, p in [(0, 1), (0, 1), (1, 1), (2, 3)]:
        ev.update(t, p)
    before = ev.get()
    ev.add("ELM2", se.ELM(beta=2))
    after = ev.get()
    assert {k: after[k] for k in before} == before
    alone = se.ELM(beta=2)
    for t, p in [(0, 1), (0, 1), (1, 1), (2, 3)]:
        alone.update(t, p)
    assert after["ELM2"] == alone.get()
    with pytest.raises(ValueError, match="already in the evaluator"):
        ev.add("ELM2", se.ELM())
    used = se.Purity()
    used.update(1, 1)
    with pytest.raises(ValueError, match="already seen 1 elements"):
        ev.add("used", used)


def test_default_evaluator_holds_every_o1_metric():
    ev = se.Evaluator()
    assert set(ev.metrics) >= set(BATCH)
    assert all(not m.on_demand for m in ev.metrics.values())


def test_json_round_trip_of_a_rich_table():
    t = se.Contingency(missing="skip")
    t.track_f("elm", 2.0)
    for a, b in [("x", (1, "y")), (2.5, True), ("x", (1, "y"))]:
        t.update(a, b)
    t.update(None, 1)
    back = se.Contingency.from_dict(json.loads(json.dumps(t.to_dict())))
    assert back == t and back.skipped == 1 and back.f_sums == t.f_sums


RIVER_PEERS = ["Rand", "AdjustedRand", "FowlkesMallows", "MutualInfo", "NormalizedMutualInfo",
               "Homogeneity", "Completeness", "VBeta"]


@pytest.mark.slow
@given(streams(max_size=30, weights=False))
def test_river_is_an_oracle_at_every_prefix(stream):
    rm = pytest.importorskip("river.metrics")
    ours = {name: se.REGISTRY[name]() for name in RIVER_PEERS}
    theirs = {name: getattr(rm, name)() for name in RIVER_PEERS}
    for t, p, _ in stream:
        for name in RIVER_PEERS:
            ours[name].update(t, p)
            theirs[name].update(t, p)
            assert close(ours[name].get(), theirs[name].get(), 1e-9), (name, ours[name].get(),
                                                                      theirs[name].get())


def test_batch_accepts_lists_arrays_and_pandas_series():
    pd = pytest.importorskip("pandas")
    ts, ps = [0, 0, 1, 1, 2], ["a", "a", "a", "b", "b"]
    want = se.batch.elm_precision_recall_fscore(ts, ps)
    assert se.batch.elm_precision_recall_fscore(np.array(ts), np.array(ps)) == want
    assert se.batch.elm_precision_recall_fscore(pd.Series(ts), pd.Series(ps)) == want
    assert se.batch.elm_score(pd.Series(ts), pd.Series(ps)) == want[2]
    t = se.Contingency()
    t.update_many(pd.Series(ts), pd.Series(ps))
    assert sorted(t.items()) == [(0, "a", 2), (1, "a", 1), (1, "b", 1), (2, "b", 1)]
