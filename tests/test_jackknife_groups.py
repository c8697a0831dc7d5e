"""BCa's jackknife groups: one rule (:func:`streameval.bootstrap.jackknife_groups`, ranks of the unit
keys' stable hashes) for :func:`streameval.compare` and :class:`~streameval.BootstrapEvaluator`,
so a BCa interval is a function of the data and the seed only: not of the order the units come
in, of list or array input, of the path, nor of the process's ``PYTHONHASHSEED``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from streameval import BootstrapEvaluator, compare
from streameval.bootstrap import jackknife_groups, unit_hash
from streameval.comparison import _metrics
from streameval.units import JACKKNIFE_GROUPS

ROOT = Path(__file__).resolve().parent.parent

# 1,300 string units (above JACKKNIFE_GROUPS: the grouped jackknife), 2 to 4 elements each, a
# truth of two entities per unit and a noisy system; labels tagged with their unit.
_SCRIPT = r"""
import sys
import numpy as np
from streameval import BootstrapEvaluator, compare
from streameval.comparison import _metrics

rng = np.random.default_rng(7)
units, yt, yp = [], [], []
for u in range(1300):
    for _ in range(2 + int(rng.integers(0, 3))):
        t = int(rng.integers(0, 2))
        units.append(f"doc-{u}")
        yt.append(f"doc-{u}/{t}")
        yp.append(f"doc-{u}/{t if rng.random() < 0.8 else 2}")
out = []
for order in (slice(None), slice(None, None, -1)):  # the units in two orders
    u, t, p = units[order], yt[order], yp[order]
    r = compare(t, {"A": p}, units=u, metrics=["ELM", "AdjustedRand"], n_resamples=60, seed=3,
                resampling="poisson", interval="bca")
    out += [float(x).hex() for m in ("ELM", "AdjustedRand") for x in r.values["A"][m]]
    r = compare(np.array(t), {"A": np.array(p)}, units=np.array(u), metrics=["ELM"],
                n_resamples=60, seed=3, resampling="poisson", interval="bca")
    out += [float(x).hex() for x in r.values["A"]["ELM"]]
bs = BootstrapEvaluator(_metrics(["ELM", "AdjustedRand"]), n_replicas=60, seed=3, interval="bca")
for a, b, c in zip(yt, yp, units):
    bs.update(a, b, unit=c)
out += [float(x).hex() for x in bs.jackknife().ravel()]
out += [float(x).hex() for m in ("ELM", "AdjustedRand") for x in bs.get()[m]]
print(" ".join(out))
"""


def _run(hash_seed: str) -> list[str]:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed,
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.slow  # two subprocesses: out of the quick loop
def test_bca_is_bit_identical_across_hash_seeds_input_orders_and_paths():
    """Two processes with different ``PYTHONHASHSEED`` give the same bits; within each, compare on
    the units in two orders, from lists and from numpy arrays, and the streaming bootstrap give the
    same BCa ends (Poisson resamples are keyed by the unit, the jackknife groups by the unit's
    hash: the same tables, read by the same code, so equality is exact)."""
    a, b = _run("1"), _run("2")
    assert a == b
    # per order: ELM (3) and ARI (3) from lists, ELM (3) from arrays
    first, second = a[:9], a[9:18]
    assert first == second
    assert first[:3] == first[6:9]
    streaming = a[-6:]
    assert streaming == first[:6]


def test_groups_are_ranks_of_the_key_hashes_balanced_and_order_free():
    keys = [f"u{i}" for i in range(2 * JACKKNIFE_GROUPS + 7)]
    h = [unit_hash(k) for k in keys]
    groups, g = jackknife_groups(h)
    assert g == JACKKNIFE_GROUPS
    # brute force: sort the keys by hash, deal them out round robin
    by_hash = sorted(keys, key=unit_hash)
    assert {k: i % g for i, k in enumerate(by_hash)} == dict(zip(keys, groups.tolist()))
    sizes = np.bincount(groups, minlength=g)
    assert sizes.min() == 2 and sizes.max() == 3
    perm = np.random.default_rng(0).permutation(len(keys))
    again, _ = jackknife_groups([h[i] for i in perm])
    assert dict(zip([keys[i] for i in perm], again.tolist())) == dict(zip(keys, groups.tolist()))
    few, g_few = jackknife_groups(h[:5])
    assert g_few == 5 and sorted(few.tolist()) == list(range(5))
    empty, g0 = jackknife_groups([])
    assert g0 == 0 and empty.shape == (0,)


def test_compare_and_the_streaming_bootstrap_read_the_same_jackknife_below_the_group_limit():
    """Few units (each its own group): the same leave-one-unit-out values in the same order."""
    rng = np.random.default_rng(2)
    units = [f"d{int(u)}" for u in rng.integers(0, 40, 400)]
    yt = [(u, int(rng.integers(0, 3))) for u in units]
    yp = [(u, t[1] if rng.random() < 0.7 else 9) for u, t in zip(units, yt)]
    bs = BootstrapEvaluator(_metrics(["BCubed"]), n_replicas=30, seed=1, interval="bca")
    for t, p, u in zip(yt, yp, units):
        bs.update(t, p, unit=u)
    r = compare(yt, {"A": yp}, units=units, metrics=["BCubed"], n_resamples=30, seed=1,
                resampling="poisson", interval="bca")
    assert bs.get()["BCubed"] == r.values["A"]["BCubed"]


def test_bca_names_a_unit_key_it_cannot_hash():
    import datetime

    units = [datetime.date(2020, 1, 1)] * 2 + [datetime.date(2020, 1, 2)] * 2
    with pytest.raises(TypeError, match='interval="bca" groups the units by a stable hash.*got date'):
        compare([0, 0, 1, 1], {"A": [0, 0, 1, 1]}, units=units, interval="bca", n_resamples=20)
