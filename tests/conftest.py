"""Shared test set-up: a seeded hypothesis profile (and two that draw other examples), the
location of the shared PSS data, and which copy of the package is under test.

The tests import ``streameval`` as Python finds it: in a checkout after ``pip install -e .``
(or ``python -m pytest``, which puts the working directory first) that is the checkout; from an
unpacked sdist, run as ``python -I -m pytest`` after installing the package, it is the installed
package with its compiled core -- not the tree's copy, which has no ``_native`` and would silently
test the pure-Python fallback. The doctests of ``streameval/*.py`` then run on the installed
modules (the same source): pytest is told not to insist that the module it imports is the tree's file.
"""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import streameval

settings.register_profile(
    "streameval",
    derandomize=True,  # seeded and reproducible
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("streameval")
# Other examples than the fixed ones, for runs that look beyond them (the README's Set-up): a seed
# chosen on the command line (`--hypothesis-profile=explore --hypothesis-seed=N`, reproducible
# with the same N) and no example database, so that no run depends on what an earlier one found;
# `explore-long` draws five times the examples where a test does not fix its own count.
settings.register_profile("explore", parent=settings.get_profile("streameval"), derandomize=False, database=None)
settings.register_profile("explore-long", parent=settings.get_profile("explore"), max_examples=300)

PSS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pss"

TREE = Path(__file__).resolve().parents[1] / "streameval"
UNDER_TEST = Path(streameval.__file__).resolve().parent
if UNDER_TEST != TREE:  # an installed package: its modules' doctests stand for the tree's
    os.environ["PY_IGNORE_IMPORTMISMATCH"] = "1"


@pytest.fixture
def pss_dir() -> Path:
    """The shared page-stream data (``../shared/data/pss``); the test is skipped without it."""
    if not (PSS_DIR / "test.json").is_file():
        pytest.skip(f"page-stream data not found at {PSS_DIR}")
    return PSS_DIR


# Doctests that start a Dask cluster or stream large examples: part of the full run, not of the
# quick loop (pytest -m "not slow"). Paths relative to the repository root.
SLOW_DOCTESTS = ("docs/architecture.md", "docs/distributed.md", "streameval/dask.py")


def pytest_collection_modifyitems(config, items):
    root = Path(__file__).resolve().parents[1]
    slow = {root / p for p in SLOW_DOCTESTS}
    for item in items:
        if Path(str(item.path)).resolve() in slow:
            item.add_marker(pytest.mark.slow)
