"""Shared test set-up: a seeded hypothesis profile and the location of the shared PSS data."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "streameval",
    derandomize=True,  # seeded and reproducible
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("streameval")

PSS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pss"


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
