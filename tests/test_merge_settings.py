"""Merging objects whose settings differ: refused with a
:class:`~streameval.errors.SettingsMismatchError` naming the setting and both values, both objects
left exactly as they were (their pickled state compared before and after). Before, each of these
merged silently: the merged object kept its own setting and read it over data gathered under the
other's (or, for the engines' rows and the combiner, one partial result overwrote or dropped
another's).

The sweep behind it (every merge-like entry point, docs/rules.md "Merging"): ``Contingency.merge``
and the reference table (``missing`` checked; tracked F sums are a cache of the cells and become
the union), ``ErrorAccount.merge`` (the table's law; ``order`` is the lists' tie-break only),
``BootstrapEvaluator.merge``, ``SampleEstimator.merge``, ``ClusterSummaries.merge``,
``UnitStats.stack``/``swapped`` (fields checked), ``Combiner``, ``sql.from_rows`` (every engine's
rows: DuckDB, Spark, Flink's live histograms), the watch checkpoint's restore (input, design,
window size checked). The windows, ``Monitor``, ``IntrinsicEvaluator``, ``Evaluator`` and the
River union (``metric + metric``) have no merge of states.
"""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

from streameval import (
    ELM,
    AdjustedRand,
    BootstrapEvaluator,
    ClusterSummaries,
    SampleEstimator,
    SettingsMismatchError,
)
from streameval.errors import InvalidStateError


def refused(a, b, setting: str, mine, theirs, shown=repr):
    """``a.merge(b)`` raises naming ``setting`` and both values; neither object changes."""
    before = pickle.dumps(a), pickle.dumps(b)
    message = (f"cannot merge a {type(a).__name__} with {setting}={shown(theirs)} into one with "
               f"{setting}={shown(mine)}: the {setting} must be the same in both")
    with pytest.raises(SettingsMismatchError, match="^" + re.escape(message) + "$"):
        a.merge(b)
    assert (pickle.dumps(a), pickle.dumps(b)) == before


def bootstrap(**kw) -> BootstrapEvaluator:
    kw.setdefault("n_replicas", 20)
    bs = BootstrapEvaluator(kw.pop("metrics", [ELM(), AdjustedRand()]), **kw)
    for doc in range(4):
        for t, p in [(0, 0), (0, 1), (1, 1)]:
            bs.update((doc, t), (doc, p), unit=doc)
    return bs


def shard(**kw) -> BootstrapEvaluator:
    """Another shard: other units, other labels."""
    kw.setdefault("n_replicas", 20)
    bs = BootstrapEvaluator(kw.pop("metrics", [ELM(), AdjustedRand()]), **kw)
    for t, p in [(0, 0), (0, 0), (1, 0)]:
        bs.update(("other", t), ("other", p), unit="other")
    return bs


@pytest.mark.parametrize("setting, mine, theirs", [
    ("confidence", 0.95, 0.9),
    ("interval", "adaptive", "bca"),
    ("interval", "studentized", "percentile"),
    ("seed", 0, 7),
    ("n_replicas", 20, 30),
])
def test_bootstrap_evaluators_of_other_settings_refuse_to_merge(setting, mine, theirs):
    key = {"interval": "interval", "seed": "seed"}.get(setting, setting)
    a, b = bootstrap(**{key: mine}), shard(**{key: theirs})
    refused(a, b, setting, mine, theirs)
    a.merge(shard(**{key: mine}))  # the same settings: merged
    assert a.n == 15


def test_bootstrap_evaluators_whose_metrics_differ_in_parameters_refuse_to_merge():
    """Named by a dict, two metrics of one name may differ in kind or parameters; before, only
    the names were compared (and the other shard's F sums then broke the replicas' widths)."""
    a = bootstrap(metrics={"F": ELM()})
    b = shard(metrics={"F": ELM(beta=2.0)})
    refused(a, b, "metric 'F'", "ELM", "ELM(beta=2.0)", shown=str)
    refused(a, shard(metrics={"F": AdjustedRand()}), "metric 'F'", "ELM", "AdjustedRand", str)
    refused(a, shard(metrics={"G": ELM()}), "metrics", ["F"], ["G"])
    two = bootstrap(metrics={"F": ELM(beta=2)})
    two.merge(shard(metrics={"F": ELM(beta=2.0)}))  # equal parameters (2 == 2.0): merged
    assert two.n == 15


