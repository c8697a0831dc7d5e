"""First contact without a scratch: what a new user meets first -- the README's
commands and CI running the same thing, the suite's markers and time budget, the package metadata
and install hints, and the scikit-learn names a scikit-learn user reaches for in
:mod:`streameval.batch`. Each test is named after the item it covers; none builds anything.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import silhouette_rounding
from contingency_rounding import information_bounds, within

from streameval import batch
from streameval.contingency import NATIVE
from streameval.errors import MissingDependencyError

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


# ------------------------------------------------------------------ items 1-4: commands, time, packages
README_TEST = 'pip install -e ".[test]" && python -m pytest -q'

# the long runs the README's command leaves to .ci/run's soak step (module, test)
SOAK = [
    ("test_benchmarks", "test_bench_core_quick_runs_end_to_end"),
    ("test_cli_rotation", "test_sigkill_loop_resumes_exactly_across_a_rotation"),
    ("test_packaging", "test_pytest_from_the_unpacked_sdist"),
    ("test_compare_coverage", "test_percentile_intervals_cover_the_population_value"),
    ("test_compare_coverage", "test_same_distribution_gives_p_below_005_in_3_to_7_percent"),
    ("test_compare_coverage", "test_known_difference_is_detected_with_the_stated_power"),
    ("test_dask", "test_worker_memory_limit_below_the_table"),
    ("test_cli_hardening", "test_fuzz_huge_numbers_nul_bytes_boms_overlong_lines"),
]


def _code_lines(markdown: str) -> list[str]:
    blocks = re.findall(r"```\n(.*?)\n```", markdown, re.S)
    return [line for block in blocks for line in block.splitlines()]


def _marks(module: str, test: str) -> set[str]:
    """The names of the marks on ``module.test``: its own and its module's (read from the source,
    so that importing the module's optional dependencies is not needed)."""
    tree = ast.parse((ROOT / "tests" / f"{module}.py").read_text())
    names: set[str] = set()

    def collect(node):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute) \
                    and sub.value.attr == "mark":
                names.add(sub.attr)

    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets):
            collect(node.value)
        if isinstance(node, ast.FunctionDef) and node.name == test:
            for decorator in node.decorator_list:
                collect(decorator)
            return names
    raise AssertionError(f"{module}.{test} not found")


def test_item1_ci_runs_the_readme_test_command_character_for_character():
    readme = _code_lines((ROOT / "README.md").read_text())
    assert README_TEST in readme
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    # the same commands, one line each and in order (the script runs under set -e, which stops at
    # the first failure as `&&` does), not a variant of them
    parts = README_TEST.split(" && ")
    at = ci.index(parts[0])
    assert ci[at:at + len(parts)] == parts, ci[at:at + len(parts)]
    assert "set -euo pipefail" in ci
    # no other run of the default selection beside it (a variant would test something else)
    defaults = [line for line in ci if line.startswith("python -m pytest")
                and " -m " not in line.removeprefix("python -m pytest") and "tests/" not in line]
    assert defaults == [parts[-1]], defaults
    # the suite-wide runs take no options the README does not give (the separate jobs of one test
    # file each, Spark, Flink..., are not the README's command)
    assert not [line for line in ci if "pytest" in line and "no:randomly" in line and "tests/" not in line]


def test_item2_soak_runs_leave_the_readme_command_and_run_in_their_ci_step():
    addopts = _pyproject()["tool"]["pytest"]["ini_options"]["addopts"]
    assert "-m 'not soak'" in addopts or '-m "not soak"' in addopts, addopts
    for module, test in SOAK:
        assert {"soak", "slow"} <= _marks(module, test), (module, test)
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "python -m pytest -q -m soak" in ci
    readme = (ROOT / "README.md").read_text()
    for command in ("python -m pytest -q", 'python -m pytest -q -m "not slow"', "python -m pytest -q -m soak"):
        assert f"| `{command}` |" in readme, command  # the table of what runs what, and how long


@pytest.mark.slow
def test_item2_a_command_line_m_replaces_the_default_not_soak(tmp_path):
    """pyproject's ``-m "not soak"`` deselects the soak runs; ``-m soak`` on the command line
    selects them, ``-m "not slow"`` leaves them out as well (collection only, one small module)."""
    import subprocess

    def collected(*args):
        run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", *args,
                              "tests/test_benchmarks.py"], cwd=ROOT, capture_output=True, text=True,
                             timeout=300)
        return [line for line in run.stdout.splitlines() if "::" in line]

    soak = "tests/test_benchmarks.py::test_bench_core_quick_runs_end_to_end"
    assert soak not in collected()
    assert soak in collected("-m", "soak")
    assert soak not in collected("-m", "not slow")
    assert soak in collected("-m", "")


