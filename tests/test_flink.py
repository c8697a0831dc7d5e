"""streameval.flink on PyFlink's embedded mini-cluster: batch and continuous, against the table.

Marked ``flink``; skipped without pyflink (it lives in its own virtual environment: PyFlink pins
old pandas/pyarrow) or without Java. CI runs them in a separate job when ``java`` is on the PATH:
``python -m pytest -m flink tests/test_flink.py``. Each Flink job takes tens of seconds on two
cores, so the tests are few and each checks much.
"""

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest

pytestmark = [pytest.mark.flink, pytest.mark.slow]

pytest.importorskip("pyflink")
if shutil.which("java") is None:
    pytest.skip("Flink needs Java", allow_module_level=True)

os.environ.setdefault("JVM_ARGS", "-Xmx1g")

import streameval as se  # noqa: E402
from streameval import flink  # noqa: E402
from streameval.errors import InvalidWeightError, MissingLabelError  # noqa: E402
from streameval.metrics import REGISTRY, default_metrics  # noqa: E402
from streameval.sql import from_rows, query  # noqa: E402

AMI = REGISTRY["AdjustedMutualInfo"]


@pytest.fixture(scope="module")
def batch_env():
    return flink.local_environment(streaming=False, parallelism=2)


@pytest.fixture(scope="module")
def stream_env():
    return flink.local_environment(streaming=True, parallelism=1, mini_batch="100 ms")


def data(seed=0, n=4000):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 60, n)
    p = (t * 3 + rng.integers(0, 4, n)) % 70
    return pd.DataFrame({"gold": [f"e{v}" for v in t], "guess": [f"c{v}" for v in p],
                         "w": rng.integers(1, 4, n)})


def reference(gold, guess, w=None):
    """Stats, every default metric and AMI from the streaming table (Evaluator + the AMI metric)."""
    ev = se.Evaluator(default_metrics())
    ev.add("AdjustedMutualInfo", AMI())
    ev.update_many(np.asarray(gold, dtype=object), np.asarray(guess, dtype=object),
                   None if w is None else np.asarray(w))
    return ev.table.stats(), ev.get()


def test_batch_weights_and_string_labels_equal_the_table(batch_env):
    df = data()
    r = flink.evaluate(batch_env, batch_env.from_pandas(df), "gold", "guess", weight="w")
    s, values = reference(df["gold"], df["guess"], df["w"])
    assert r.stats == s  # every sum, bit for bit
    assert set(r.values) == set(values)
    assert r.values == values  # every default metric and AMI, float for float
    assert r.sizes_true == dict(pd.Series(df.groupby("gold")["w"].sum()).value_counts())


def test_sql_text_runs_unchanged_on_flink_sql(batch_env):
    df = data(1, 3000).assign(gold=lambda d: d["gold"].str[1:].astype("int64"))
    batch_env.create_temporary_view("els", batch_env.from_pandas(df[["gold", "guess"]]))
    with batch_env.execute_sql(query("els", "gold", "guess")).collect() as rows:
        r = from_rows([tuple(x) for x in rows])
    s, values = reference(df["gold"], df["guess"])
    assert r.stats == s and r.values == values


def test_missing_labels_and_bad_weights(batch_env):
    rows = [("a", "x", 1), (None, "x", 2), ("b", None, 3), ("b", "y", 1), ("b", "y", 2)]
    t = batch_env.from_elements(rows, ["gold", "guess", "w"])
    hist = flink.histogram_rows(batch_env, t, "gold", "guess", "w")
    with pytest.raises(MissingLabelError, match="5 element"):
        from_rows(hist)
    r = from_rows(hist, missing="skip")
    s, values = reference(["a", "b", "b"], ["x", "y", "y"], [1, 1, 2])
    assert r.skipped == 5 and r.stats == s
    bad = batch_env.from_elements([("a", "x", 1.0), ("a", "x", 0.5)], ["gold", "guess", "w"])
    with pytest.raises(InvalidWeightError, match="1 weight"):
        flink.evaluate(batch_env, bad, "gold", "guess", weight="w")
    with pytest.raises(KeyError, match="'wt' not in the table"):
        flink.evaluate(batch_env, bad, "gold", "guess", weight="wt")
    with pytest.raises(ValueError, match="missing must be"):
        flink.evaluate(batch_env, bad, "gold", "guess", missing="drop")


