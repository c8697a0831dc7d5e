"""Static checks with the configuration in pyproject.toml: ``mypy streameval`` and ``ruff check``
are clean, and a user's code type-checks with ``mypy --strict`` against streameval's own types
(``tests/typecheck/user_snippet.py``), which are real (the same expressions assigned to ``str``
are rejected) rather than ``Any``.

Each test skips where the tool is not installed (the ``test`` extra installs both).
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = ROOT / "tests" / "typecheck" / "user_snippet.py"


def _run(*cmd, cwd=ROOT):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def mypy(tmp_path_factory):
    """Run mypy with one cache for the module (numpy's stubs are analysed once)."""
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    cache = tmp_path_factory.mktemp("mypy-cache")

    def run(*args):
        return _run(sys.executable, "-m", "mypy", "--cache-dir", str(cache), *args)

    return run


@pytest.mark.slow
def test_mypy_package_is_clean(mypy):
    run = mypy()  # files, options and overrides: [tool.mypy] in pyproject.toml
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout


def test_ruff_is_clean():
    ruff = shutil.which("ruff") or (Path(sys.executable).parent / "ruff")
    if not Path(ruff).is_file():
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    run = _run(str(ruff), "check", "--no-cache", ".")  # rule set: [tool.ruff] in pyproject.toml
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow
def test_user_code_type_checks_strictly_with_real_types(mypy, tmp_path):
    # --follow-imports=silent: only the user's file is judged, as when streameval is installed
    # (test_mypy_package_is_clean checks the package itself with the project's configuration)
    run = mypy("--strict", "--follow-imports=silent", str(SNIPPET))
    assert run.returncode == 0, run.stdout + run.stderr
    # the same expressions, assigned to the wrong type: each line must be an error, which it
    # would not be if streameval's functions returned Any
    wrong = [
        "ev: str = se.Evaluator([se.ELM()]).get()",
        "elm: str = se.ELM().get()",
        "p: str = se.ELM().precision",
        "n: str = se.Contingency().n",
        "f: str = batch.elm_score([0], [0])",
        "t: str = batch.elm_precision_recall_fscore([0], [0])",
        "s: str = batch.silhouette_score([[0.0], [1.0], [5.0]], [0, 0, 1])",
        "w: str = se.CountWindow(3, [se.Purity()]).get()",
    ]
    bad = tmp_path / "wrong.py"
    bad.write_text("import streameval as se\nfrom streameval import batch\n\n" + "\n".join(wrong) + "\n")
    run = mypy("--strict", "--follow-imports=silent", str(bad))
    errors = [line for line in run.stdout.splitlines() if ": error: Incompatible types" in line]
    assert len(errors) == len(wrong), run.stdout
    assert 'expression has type "dict[str, float]"' in run.stdout
    assert 'expression has type "float"' in run.stdout
    assert 'expression has type "tuple[float, float, float]"' in run.stdout


def test_user_snippet_runs():
    run = _run(sys.executable, str(SNIPPET))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("{'ELM': 1.0")