def test_item3_tests_from_an_unpacked_sdist_import_the_installed_package():
    ini = _pyproject()["tool"]["pytest"]["ini_options"]
    assert "." not in ini.get("pythonpath", []), "the tree's copy (no compiled core) would shadow the install"
    conftest = (ROOT / "tests" / "conftest.py").read_text()
    assert "PY_IGNORE_IMPORTMISMATCH" in conftest  # the modules' doctests run on the installed copies
    sdist_test = (ROOT / "tests" / "test_packaging.py").read_text()
    assert '"-I", "-m", "pytest"' in sdist_test and "shutil.copy(native" not in sdist_test


def test_item4_a_source_build_without_cargo_stops_with_a_message(monkeypatch, capsys, tmp_path):
    """The build backend: with no cargo on the PATH it refuses (maturin would download ~660 MB of
    Rust silently), unless STREAMEVAL_DOWNLOAD_RUST=1 allows it, with a notice."""
    pytest.importorskip("maturin")
    system = _pyproject()["build-system"]
    assert system["build-backend"] == "streameval_backend" and system["backend-path"] == ["build_backend"]
    monkeypatch.syspath_prepend(str(ROOT / "build_backend"))
    import streameval_backend

    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no cargo
    monkeypatch.delenv("STREAMEVAL_DOWNLOAD_RUST", raising=False)
    for hook in ("get_requires_for_build_wheel", "prepare_metadata_for_build_wheel", "build_wheel",
                 "build_sdist", "build_editable"):
        with pytest.raises(SystemExit) as exit_:
            getattr(streameval_backend, hook)(str(tmp_path))
        assert exit_.value.code == 1
        err = capsys.readouterr().err
        assert "cargo" in err and "660 MB" in err and "rustup.rs" in err and "STREAMEVAL_DOWNLOAD_RUST=1" in err
    monkeypatch.setenv("STREAMEVAL_DOWNLOAD_RUST", "1")
    assert "puccinialin" in streameval_backend.get_requires_for_build_wheel()  # maturin's own answer
    assert "downloads a Rust toolchain" in capsys.readouterr().err
    readme = (ROOT / "README.md").read_text()
    assert "660 MB" in readme and "STREAMEVAL_DOWNLOAD_RUST=1" in readme


def test_item4_ci_builds_the_abi3_wheel_and_runs_the_readme_against_it_without_cargo():
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert ".ci/check-wheel" in ci
    check = (ROOT / ".ci" / "check-wheel").read_text()
    assert "maturin build --release" in check and "-abi3-" in check
    assert 'clean_path="$work/venv/bin:/usr/bin:/bin"' in check and "command -v cargo" in check
    assert "python -m doctest" in check and "README.md" in check
    cargo = (ROOT / "Cargo.toml").read_text()
    assert re.search(r'features = \[[^]]*"abi3-py310"', cargo)


# ------------------------------------------------------------------ item 7: scikit-learn users
def _labels(seed: int, n: int, k_true: int, k_pred: int):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, k_true, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, k_pred, n))
    return t, p


@pytest.mark.parametrize("seed", range(4))
def test_item7_contingency_matrix_is_sklearns(seed):
    skc = pytest.importorskip("sklearn.metrics.cluster")
    t, p = _labels(seed, 300, 6, 9)
    dense = batch.contingency_matrix(t, p)
    assert dense.dtype == np.int64 and np.array_equal(dense, skc.contingency_matrix(t, p))
    sparse = batch.contingency_matrix(t, p, sparse=True)
    theirs = skc.contingency_matrix(t, p, sparse=True)
    assert sparse.format == theirs.format == "csr" and (sparse != theirs).nnz == 0
    with_eps = batch.contingency_matrix(t, p, eps=1e-10)
    assert with_eps.dtype == np.float64 and np.array_equal(with_eps, skc.contingency_matrix(t, p, eps=1e-10))
    # labels of any kind: rows and columns in the labels' sorted order, as numpy.unique orders them
    names = np.array(["b", "a", "c"])[t % 3]
    assert np.array_equal(batch.contingency_matrix(list(names), p.tolist()), skc.contingency_matrix(names, p))
    with pytest.raises(ValueError, match="eps cannot be set when sparse=True"):
        batch.contingency_matrix(t, p, eps=1.0, sparse=True)
    with pytest.raises(ValueError, match="same length"):
        batch.contingency_matrix(t, p[:-1])