def _write(directory, name, records):
    """Add one file of Debezium-JSON change records, atomically (Flink skips dot-files)."""
    tmp = directory / f".{name}"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    tmp.rename(directory / name)


def _row(i, gold, guess, w):
    return {"id": i, "gold": gold, "guess": guess, "w": w}


def test_continuous_query_at_several_points_and_retractions(stream_env, tmp_path):
    """A directory that grows (an unbounded file source of change records): the live report after
    each file equals the table over that prefix; updates and deletes equal reverts."""
    src = tmp_path / "changes"
    src.mkdir()
    stream_env.execute_sql(f"""
        CREATE TEMPORARY TABLE changes (id BIGINT, gold STRING, guess STRING, w BIGINT) WITH (
          'connector' = 'filesystem', 'path' = '{src}', 'format' = 'debezium-json',
          'source.monitor-interval' = '500 ms')""")
    df = data(2, 1500)
    ev = se.Evaluator(default_metrics())
    elements = {}
    with flink.Live(stream_env, "changes", "gold", "guess", weight="w") as live:
        for part, lo in enumerate(range(0, 1500, 500)):
            chunk = df.iloc[lo:lo + 500]
            _write(src, f"{part}.json", [
                {"before": None, "after": _row(i, g, p, int(w)), "op": "c"}
                for i, g, p, w in zip(chunk.index, chunk["gold"], chunk["guess"], chunk["w"])
            ])
            for i, g, p, w in zip(chunk.index, chunk["gold"], chunk["guess"], chunk["w"]):
                ev.update(g, p, int(w))
                elements[i] = (g, p, int(w))
            r = live.wait_for(ev.table.stats().n)
            assert r.stats == ev.table.stats(), f"after {lo + 500} elements"
            assert r.values == ev.get()
        # corrections: 200 changed predictions, 100 deleted elements, then one new element (so
        # the total weight reaches its final value only once the whole file has gone through)
        changes = []
        for i in range(0, 600, 3):
            g, p, w = elements[i]
            new = (g, "late" + p, w)
            changes.append({"before": _row(i, g, p, w), "after": _row(i, *new), "op": "u"})
            ev.revert(g, p, w)
            ev.update(*new)
        for i in range(1000, 1100):
            g, p, w = elements[i]
            changes.append({"before": _row(i, g, p, w), "after": None, "op": "d"})
            ev.revert(g, p, w)
        changes.append({"before": None, "after": _row(5000, "new", "new", 1), "op": "c"})
        ev.update("new", "new", 1)
        _write(src, "corrections.json", changes)
        r = live.wait_for(ev.table.stats().n)
        assert r.stats == ev.table.stats() and r.values == ev.get()
        assert live.histograms.consistent() and not live.finished


def test_watch_with_key_replacement_over_a_bounded_source(stream_env):
    """``key=``: a later row with the same id replaces (retracts) the earlier one; watch ends with
    the source and its last report is exact."""
    df = data(3, 2000).reset_index().rename(columns={"index": "id"})
    again = df.iloc[::4].assign(guess=lambda d: d["guess"] + "x")  # 500 changed predictions
    both = pd.concat([df, again], ignore_index=True)
    reports = list(flink.watch(stream_env, stream_env.from_pandas(both), "gold", "guess",
                               weight="w", key="id", interval=0.2, ami=True))
    final = df.set_index("id")
    final.loc[again["id"], "guess"] = again["guess"].to_numpy()
    s, values = reference(final["gold"], final["guess"], final["w"])
    assert reports and reports[-1].stats == s and reports[-1].values == values
    ev = se.Evaluator(default_metrics())  # the same through reverts
    ev.update_many(df["gold"].to_numpy(object), df["guess"].to_numpy(object), df["w"].to_numpy())
    for g, p, q, w in zip(again["gold"], df.iloc[::4]["guess"], again["guess"], again["w"]):
        ev.revert(g, p, int(w))
        ev.update(g, q, int(w))
    assert ev.table.stats() == s
