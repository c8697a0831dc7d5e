"""Monitor: all-time and windowed values, the drop flag (real River models), the cost ranking."""

import random
from fractions import Fraction

import pytest
from contingency_rounding import exact_and_bound, fixed_close, within
from oracles import element_scores

from streameval import ELM, AdjustedRand, BCubed, Evaluator, EventTimeWindow, Purity
from streameval.contingency import Contingency
from streameval.detect import Cusum
from streameval.errors import MissingLabelError, UnknownElementError
from streameval.monitor import ClusterCostRanking, Monitor


def _stream(n=150, seed=1, k_true=4, k_pred=6):
    rng = random.Random(seed)
    return [(rng.randrange(k_true), rng.randrange(k_pred)) for _ in range(n)]


def _brute_costs(table, cost):
    """Each predicted cluster's precision loss, from its column, with exact fractions."""
    out = {}
    for p in table.pred_sizes():
        col = table.column(p)
        b = sum(col.values())
        if cost == "elm":
            kept = sum(Fraction(n * (n - 1), b - 1) for n in col.values()) if b > 1 else 1
        else:
            kept = sum(Fraction(n * n, b) for n in col.values())
        out[p] = b - kept
    return out


def _check_ranking(ranking, table, cost):
    costs = _brute_costs(table, cost)
    got = ranking.top(len(costs) + 3)
    assert len(got) == len(costs) == len(ranking)
    assert sorted(lbl for lbl, _ in got) == sorted(costs)
    for lbl, c in got:  # one floored fixed-point term, one correctly rounded quotient
        assert fixed_close(c, costs[lbl])
    assert [c for _, c in got] == sorted((c for _, c in got), reverse=True)


@pytest.mark.parametrize("cost", ["elm", "bcubed"])
def test_values_and_ranking_at_every_step(cost):
    stream = _stream()
    mon = Monitor([ELM(), BCubed(), AdjustedRand()], window=20, watch="ELM", detector=False,
                  cost=cost)
    alone = Evaluator([ELM(), BCubed(), AdjustedRand()])
    for i, (y, p) in enumerate(stream):
        mon.update(y, p)
        alone.update(y, p)
        r = mon.report()
        assert r["all_time"] == alone.get()
        yt, yp = zip(*stream[max(0, i - 19) : i + 1])
        exact = exact_and_bound(yt, yp)  # the exact values, streameval's rounding bounds
        assert within(r["window"]["ELM"], exact["ELM"])
        assert within(r["window"]["AdjustedRand"], exact["AdjustedRand"])
        _check_ranking(mon.ranking, mon.window.evaluator.table, cost)
    # the costs sum to N * (1 - precision) over the window, exactly the brute costs' sum; each
    # float within fixed_close's bound of its own, and Python's sum of k of them within γ_k
    costs = [c for _, c in mon.worst(100)]
    exact = sum(_brute_costs(mon.window.evaluator.table, cost).values())
    assert exact == 20 * (1 - element_scores(list(zip(yt, yp)), cost, exact=True)[0])
    u, k = Fraction(2.0**-53), len(costs)
    each = sum(Fraction(1, 2**64) + Fraction(c) * u for c in costs)
    gamma_k = k * u / (1 - k * u)
    assert abs(Fraction(sum(costs)) - exact) <= each + gamma_k * (exact + each)


def test_ranking_without_a_window_follows_the_all_time_table_and_its_doc_example():
    t = Contingency()
    rank = ClusterCostRanking(t, "bcubed")
    for y, p in _stream(60, seed=4):
        t.update(y, p)
        rank.refresh(p)
    _check_ranking(rank, t, "bcubed")
    mon = Monitor([Purity()], window=None, watch=None)
    for y, p in _stream(60, seed=4):
        mon.update(y, p)
    _check_ranking(mon.ranking, mon.all_time.table, "elm")
    assert mon.report()["window"] is None
    with pytest.raises(ValueError, match="cost"):
        ClusterCostRanking(t, "gini")