def _pair_confusion_brute_force(t, p) -> list:
    """Every ordered pair of distinct elements, counted: ``[[TN, FP], [FN, TP]]``."""
    out = [[0, 0], [0, 0]]
    for i in range(len(t)):
        for j in range(len(t)):
            if i != j:
                out[int(t[i] == t[j])][int(p[i] == p[j])] += 1
    return out


@pytest.mark.parametrize("seed", range(4))
def test_item7_pair_confusion_matrix_is_sklearns_and_the_brute_force(seed):
    skc = pytest.importorskip("sklearn.metrics.cluster")
    t, p = _labels(seed, 60, 4, 5)
    ours = batch.pair_confusion_matrix(t, p)
    assert ours.dtype == np.int64 and ours.shape == (2, 2)
    assert ours.tolist() == _pair_confusion_brute_force(t.tolist(), p.tolist())
    assert np.array_equal(ours, skc.pair_confusion_matrix(t, p))
    big_t, big_p = _labels(seed, 20_000, 50, 60)
    assert np.array_equal(batch.pair_confusion_matrix(big_t, big_p), skc.pair_confusion_matrix(big_t, big_p))


@pytest.mark.parametrize("random_state", [0, 7, "instance"])
def test_item7_silhouette_score_accepts_sample_size_and_random_state(random_state):
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(0, 1, (60, 3)), rng.normal(4, 1, (60, 3))])
    labels = np.repeat([0, 1], 60)

    def state():  # a fresh RandomState each call: both libraries draw from the same stream
        return np.random.RandomState(11) if random_state == "instance" else random_state

    ours = batch.silhouette_score(X, labels, sample_size=40, random_state=state())
    theirs = skm.silhouette_score(X, labels, sample_size=40, random_state=state())
    # the same 40 points (one permutation: scikit-learn's), then the same O(40²) sums in float64,
    # scikit-learn's distances expanded through BLAS: apart by the bound on those points
    pick = np.random.RandomState(state()).permutation(len(X))[:40] if random_state != "instance" \
        else state().permutation(len(X))[:40]
    assert ours == batch.silhouette_samples(X[pick], labels[pick]).mean()
    assert abs(ours - theirs) <= silhouette_rounding.score_bound(
        X[pick], labels[pick], batch.silhouette_samples(X[pick], labels[pick]))
    assert ours != pytest.approx(batch.silhouette_score(X, labels), rel=1e-9)  # a sample, not all points
    assert batch.silhouette_score(X, list(labels), sample_size=40, random_state=state()) == pytest.approx(ours)
    with pytest.raises(ValueError, match="sample_size must be a positive int"):
        batch.silhouette_score(X, labels, sample_size=0)
    with pytest.raises(ValueError, match="random_state must be"):
        batch.silhouette_score(X, labels, sample_size=10, random_state="seed")


def test_item7_mutual_info_score_accepts_a_contingency_table():
    skm = pytest.importorskip("sklearn.metrics")
    t, p = _labels(5, 500, 5, 7)
    # each within its path's derived bound of the exact MI (contingency_rounding): from the
    # labels the native sums (or the numpy twin), from a table the twin's formula, scikit-learn's
    exact = {who: information_bounds(t.tolist(), p.tolist(), who)["MutualInfo"] for who in ("ours", "twin", "sklearn")}
    from_labels = batch.mutual_info_score(t, p)
    assert within(from_labels, exact["ours" if NATIVE else "twin"])
    dense = batch.contingency_matrix(t, p)
    sparse = batch.contingency_matrix(t, p, sparse=True)
    for table in (dense, dense.astype(float), sparse):
        assert within(batch.mutual_info_score(None, None, contingency=table), exact["twin"])
    # the labels are ignored when a table is given, as in scikit-learn
    assert batch.mutual_info_score([0, 1], [1, 0], contingency=dense) == batch.mutual_info_score(
        None, None, contingency=dense)
    assert within(skm.mutual_info_score(None, None, contingency=dense), exact["sklearn"])
    assert batch.mutual_info_score(None, None, contingency=[[3, 4]]) == 0.0  # one row: no information
    with pytest.raises(ValueError, match="non-negative"):
        batch.mutual_info_score(None, None, contingency=[[1, -1], [0, 2]])
    with pytest.raises(ValueError, match="two-dimensional"):
        batch.mutual_info_score(None, None, contingency=[1, 2, 3])


