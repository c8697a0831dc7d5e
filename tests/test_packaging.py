"""The release artefacts: the sdist and the wheel build with whatever backend pyproject.toml
declares (``python -m build``: the sdist first, then the wheel from the unpacked sdist), the wheel
installs into a fresh virtual environment where the README quickstart runs, and ``pytest``
collects and passes from the unpacked sdist (the quick loop, ``-m "not slow"``: every test module
is collected, and the slow ones are the Dask, fuzz, browser and long property tests that the full
run covers).

The fresh environment gets streameval only from the wheel (``pip install --no-deps --no-index``);
its dependencies (numpy, and pytest, hypothesis, scikit-learn... for the tests) come from the
running environment through a ``.pth`` line, so the test needs no download beyond the build
backend that ``python -m build`` installs in its isolated build environment.
"""

import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# what the tests import or read besides the package (conftest, oracles, strategies, docs, examples)
SDIST_MUST_CARRY = [
    "LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml", "mkdocs.yml", "docs_hooks.py", ".ci/run",
    ".ci/check-wheel", "build_backend/streameval_backend.py",
    "streameval/py.typed", "tests/conftest.py", "tests/oracles.py", "tests/oracles_coreference.py",
    "tests/strategies.py", "tests/typecheck/user_snippet.py", "docs/index.md", "docs/conventions.md",
    "examples/quickstart.py", "examples/reproduce_elm_paper.py",
]  # fmt: skip

pytestmark = pytest.mark.slow  # builds, a venv, and the quick suite from the sdist: minutes


def _run(cmd, **kw):
    """Run ``cmd`` without the caller's PYTHONPATH (it could point at a checkout)."""
    kw.setdefault("timeout", 1800)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    pytest.importorskip("build", reason="the build package is not installed (pip install -e '.[test]')")
    out = tmp_path_factory.mktemp("dist")
    run = _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)])
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def fresh(tmp_path_factory, dist) -> Path:
    """A fresh venv holding the wheel; the running environment's packages visible for the deps."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    Path(site.stdout.strip(), "_running_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (wheel,) = dist.glob("streameval-*.whl")
    run = _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)])
    assert run.returncode == 0, run.stdout + run.stderr
    return python


def _version() -> str:
    """[project] version in pyproject.toml (its one literal)."""
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text.split("[project]", 1)[1], re.M).group(1)


def test_sdist_carries_what_the_tests_import(dist):
    (sdist,) = dist.glob("streameval-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    missing = [n for n in SDIST_MUST_CARRY if n not in names]
    assert not missing, f"the sdist lacks {missing}"
    tests = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").glob("*.py")}
    assert tests <= names, f"the sdist lacks {sorted(tests - names)}"
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_wheel_metadata_license_and_types(dist):
    (wheel,) = dist.glob("streameval-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = z.read(meta_name).decode()
    assert "streameval/py.typed" in names
    assert "streameval/_native.pyi" in names  # the compiled core's types
    assert any(n.endswith("licenses/LICENSE") for n in names), names
    assert re.search(r"^License: BSD-3-Clause$", meta, re.M)  # what `pip show` prints
    for name in ("Homepage", "Documentation", "Source", "Issues", "Changelog"):
        assert re.search(rf"^Project-URL: {name}, https://", meta, re.M), name
    assert "](docs/" not in meta and "](LICENSE)" not in meta  # the long description's links are absolute
    assert re.search(rf"^Version: {re.escape(_version())}$", meta, re.M)
    assert "Classifier: Typing :: Typed" in meta and "Keywords:" in meta
    assert not any(n.startswith("tests/") for n in names)


def test_wheel_in_fresh_venv_runs_the_readme_quickstart(fresh, tmp_path):
    where = _run([str(fresh), "-c", "import streameval; print(streameval.__file__, streameval.__version__)"],
                 cwd=tmp_path)
    path, version = where.stdout.split()
    assert Path(path).is_relative_to(fresh.parents[1]), path  # the wheel's copy, not a checkout
    assert version == _version()
    cli = _run([str(fresh.parent / "streameval"), "--version"], cwd=tmp_path)
    assert cli.returncode == 0 and cli.stdout.split() == ["streameval", _version()], cli.stdout + cli.stderr
    readme = (ROOT / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    assert quickstart.count(">>> ") >= 10
    (tmp_path / "quickstart.md").write_text(quickstart)
    run = _run([str(fresh), "-m", "doctest", "-o", "NORMALIZE_WHITESPACE", "-o", "ELLIPSIS", "quickstart.md"],
               cwd=tmp_path)
    assert run.returncode == 0 and not run.stdout, run.stdout + run.stderr


@pytest.mark.soak  # the quick suite again, in the fresh venv: minutes (.ci/run's soak step)
def test_pytest_from_the_unpacked_sdist(fresh, dist, tmp_path):
    (sdist,) = dist.glob("streameval-*.tar.gz")
    with tarfile.open(sdist) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp_path, filter="data")
        else:  # Python < 3.10.12 has no extraction filters; the archive is our own build
            tar.extractall(tmp_path)
    (src,) = tmp_path.glob("streameval-*")
    assert not list((src / "streameval").glob("_native*.so")), "the sdist carries a compiled core"
    # the tests import the installed package, with its compiled core (-I: the tree's uncompiled
    # copy stays off the path; tests/conftest.py), not the tree's pure-Python fallback
    where = _run([str(fresh), "-I", "-c", "import streameval._native as n; print(n.__file__)"], cwd=src)
    assert where.returncode == 0 and Path(where.stdout.strip()).is_relative_to(fresh.parents[1]), where
    run = _run([str(fresh), "-I", "-m", "pytest", "-q", "-m", "not slow", "-x", "-rs"], cwd=src)
    tail = run.stdout[-3000:] + run.stderr[-3000:]
    assert run.returncode == 0, tail
    summary = run.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary) and not re.search(r"\d+ (failed|errors?)\b", summary), tail
    assert int(re.search(r"(\d+) passed", summary).group(1)) > 300, summary
    assert "native extension is not built" not in run.stdout  # the native-core tests ran