def test_relabel_moves_a_cluster_everywhere_like_replaying_with_the_new_label():
    stream = _stream(80, seed=2)
    mon = Monitor([ELM(), AdjustedRand()], window=30, watch="ELM", block=7, detector=False)
    for y, p in stream:
        mon.update(y, p)
    mon.relabel_pred(3, 1)
    ref = Monitor([ELM(), AdjustedRand()], window=30, watch="ELM", block=7, detector=False)
    for y, p in stream:
        ref.update(y, 1 if p == 3 else p)
    assert mon.report()["all_time"] == ref.report()["all_time"]
    assert mon.report()["window"] == ref.report()["window"]
    assert list(mon.window) == list(ref.window)
    assert mon.window.evaluator.table == ref.window.evaluator.table
    _check_ranking(mon.ranking, mon.window.evaluator.table, "elm")
    for y, p in _stream(40, seed=9):  # and it keeps going: old elements leave under label 1
        mon.update(y, p)
        ref.update(y, p)
    assert mon.report()["window"] == ref.report()["window"]
    mon.window.evaluator.table._check()
    with pytest.raises(UnknownElementError):
        mon.relabel_pred("nope", 1)


def test_reports_on_schedule_and_bad_input_changes_nothing():
    seen = []
    mon = Monitor([ELM()], window=5, report_every=10, on_report=seen.append, detector=False)
    for y, p in _stream(35):
        mon.update(y, p)
    assert [r["n"] for r in seen] == [10, 20, 30] and mon.last_report is seen[-1]
    timed = []
    clock = Monitor([ELM()], window=5, report_seconds=0.0, on_report=timed.append, detector=False)
    for y, p in _stream(3):
        clock.update(y, p)
    assert [r["n"] for r in timed] == [1, 2, 3]
    before = (mon.n, mon.all_time.table.copy(), list(mon.window), mon.worst())
    with pytest.raises(MissingLabelError):
        mon.update(None, 1)
    with pytest.raises(ValueError):
        mon.update(1, 1, w=-2)
    assert (mon.n, mon.all_time.table, list(mon.window), mon.worst()) == before


def test_event_time_window_in_a_monitor_needs_times():
    mon = Monitor([ELM()], window=EventTimeWindow(10, [ELM()]), detector=False)
    for t, (y, p) in enumerate(_stream(30)):
        mon.update(y, p, t=t)
    assert len(mon.window) == 10 and mon.all_time.table.n == 30
    _check_ranking(mon.ranking, mon.window.evaluator.table, "elm")
    with pytest.raises(ValueError, match="time"):
        mon.update(0, 0)
    with pytest.raises(ValueError, match="watch"):
        Monitor([ELM()], watch="AdjustedRand")


# --- the drop flag, on a real dataset with real River clusterers --------------------------
def _run(switch: bool, seed=0, detector=None):
    river = pytest.importorskip("river")
    from river import cluster, compose, datasets, preprocessing

    data = list(datasets.ImageSegments())
    random.Random(seed).shuffle(data)
    data = data * 2
    good = preprocessing.StandardScaler() | cluster.KMeans(n_clusters=7, halflife=0.3, sigma=1,
                                                           seed=seed)
    # the bad clusterer sees only the region's column position, unrelated to the class
    bad = (compose.Select("region-centroid-col") | preprocessing.StandardScaler()
           | cluster.KMeans(n_clusters=7, halflife=0.3, sigma=1, seed=seed))
    mon = Monitor([ELM()], window=500, watch="ELM", block=25, detector=detector)
    if detector == "adwin":  # River's own ADWIN, behind the same interface
        assert isinstance(mon.detector.model, river.drift.ADWIN)
    else:
        assert isinstance(mon.detector, Cusum)
    half = len(data) // 2
    for i, (x, y) in enumerate(data):
        model = bad if switch and i >= half else good
        mon.update(y, model.predict_one(x))
        model.learn_one(x)
    return mon, half