def test_item7_batch_label_functions_are_annotated():
    for f in (batch.normalized_mutual_info_score, batch.homogeneity_completeness_v_measure,
              batch.mutual_info_score, batch.contingency_matrix, batch.pair_confusion_matrix):
        sig = inspect.signature(f)
        if f is not batch.contingency_matrix:  # its type follows sparse= (an array or a SciPy matrix)
            assert sig.return_annotation is not inspect.Signature.empty, f.__name__
        assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values()
                   if p.kind is p.KEYWORD_ONLY and p.name in ("average_method", "beta")), f.__name__


def test_item7_test_window_does_not_import_sklearn_at_module_level():
    tree = ast.parse((ROOT / "tests" / "test_window.py").read_text())
    top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = [alias.name for node in top for alias in node.names]
    names += [node.module for node in top if isinstance(node, ast.ImportFrom) and node.module]
    assert not [n for n in names if n.split(".")[0] == "sklearn"], names


# the batch label functions and the streaming metric reporting the same value
BATCH_STREAMING = {
    "adjusted_rand_score": "AdjustedRand", "rand_score": "Rand", "fowlkes_mallows_score": "FowlkesMallows",
    "pair_precision_score": "PairPrecision", "pair_recall_score": "PairRecall", "pair_f1_score": "PairF1",
    "pair_jaccard_score": "PairJaccard", "mutual_info_score": "MutualInfo",
    "normalized_mutual_info_score": "NormalizedMutualInfo", "homogeneity_score": "Homogeneity",
    "completeness_score": "Completeness", "v_measure_score": "VBeta",
    "variation_of_information": "VariationOfInformation", "purity_score": "Purity",
    "inverse_purity_score": "InversePurity", "elm_score": "ELM", "bcubed_score": "BCubed",
}


@pytest.mark.parametrize("kind", ["int64", "strings", "list"])
def test_item7_batch_functions_count_natively_and_give_the_streaming_bits(kind):
    """The batch functions count natively and read the streaming sums: each value is the
    streaming metric's, bit for bit (the numpy twin, the tests' oracle, differs from it in the
    last bits: here at least MutualInfo does, computed with numpy's logarithms), and agrees with
    the twin to a tolerance from the twin's rounding (sums of N float terms, each a few ulps:
    relative 1e-12 at N = 3,000 leaves a margin of 10³ over N·2⁻⁵²)."""
    import streameval as se
    from streameval.batch import reference as twin
    from streameval.contingency import NATIVE

    if not NATIVE:
        pytest.skip("the native extension is not built: the batch functions are the twins")
    differ = set()
    for seed in range(3):
        t, p = _labels(seed, 3_000, 40, 50)
        if kind == "strings":
            t, p = t.astype(str), np.char.add("c", p.astype(str))
        elif kind == "list":
            t, p = t.tolist(), [f"c{x}" for x in p.tolist()]
        ev = se.Evaluator([se.REGISTRY[name]() for name in BATCH_STREAMING.values()])
        for a, b in zip(t, p):  # element by element: the streaming path
            ev.update(a, b)
        streaming = ev.get()
        for f, name in BATCH_STREAMING.items():
            ours, oracle = getattr(batch, f)(t, p), getattr(twin, f)(t, p)
            assert ours == streaming[name], (f, seed, ours, streaming[name])
            assert ours == pytest.approx(oracle, rel=1e-12, abs=1e-12), (f, seed)
            if ours != oracle:
                differ.add(name)
        tp, pp, tt, total = se.metrics.pairs.pair_counts(ev.table)
        assert batch.pair_confusion_matrix(t, p).tolist() == \
            [[2 * (total - pp - tt + tp), 2 * (pp - tp)], [2 * (tt - tp), 2 * tp]]
        h, c, v = batch.homogeneity_completeness_v_measure(t, p)
        assert (h, c, v) == (streaming["Homogeneity"], streaming["Completeness"], streaming["VBeta"])
    assert "MutualInfo" in differ, "the batch values are the twin's, not the native table's"