def test_a_refused_bootstrap_merge_leaves_its_readings():
    a, b = bootstrap(), shard(confidence=0.9)
    got = a.get()
    with pytest.raises(SettingsMismatchError):
        a.merge(b)
    assert a.get() == got and a.settings()["confidence"] == 0.95
    # equality compares the same settings (before: seed, replicas and metric names only)
    assert bootstrap() == bootstrap()
    assert bootstrap() != bootstrap(confidence=0.9) and bootstrap() != bootstrap(interval="bca")
    assert bootstrap(metrics={"F": ELM()}) != bootstrap(metrics={"F": ELM(beta=2.0)})


def sample(confidence=0.95) -> SampleEstimator:
    est = SampleEstimator("size", confidence=confidence)
    for t, p in [("a", 1), ("a", 1), (None, 2), ("b", 2)]:
        est.update(t, p)
    return est


def test_sample_estimators_of_another_confidence_refuse_to_merge():
    refused(sample(), sample(0.8), "confidence", 0.95, 0.8)
    a = sample()
    a.merge(sample())
    assert a.n == 8


def test_cluster_summaries_of_other_settings_refuse_to_merge_even_when_empty():
    """Space, dimension and feature order, compared whenever both have them: before, an empty
    ``other`` of another dimension or feature order merged silently (a no-op), and the space's
    error named neither the setting."""
    a = ClusterSummaries()
    a.update([1.0, 2.0], "x")
    refused(a, ClusterSummaries(dim=3), "dim", 2, 3)
    refused(a, ClusterSummaries(space="cosine"), "space", "euclidean", "cosine")
    named = ClusterSummaries(features=["u", "v"])
    named.update({"u": 1.0, "v": 2.0}, "x")
    refused(named, ClusterSummaries(features=["v", "u"]), "features", ["u", "v"], ["v", "u"])
    b = ClusterSummaries(features=["v", "u"])
    b.update({"u": 0.0, "v": 5.0}, "y")
    refused(named, b, "features", ["u", "v"], ["v", "u"])
    # positional summaries of the same dimension take the names (the rule update follows)
    a.merge(b)
    assert a.features == ["v", "u"] and a.n == 2
    a.merge(ClusterSummaries(dim=2))  # an empty one of the same settings: nothing to add
    assert a.n == 2


def test_engine_rows_of_several_queries_are_refused():
    """``sql.from_rows`` (DuckDB, Spark, Flink's live histograms): before, a second row of one
    key overwrote the first (the results of two shards' queries concatenated gave the second
    shard's cell histogram with both shards' cluster sizes), and an unknown kind was dropped."""
    from streameval.sql import from_rows, query

    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (1, 'a'), (1, 'a'), (2, 'b')) v(t, p)")
    con.execute("CREATE TABLE u AS SELECT * FROM (VALUES (3, 'c'), (3, 'c'), (4, 'd')) v(t, p)")
    one = con.execute(query("t", "t", "p")).fetchall()
    two = con.execute(query("u", "t", "p")).fetchall()
    assert from_rows(one).stats.n == 3
    with pytest.raises(InvalidStateError, match=r"^sql: two 'cell' rows for n = 1 in the result"):
        from_rows(one + two)
    with pytest.raises(InvalidStateError, match=r"^sql: unknown row kind 'cells'"):
        from_rows(one + [("cells", 1, 0, 0, 1, 0)])


def test_a_combiner_of_statistics_with_other_f_sums_combines_each_in_full():
    """``Combiner`` (compare's one product for every system): before, statistics tracking other
    F sums than the first's lost their extra fields (or raised an ``IndexError``)."""
    from streameval.stats import ContingencyStats
    from streameval.units import Combiner, UnitStats

    cells = [[(0, 0, 2)], [(0, 0, 1), (1, 0, 1)], [(2, 1, 3)]]
    plain = UnitStats([ContingencyStats.from_cells(c, ()) for c in cells], ())
    f = [("elm", 1.0)]
    with_f = UnitStats([ContingencyStats.from_cells(c, f) for c in cells], f)
    m = np.array([[2, 1, 0], [0, 1, 3]])
    for stats in ([plain, with_f], [with_f, plain]):
        assert Combiner(stats).combine(m) == [s.combine(m) for s in stats]
