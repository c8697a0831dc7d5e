"""Lists once: every list of metrics is the registry's, or is checked against it.

A metric class registers itself (``streameval.REGISTRY``). These tests fail on a registered metric
missing from its family module's ``__all__`` (and so from ``streameval.metrics.__all__`` and
``streameval.__all__``, which are built from those lists), on a metric without a batch twin in
``streameval.batch.__all__``, on a metric without its row in a metric table of the docs (or a row
whose class, link or batch function is wrong), and on a resolver alias that repeats what the
resolver derives by itself.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest
from discover import LABEL_METRICS, TWINS

import streameval as se
from streameval import batch, metrics
from streameval.metrics import resolve
from streameval.metrics.resolve import ALIASES

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = sorted({cls.__module__ for cls in LABEL_METRICS.values()})
# the pages whose tables list metrics: a table whose header starts "| metric | class | ..."
TABLE_PAGES = ("docs/metrics.md", "docs/coreference.md")


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


# ------------------------------------------------------------------------------------ __all__
def test_every_registered_metric_is_in_its_family_list_and_exported():
    for name, cls in LABEL_METRICS.items():
        family = importlib.import_module(cls.__module__)
        assert name in family.__all__, f"{name} is missing from {cls.__module__}.__all__"
        assert getattr(metrics, name) is cls and getattr(se, name) is cls, name
    assert set(metrics.__all__) <= set(se.__all__)


@pytest.mark.parametrize("module", FAMILIES)
def test_family_lists_name_every_public_definition(module):
    """A family's ``__all__`` names exactly what it defines without a leading underscore."""
    mod = importlib.import_module(module)
    defined = {
        name for name, obj in vars(mod).items()
        if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
        and obj.__module__ == module
    }
    assert defined <= set(mod.__all__), f"defined in {module} but missing from its __all__: {defined - set(mod.__all__)}"
    assert set(mod.__all__) <= defined, f"in {module}.__all__ but not defined there: {set(mod.__all__) - defined}"


@pytest.mark.parametrize("package", [se, metrics, batch], ids=lambda p: p.__name__)
def test_public_lists_have_no_repeat_and_no_missing_name(package):
    assert len(package.__all__) == len(set(package.__all__))
    assert [n for n in package.__all__ if not hasattr(package, n)] == []


def test_the_lists_are_built_from_the_family_lists():
    for module in FAMILIES:
        assert set(importlib.import_module(module).__all__) <= set(metrics.__all__), module
    for name in ("labels", "coreference", "intrinsic", "pss", "sample"):
        assert set(importlib.import_module(f"streameval.batch.{name}").__all__) <= set(batch.__all__)


# ------------------------------------------------------------------------------- batch twins
def test_every_registered_label_metric_has_one_batch_twin():
    missing = sorted(set(LABEL_METRICS) - set(TWINS))
    assert not missing, f"registered label metrics without a batch twin in streameval.batch.__all__: {missing}"
    assert set(TWINS) <= set(LABEL_METRICS)
    for name, f in TWINS.items():
        assert f.__module__.startswith("streameval.batch."), (name, f.__module__)
        assert resolve(f.__name__) == [LABEL_METRICS[name]]


# ----------------------------------------------------------------------------------- aliases
def test_aliases_only_where_the_resolver_derives_nothing():
    derived = {_key(name) for name in LABEL_METRICS}
    for alias, target in ALIASES.items():
        assert target in LABEL_METRICS, (alias, target)
        assert alias == _key(alias) and alias not in derived, f"{alias!r} repeats a derived key"
        for spelling in (alias, alias.upper(), alias + "_score"):
            assert resolve(spelling) == [LABEL_METRICS[target]], spelling


def test_every_class_and_scikit_learn_name_resolves_without_an_alias():
    for name, cls in LABEL_METRICS.items():
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
        for spelling in (name, name.lower(), snake, snake + "_score"):
            assert resolve(spelling) == [cls], spelling


# -------------------------------------------------------------------------------- docs tables
def metric_rows() -> list:
    """``(page, class cell, batch cell)`` of every row of every metric table in the docs."""
    rows = []
    for page in TABLE_PAGES:
        header = None
        for line in (ROOT / page).read_text().splitlines():
            if not line.startswith("|"):
                header = None
                continue
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if header is None:
                header = cells
            elif header[:2] == ["metric", "class"] and not set(cells[0]) <= set("-: "):
                rows.append((page, cells[1], cells[2]))
    return rows


def test_docs_tables_have_one_row_per_registered_metric():
    rows = metric_rows()
    named: dict = {}
    for page, classes, batch_cell in rows:
        for name in re.findall(r"`(\w+)", classes):
            assert name in LABEL_METRICS, f"{page} lists {name}, which is not a registered metric"
            assert name not in named, f"{name} has two rows ({named[name]}, {page})"
            named[name] = page
            cls = LABEL_METRICS[name]
            for target in re.findall(r"\]\[([\w.]+)\]", classes):
                if target.endswith("." + name):
                    assert target == f"{cls.__module__}.{name}", (page, target)
            functions = re.findall(r"`(?:batch\.)?(\w+)`", batch_cell)
            assert TWINS[name].__name__ in functions, f"{page}: {name}'s row misses {TWINS[name].__name__}"
    missing = sorted(set(LABEL_METRICS) - set(named))
    assert not missing, f"registered metrics without a row in the docs' metric tables: {missing}"


def test_readme_names_registered_metrics_and_every_family():
    text = (ROOT / "README.md").read_text()
    start = text.index("- Metric views (`streameval.metrics`)")
    bullet = text[start: text.index("\n- ", start + 1)]
    named = set(re.findall(r"`([A-Z]\w+)`", bullet))
    assert named <= set(LABEL_METRICS), named - set(LABEL_METRICS)
    for module in FAMILIES:
        assert named & {n for n, c in LABEL_METRICS.items() if c.__module__ == module}, module
    assert "docs/metrics.md" in bullet  # where the complete list is


def test_cli_page_names_exactly_the_on_demand_metrics():
    text = " ".join((ROOT / "docs" / "cli.md").read_text().split())
    listed = re.search(r"the on-demand metrics \(([^)]*)\)", text).group(1)
    on_demand = {n for n, c in LABEL_METRICS.items() if c.on_demand}
    assert set(re.findall(r"`(\w+)`", listed)) == on_demand