def test_item7_a_relabelled_perfect_match_scores_exactly_one():
    """The table's exact fixed-point sums give MI = H(T) = H(P) to the bit on a perfect match:
    NMI, homogeneity, completeness and V are exactly 1.0 (the twin's float sums give
    1.0000000000000002 on this one) and VI exactly 0."""
    from streameval.contingency import NATIVE

    if not NATIVE:
        pytest.skip("the native extension is not built: the batch functions are the twins")
    t = np.random.default_rng(100).integers(0, 100, 5_000)
    p = (t * 7 + 3) % 100_003
    assert batch.normalized_mutual_info_score(t, p) == 1.0
    assert batch.homogeneity_completeness_v_measure(t, p) == (1.0, 1.0, 1.0)
    assert batch.variation_of_information(t, p) == 0.0


def test_item7_the_twins_stay_independent_and_are_the_fallback(monkeypatch):
    """The numpy twins import no streaming code (neither the table nor the metrics); without the
    native extension the batch functions return the twins' values."""
    import streameval.batch.labels as public
    from streameval.batch import reference as twin

    tree = ast.parse(inspect.getsource(twin))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {m for m in imported if m and ("contingency" in m or "metrics" in m or "_native" in m)}, imported
    monkeypatch.setattr(public, "NATIVE", False)
    t, p = _labels(2, 2_000, 30, 40)
    for f in (*BATCH_STREAMING, "homogeneity_completeness_v_measure", "elm_precision_recall_fscore",
              "bcubed_precision_recall_fscore"):
        assert getattr(batch, f)(t, p) == getattr(twin, f)(t, p), f
    assert np.array_equal(batch.pair_confusion_matrix(t, p), twin.pair_confusion_matrix(t, p))


@pytest.mark.parametrize("sparse", [False, True])
def test_item7_contingency_matrix_counts_without_a_sort_and_equals_the_twin(sparse):
    """The public contingency_matrix numbers integer labels by counting (no sort) and builds the
    CSR matrix directly; it equals the twin's (a coordinate matrix) and scikit-learn's, labels
    of any range and kind."""
    skc = pytest.importorskip("sklearn.metrics.cluster")
    from streameval.batch import reference as twin

    rng = np.random.default_rng(4)
    for t, p in (_labels(1, 5_000, 30, 40),  # a small table: counted cell by cell
                 (rng.integers(-10**12, 10**12, 500), rng.integers(0, 400, 500)),  # a wide range
                 _labels(3, 5_000, 300, 400)):  # a table larger than 4N cells: the keys sorted
        ours, theirs, oracle = (f(t, p, sparse=sparse) for f in
                                (batch.contingency_matrix, skc.contingency_matrix, twin.contingency_matrix))
        if sparse:
            assert ours.format == "csr" and (ours != theirs).nnz == 0 and (ours != oracle).nnz == 0
        else:
            assert ours.dtype == np.int64 and np.array_equal(ours, theirs) and np.array_equal(ours, oracle)


# ------------------------------------------------------------------ item 8: metadata and hints
def test_item8_project_urls_licence_field_and_absolute_readme_links():
    project = _pyproject()["project"]
    urls = project["urls"]
    assert {"Homepage", "Documentation", "Source", "Issues", "Changelog"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())
    # the plain License field: `pip show` before pip 25.1 reads only that one
    assert project["license"] == {"text": "BSD-3-Clause"} and project["license-files"] == ["LICENSE"]
    # README.md is the long description: a relative link is dead on a package index
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert links and all(link.startswith("https://") for link in links), links
    source = urls["Source"].rstrip("/") + "/blob/main/"
    for link in links:  # links into the repository name files that exist
        if link.startswith(source):
            assert (ROOT / link[len(source):]).exists(), link


def test_item8_install_hints_give_the_index_and_the_source_form():
    message = str(MissingDependencyError("contingency_matrix(sparse=True)", "scipy", "sklearn"))
    assert 'pip install "streameval[sklearn]"' in message
    assert 'pip install -e ".[sklearn]"' in message
    from streameval.cli.render import EXTRA_HINT

    assert 'pip install "streameval[cli]"' in EXTRA_HINT and 'pip install -e ".[cli]"' in EXTRA_HINT
