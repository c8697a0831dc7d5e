"""The package's structure, read from its source with ``ast``: seams, not reaches.

- No module reads another module's private names: neither ``from .x import _name`` nor
  ``obj._name`` (``obj`` not ``self``/``cls``/``super()``) where ``_name`` is not defined in the
  reading module itself (a ``def``, a ``class``, an assignment, an attribute set on ``self``/``cls``
  or a ``__slots__`` entry). A compiled extension of the package belongs to the module that wraps
  it: the private names its stub (``_native.pyi``) declares count as that module's own.
- The import graph inside ``streameval`` (every import: module level, inside functions, under
  ``TYPE_CHECKING``) has no cycle.
- Capabilities are declared, not guessed: no ``getattr(m, "on_demand", ...)``, no test of a
  metric's class name; and every name resolver agrees with :func:`streameval.metrics.resolve`.
- Imports point down the layers that docs/architecture.md tables (and draws from that table).
"""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import streameval as se
from streameval.distributed import plan_metrics
from streameval.metrics import REGISTRY, Metric, resolve
from streameval.stats import ContingencyStats

# the source tree's package (the checkout's, or an unpacked sdist's when the tests run against the
# installed package: the same files), and the repository root beside it
ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "streameval"

# Offenders that other work in progress removes: {path prefix (relative to the repository): names}.


# --------------------------------------------------------------------------- reading the source
@dataclass(frozen=True)
class Module:
    name: str  # dotted
    path: str  # relative to the repository, "/"-separated
    tree: ast.Module
    is_package: bool


def _modules() -> dict[str, Module]:
    out = {}
    for p in sorted(PACKAGE.rglob("*.py")) + sorted(PACKAGE.rglob("*.pyi")):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        if p.suffix == ".pyi" and name in out:
            continue  # a stub beside its source: the source is the module
        rel = p.relative_to(ROOT).as_posix()
        out[name] = Module(name, rel, ast.parse(p.read_text(encoding="utf-8"), rel), is_package)
    return out