@pytest.mark.slow
@pytest.mark.parametrize("detector", [None, "adwin"])
def test_drop_flag_fires_after_the_clusterer_is_switched_to_a_bad_one(detector):
    mon, half = _run(switch=True, detector=detector)
    assert mon.drops and all(n > half for n in mon.drops)
    before = mon.block_values[: half // 25]
    after = mon.block_values[half // 25 :]
    assert sum(after) / len(after) < sum(before) / len(before) - 0.2
    assert mon.report()["new_drop"] and not mon.report()["new_drop"]


@pytest.mark.slow
def test_drop_flag_stays_quiet_on_a_stationary_stream():
    # River's ADWIN on the learning KMeans (its quality drifts as it learns: the calibrated CUSUM
    # may flag a sag of it, a real one, depending on the hash seed's effect on River's model)
    mon, _ = _run(switch=False, detector="adwin")
    assert mon.drops == []


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_default_detector_stays_quiet_on_a_stable_clusterer(seed):
    """A clusterer whose error rate never changes (2% of elements put in a neighbour's cluster,
    1% left alone), 60,000 elements: the default calibrated CUSUM flags nothing."""
    rng = random.Random(seed)
    mon = Monitor([ELM()], window=1000, watch="ELM")
    truth, pred = [], []
    for i in range(60_000):
        t = (i // 400) * 4 + rng.randrange(4)  # 4 entities at a time, 100 elements each
        u = rng.random()
        p = t if u >= 0.03 else (-1 - i if u < 0.01 else t ^ 1)
        truth.append(t)
        pred.append(p)
    mon.update_many(truth, pred)
    assert mon.n == 60_000 and len(mon.block_values) == 2400
    assert mon.drops == []


def test_a_detector_without_an_estimate_uses_the_block_values():
    from river import drift

    mon = Monitor([Purity()], window=None, watch="Purity", block=5,
                  detector=drift.PageHinkley(mode="down", threshold=2.0))
    rng = random.Random(0)
    for i in range(1000):
        y = rng.randrange(3)
        mon.update(y, y if i < 500 or rng.random() < 0.2 else rng.randrange(3))
    assert mon.drops and mon.drops[0] > 500


def test_compare_conveniences_monitor_has_a_useful_repr():
    """A Monitor's repr says what it watches, how, and what it found."""
    mon = Monitor([ELM(), AdjustedRand()], window=50, watch="ELM", block=5)
    assert repr(mon) == ("Monitor(n=0, metrics=['ELM', 'AdjustedRand'], window=CountWindow(50), "
                         "watch='ELM', block=5, detector=Cusum(k=0.5, run_length=1e+08, "
                         "reference=40; calibrating), drops=[])")
    for y, p in _stream(300, seed=3):
        mon.update(y, p)
    text = repr(mon)
    assert text.startswith("Monitor(n=300, metrics=['ELM', 'AdjustedRand'], window=CountWindow(50)")
    assert "Cusum(k=0.5, run_length=1e+08, reference=40; μ=" in text and "h=" in text
    quiet = Monitor([Purity()], window=None, watch=None)
    assert repr(quiet) == ("Monitor(n=0, metrics=['Purity'], window=None, watch=None, block=25, "
                           "detector=None, drops=[])")


def test_update_many_refuses_bad_input_and_changes_nothing():
    mon = Monitor([ELM()], window=5, block=2, detector=Cusum(reference=2, h=5.0))
    mon.update_many([0, 0, 1], ["a", "a", "b"])
    before = (mon.n, mon.all_time.table.copy(), list(mon.window), mon.report(), repr(mon))
    with pytest.raises(MissingLabelError):
        mon.update_many([0, None], ["a", "b"])
    with pytest.raises(ValueError, match="differ in length"):
        mon.update_many([0, 1], ["a"])
    with pytest.raises(ValueError):
        mon.update_many([0, 1], ["a", "b"], w=[1, -1])
    with pytest.raises(ValueError, match="weights"):
        mon.update_many([0, 1], ["a", "b"], w=[1])
    assert (mon.n, mon.all_time.table, list(mon.window), mon.report(), repr(mon)) == before
    timed = Monitor([ELM()], window=EventTimeWindow(10, [ELM()]), detector=False)
    with pytest.raises(ValueError, match="one by one"):
        timed.update_many([0], ["a"])


def _monitor_state(mon) -> tuple:
    """Everything a Monitor holds that a reader can see: the tables, the window's elements, the
    whole ranking and error account (every entry, in order), the detection's blocks and partial
    block, the report."""
    det = mon.detection
    return (mon.n, sorted(mon.all_time.table.items(), key=repr), mon.all_time.get(),
            None if mon.window is None else (list(mon.window), mon.window.get()),
            mon.ranking.top(10**6), mon.account.report(10**6),
            None if det is None else (det.n, det._len, list(det.values), list(det.drops),
                                      sorted(det._table.table.items(), key=repr)),
            {k: v for k, v in mon.report().items() if k != "time"}, repr(mon))


@pytest.mark.parametrize("window", [None, 7, 40])
@pytest.mark.parametrize("kind", ["int", "str", "list"])
def test_update_many_on_arrays_is_update_one_by_one(window, kind):
    """Differential: update_many on numpy arrays (integer codes: the detection's bulk path; str;
    or lists), in uneven chunks, with weights, equals update() element by element: every value,
    the whole ranking and error account in order (ties included), the blocks and the drops."""
    import numpy as np

    rng = np.random.default_rng(4)
    n = 400
    t = rng.integers(0, 12, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, 15, n))
    p[200:] = rng.integers(0, 3, 200)  # a collapse: the detector flags a drop
    w = rng.integers(1, 4, n)
    if kind == "str":
        t, p = t.astype(str), p.astype("U3")
    make = lambda: Monitor([ELM(), BCubed()], window=window, block=5,  # noqa: E731
                           detector=Cusum(reference=10, h=3.0), report_every=90)
    one, many = make(), make()
    for a, b, x in zip(t.tolist(), p.tolist(), w.tolist()):
        one.update(a, b, x)
    for lo, hi in [(0, 1), (1, 53), (53, 250), (250, 250), (250, n)]:
        ta, pa, wa = t[lo:hi], p[lo:hi], w[lo:hi]
        if kind == "list":
            ta, pa, wa = ta.tolist(), pa.tolist(), wa.tolist()
        many.update_many(ta, pa, wa)
    assert one.drops
    assert _monitor_state(many) == _monitor_state(one)


@pytest.mark.parametrize("window", [None, 5])
def test_update_many_bad_input_names_the_problem_and_changes_nothing(window):
    import numpy as np

    mon = Monitor([ELM()], window=window, block=2, detector=Cusum(reference=2, h=5.0))
    mon.update_many(np.array([0, 0, 1]), np.array([3, 3, 4]))
    before = _monitor_state(mon)
    bad = [
        ((np.array([0.0, np.nan]), np.array([1, 2])), MissingLabelError, r"y_true\[1\] is missing"),
        ((np.array([0, 1]), np.array([1])), ValueError, "differ in length: 2 != 1"),
        ((np.array([0, 1]), np.array([1, 2]), np.array([1, -1])), ValueError, "got -1"),
        ((np.array([0, 1]), np.array([1, 2]), np.array([1.0, np.nan])), ValueError, "got nan"),
        ((np.array([0, 1]), np.array([1, 2]), np.array([1.5, 1.0])), ValueError, "got 1.5"),
        ((np.array([0, 1]), np.array([1, 2]), np.array([1])), ValueError, "1 weights for 2"),
        ((np.array([[0, 1]]), np.array([[1, 2]])), ValueError, "differ in length|dimensional"),
        (("ab", "cd"), ValueError, "single str"),
    ]
    for args, error, match in bad:
        with pytest.raises(error, match=match):
            mon.update_many(*args)
        assert _monitor_state(mon) == before


@pytest.mark.parametrize("seed", range(6))
def test_update_many_through_a_churning_window_keeps_the_tie_order_of_one_by_one(seed):
    """Few labels through a short window, in chunks shorter and longer than it: clusters empty
    and fill again within a chunk, so the ranking's and the account's fresh ids (their tie order)
    must be those the updates one by one give. Compares every entry in order."""
    import numpy as np

    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 9))
    n = 300
    t = rng.integers(0, 5, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, 6, n))
    w = rng.integers(1, 3, n)
    make = lambda: Monitor([ELM()], window=size, block=3, detector=False, top=50)  # noqa: E731
    one, many = make(), make()
    for a, b, x in zip(t.tolist(), p.tolist(), w.tolist()):
        one.update(a, b, x)
    cuts = np.unique(np.concatenate([[0, n], rng.integers(0, n, 12)]))
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        many.update_many(t[lo:hi], p[lo:hi], w[lo:hi])
        assert many.n == hi
    assert _monitor_state(many) == _monitor_state(one)
