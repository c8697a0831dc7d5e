"""Calibration of the labelled-sample intervals (a simulation: slow, and run with the soak step).

The simulation is ``benchmarks/sample_calibration.py`` (its full run writes
``docs/benchmarks/sample-calibration.md``). Here: the light-tailed population, 400 samples per
cell. Monte Carlo standard error of a 95% coverage over 400 samples is 1.1 points, so the band
asserted, 90–99%, is the documented goal 92–97% widened by about two standard errors. The
heavy-tailed population's failures are reported in the docs table, not asserted.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _calibration():
    spec = importlib.util.spec_from_file_location("sample_calibration",
                                                  ROOT / "benchmarks" / "sample_calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.soak
def test_intervals_cover_at_200_and_1000_entities_and_the_naive_score_is_biased():
    cal = _calibration()
    res = cal.simulate("light", reps=400, sizes=(200, 1000))
    for design in ("uniform", "size"):
        for n in (200, 1000):
            for name, (coverage, mean, _naive) in res[design][n].items():
                assert 0.90 <= coverage <= 0.99, (design, n, name, coverage)
                assert abs(mean - res["truth"][name]) < 0.02, (design, n, name, mean)
    cov, mean, naive = res["uniform"][200]["pairwise_precision"]
    assert naive - res["truth"]["pairwise_precision"] > 0.1  # the naive score overstates