MODULES = _modules()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _absolute(m: Module, node: ast.ImportFrom) -> str:
    """The dotted module an ``ImportFrom`` reads from."""
    if not node.level:
        return node.module or ""
    base = m.name.split(".")
    if not m.is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owner_or_self(v: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``: the reading class's own attributes."""
    if isinstance(v, ast.Name):
        return v.id in ("self", "cls")
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super"


def _defined(tree: ast.AST) -> set[str]:
    """The names a module defines: defs, classes, assignments, ``self``/``cls`` attributes, slots."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
            if _owner_or_self(n.value):
                out.add(n.attr)
        elif isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in n.targets
        ):
            out |= {c.value for c in ast.walk(n.value) if isinstance(c, ast.Constant)}
    return out


def _own_names(m: Module) -> set[str]:
    own = _defined(m.tree)
    for n in ast.walk(m.tree):  # a wrapped extension's stub: its private API is this module's
        if isinstance(n, ast.ImportFrom):
            src = MODULES.get(_absolute(m, n))
            if src is not None and src.path.endswith(".pyi"):
                own |= _defined(src.tree)
    return own


@dataclass(frozen=True)
class Offence:
    path: str
    line: int
    what: str
    name: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _private_reach(m: Module) -> list[Offence]:
    if m.path.endswith(".pyi"):
        return []
    own = _own_names(m)
    out = []
    for n in ast.walk(m.tree):
        if isinstance(n, ast.ImportFrom):
            src = _absolute(m, n)
            if src == "streameval" or src.startswith("streameval."):
                for a in n.names:
                    if _private(a.name):
                        out.append(Offence(m.path, n.lineno, f"from {src} import {a.name}", a.name))
        elif isinstance(n, ast.Attribute) and _private(n.attr) and n.attr not in own:
            if not _owner_or_self(n.value):
                out.append(Offence(m.path, n.lineno, f"reads {ast.unparse(n)}", n.attr))
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(n.args) >= 2
            and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)
            and _private(n.args[1].value)
            and n.args[1].value not in own
            and not _owner_or_self(n.args[0])
        ):
            out.append(Offence(m.path, n.lineno, f"reads {ast.unparse(n)}", n.args[1].value))
    return out


def _all_private_reach() -> list[Offence]:
    return sorted(
        (o for m in MODULES.values() for o in _private_reach(m)), key=lambda o: (o.path, o.line)
    )


# --------------------------------------------------------------------------- private reach
def test_the_scan_sees_the_package():
    assert {"streameval", "streameval.metrics.base", "streameval.batch.labels"} <= set(MODULES)
    assert len(MODULES) > 30


def test_the_scan_finds_a_private_reach():
    """The rule on small sources: what it flags and what it lets through."""
    src = '''
from .other import _hidden, shown
class A:
    __slots__ = ("_slot",)
    _declared = 1
    def f(self, other, t):
        self._mine = 1
        return (other._mine, other._slot, other._declared, self._x, super()._y, t.__len__,
                t._elsewhere, getattr(t, "_gone"), getattr(self, "_fine"))
'''
    m = Module("streameval.fake", "streameval/fake.py", ast.parse(src), False)
    assert sorted(o.what for o in _private_reach(m)) == [
        "from streameval.other import _hidden",
        "reads getattr(t, '_gone')",
        "reads t._elsewhere",
    ]


def test_no_module_reads_another_modules_private_names():
    found = _all_private_reach()
    assert not found, "private names read across modules:\n" + "\n".join(map(str, found))


# --------------------------------------------------------------------------- import cycles
def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for m in MODULES.values():
        for n in ast.walk(m.tree):
            if isinstance(n, ast.Import):
                targets = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                src = _absolute(m, n)
                # `from pkg import sub` reads the submodule; `from mod import name` the module
                targets = [f"{src}.{a.name}" if f"{src}.{a.name}" in MODULES else src for a in n.names]
            else:
                continue
            for t in targets:
                while t and t not in MODULES:
                    t = t.rpartition(".")[0]
                if t and t != m.name:
                    graph[m.name].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def _show(graph, comp: set[str]) -> str:
    return "; ".join(f"{a} -> {', '.join(sorted(graph[a] & comp))}" for a in sorted(comp))


def test_cycle_finder_on_a_small_graph():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _cycles(g) == [{"a", "b", "c"}]


def test_metrics_depend_on_nothing_above_them():
    graph = _import_graph()
    assert "streameval.river" not in graph["streameval.metrics.base"]
    assert "streameval.metrics.base" in graph["streameval.river"]


def test_no_import_cycle_inside_the_package():
    graph = _import_graph()
    found = _cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(_show(graph, c) for c in found)


# --------------------------------------------------------------------------- layers
def _layers() -> dict[str, tuple[int, str]]:
    """``{module or package: (layer, layer name)}`` from the layer table of docs/architecture.md,
    read by the same function that draws it on the site."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    rows = hooks.layer_rows((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    out = {}
    for number, name, modules, _rule in rows:
        for mod in modules:
            out["streameval" if mod == "streameval" else f"streameval.{mod}"] = (number, name)
    return out


def _layer_of(module: str, layers: dict) -> tuple[int, str] | None:
    """The layer of a module: its own row, or its package's (the package ``streameval`` itself
    is only the public face, never a fallback for its submodules)."""
    if module == "streameval":
        return layers.get(module)
    while module != "streameval":
        if module in layers:
            return layers[module]
        module = module.rpartition(".")[0]
    return None


def test_every_module_has_a_layer_on_the_architecture_page():
    layers = _layers()
    assert len({n for n, _ in layers.values()}) >= 6
    unplaced = sorted(m for m in MODULES if _layer_of(m, layers) is None)
    assert not unplaced, f"modules missing from docs/architecture.md's layer table: {unplaced}"
    stale = sorted(m for m in layers if m not in MODULES)
    assert not stale, f"the layer table names modules that do not exist: {stale}"


def _described() -> set[str]:
    """The files the module table of docs/architecture.md ("Every module, by layer") describes,
    relative to the repository: a row's first cell names files (``streameval/dask.py``, ``sql.py``:
    the directory carries over) or a directory (``streameval/metrics/``, ``src/``), whose files the
    second cell names (``element.py`` or ``watch_state``); a directory's row describes its
    ``__init__.py``, and ``streameval/_native`` its stub."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    lines = text[text.index("Every module, by layer:"):].splitlines()[1:]
    out: set[str] = set()
    for line in lines:
        if not line.startswith("|"):
            if out:
                break
            continue
        first, second = (c.strip() for c in re.split(r"(?<!\\)\|", line)[1:3])
        folder = ""
        for token in re.findall(r"`([^`]+)`", first):
            folder = token if token.endswith("/") else (token.rpartition("/")[0] + "/" if "/" in token else folder)
            if token.endswith("/"):
                out.add(token + "__init__.py")
                for name in re.findall(r"`([\w.]+)`", second):
                    stem = name.removesuffix(".py").removesuffix(".rs")
                    out |= {f"{token}{stem}.py", f"{token}{stem}.rs"}
            elif token == "streameval/_native":
                out.add("streameval/_native.pyi")
            else:
                out.add(token if "/" in token else folder + token)
    return out


def test_every_module_and_rust_file_is_described_on_the_architecture_page():
    described = _described()
    files = [p.relative_to(ROOT).as_posix() for p in sorted(PACKAGE.rglob("*.py"))]
    files += [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "src").glob("*.rs"))]
    files.append("streameval/_native.pyi")
    missing = [f for f in files if f not in described]
    assert not missing, f"files missing from docs/architecture.md's module table: {missing}"
    assert {"streameval/metrics/element.py", "src/core.rs", "streameval/sql.py"} <= described


def test_imports_point_down_the_layers():
    layers = _layers()
    graph = _import_graph()
    up = []
    for src, targets in graph.items():
        a = _layer_of(src, layers)
        for dst in targets:
            b = _layer_of(dst, layers)
            if a and b and b[0] > a[0]:
                up.append(f"{src} ({a[1]}) imports {dst} ({b[1]})")
    assert not up, "imports that point up the layers:\n" + "\n".join(sorted(up))


# --------------------------------------------------------------------------- declared capabilities
def _guessed_capabilities(m: Module) -> list[Offence]:
    """``getattr(x, "on_demand", ...)`` and ``type(x).__name__ == "SomeMetric"``-style tests."""
    out = []
    for n in ast.walk(m.tree):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("getattr", "hasattr")
            and len(n.args) >= 2
            and isinstance(n.args[1], ast.Constant)
            and n.args[1].value in ("on_demand", "from_sizes", "f_specs", "params")
        ):
            out.append(Offence(m.path, n.lineno, ast.unparse(n), n.args[1].value))
        if isinstance(n, ast.Compare) and any(
            isinstance(c, ast.Constant) and c.value in REGISTRY for c in [n.left, *n.comparators]
        ):
            names = [s for s in ast.walk(n) if isinstance(s, ast.Attribute) and s.attr == "__name__"]
            if names:
                out.append(Offence(m.path, n.lineno, ast.unparse(n), "__name__"))
    return out


def test_capabilities_are_declared_not_guessed():
    found = [o for m in MODULES.values() for o in _guessed_capabilities(m)]
    assert not found, "\n".join(map(str, found))


def test_the_capability_flags_are_declared_on_the_base():
    assert Metric.on_demand is False and Metric.from_sizes is False
    for cls in REGISTRY.values():
        assert isinstance(cls.on_demand, bool) and isinstance(cls.from_sizes, bool)
        assert not cls.from_sizes or cls.on_demand, cls  # from_sizes refines on_demand
    assert {c for c in REGISTRY.values() if c.on_demand} == {
        se.AdjustedMutualInfo, se.CEAF, se.ClusterAccuracy
    }
    assert {c for c in REGISTRY.values() if c.from_sizes} == {se.AdjustedMutualInfo}


def _random_table(seed: int) -> se.Contingency:
    rng = random.Random(seed)
    t = se.Contingency()
    for _ in range(60):
        t.update(rng.randrange(6), rng.randrange(5), rng.randrange(1, 3))
    return t


SPECS = [(cls, {}) for cls in REGISTRY.values()] + [
    (se.ELM, {"beta": 2.0}), (se.BCubed, {"beta": 0.5}), (se.ELM, {"f_convention": "f_of_averages"}),
    (se.AdjustedMutualInfo, {"average_method": "max"}), (se.CEAF, {"variant": "mention"}),
]


def _spec_id(spec) -> str:
    cls, params = spec
    return cls(**params).name


@pytest.mark.parametrize("spec", SPECS, ids=_spec_id)
def test_params_rebuild_the_metric(spec):
    metric = spec[0](**spec[1])
    again = type(metric)(**metric.params)
    assert again.name == metric.name and again.params == metric.params
    metric.params["x"] = 1  # a copy: the metric is unchanged
    assert "x" not in metric.params


@pytest.mark.parametrize("spec", SPECS, ids=_spec_id)
def test_f_specs_are_what_a_bound_table_tracks(spec):
    metric = spec[0](**spec[1])
    ev = se.Evaluator([metric])
    assert ev.table.tracked_f() == metric.f_specs
    if metric.on_demand and not metric.from_sizes:
        with pytest.raises(ValueError, match="needs the table's cells"):
            plan_metrics([metric.clone()])
    else:
        assert plan_metrics([metric.clone()])[1] == metric.f_specs


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("spec", SPECS, ids=_spec_id)
def test_value_from_sizes_is_the_streaming_value(spec, seed):
    """What an engine reports (the sums and the size histograms) equals the table's value."""
    from streameval.metrics.information import size_histograms

    metric = spec[0](**spec[1])
    table = _random_table(seed)
    ev = se.Evaluator([metric], table=table)
    stats = ContingencyStats.from_cells(table.items(), metric.f_specs)
    if metric.on_demand and not metric.from_sizes:
        with pytest.raises(TypeError, match="needs the table's cells"):
            metric.value_from_sizes(stats, *size_histograms(table))
    else:
        assert metric.value_from_sizes(stats, *size_histograms(table)) == ev.get()[metric.name]


def test_engines_accept_what_their_sums_determine():
    chosen, specs = plan_metrics("ELM AMI")
    assert [m.name for m in chosen] == ["ELM", "AdjustedMutualInfo"] and specs == [("elm", 1.0)]
    for name in ("CEAF", "ClusterAccuracy"):
        with pytest.raises(ValueError, match="needs the table's cells"):
            plan_metrics([name])
    with pytest.raises(TypeError, match="not a streameval metric"):
        plan_metrics([3])


# --------------------------------------------------------------------------- one resolver
def _names(metrics) -> list[str]:
    return [m.name for m in metrics]


def test_every_resolver_reads_all_the_same_way():
    """``all``, ``None`` and short forms mean the same set everywhere names are taken."""
    from streameval.cli.pss import pick_metrics
    from streameval.comparison import _metrics as compare_metrics
    from streameval.pss import PageStream

    expected = [c.__name__ for c in resolve("all")]
    assert expected == _names(se.metrics.default_metrics())
    assert list(se.Evaluator("all").metrics) == expected
    assert list(se.Evaluator().metrics) == expected
    assert list(se.CountWindow(3, "all").evaluator.metrics) == expected
    assert list(se.Monitor("all", watch=None).all_time.metrics) == expected
    assert list(se.BootstrapEvaluator("all", n_replicas=2).evaluator.metrics) == expected
    assert _names(plan_metrics(None)[0]) == _names(plan_metrics("all")[0]) == expected
    assert _names(compare_metrics("all")) == expected
    assert list(PageStream().evaluator.metrics) == expected
    assert _names(pick_metrics("all")) == expected  # pss's --metrics
    short = ["AdjustedRand", "NormalizedMutualInfo"]
    assert list(se.Evaluator("ari, nmi").metrics) == short
    assert _names(plan_metrics(["ari", "nmi"])[0]) == short
    assert _names(compare_metrics(["ari", "nmi"])) == short
    assert _names(pick_metrics(["ari", "nmi"])) == short


def test_every_resolver_rejects_an_unknown_name_alike():
    from streameval.cli.pss import pick_metrics
    from streameval.comparison import _metrics as compare_metrics
    from streameval.metrics import UnknownMetricError

    for build in (se.Evaluator, plan_metrics, compare_metrics, pick_metrics,
                  lambda m: se.CountWindow(2, m)):
        with pytest.raises(UnknownMetricError, match="unknown metric 'adjusted_randomness'"):
            build(["adjusted_randomness"])


def test_compare_and_bootstrap_refuse_on_demand_metrics_by_flag():
    from streameval.comparison import _metrics as compare_metrics

    with pytest.raises(ValueError, match="summable statistics"):
        compare_metrics(["AMI"])
    with pytest.raises(ValueError, match="not an O\\(1\\) metric"):
        se.BootstrapEvaluator(["CEAF"])


# --------------------------------------------------------------------------- comments
def test_no_comment_points_at_an_issue_number():
    """Comments and docstrings say what the code does, not which ticket asked for it."""
    import re

    pattern = re.compile(r"\bissue ?#?[0-9]+", re.IGNORECASE)
    found = []
    for folder in ("streameval", "tests", "docs", "benchmarks", "examples"):
        for p in sorted((ROOT / folder).rglob("*")):
            if p.suffix in (".py", ".pyi", ".md") and p.is_file():
                for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
                    if pattern.search(line) and "pattern = re.compile" not in line:
                        found.append(f"{p.relative_to(ROOT)}:{k}: {line.strip()}")
    assert not found, "\n".join(found)
