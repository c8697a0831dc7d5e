"""The streaming bootstrap's calibration script (docs/benchmarks/bootstrap.md): a smoke run, so the
script that chose ``BootstrapEvaluator``'s default interval cannot rot. (The full run is a few CPU
minutes: ``PYTHONPATH=. python benchmarks/calibration_bootstrap.py``, its command on the page.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_calibration_script_quick_run_prints_every_setting_and_method(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # it reuses calibration_compare's generators
    spec = importlib.util.spec_from_file_location("calibration_bootstrap",
                                                  ROOT / "benchmarks" / "calibration_bootstrap.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("|")]
    for kind, docs in mod.SETTINGS:
        for method in ("percentile", "BCa", "studentized", "hybrid", "adaptive"):
            assert sum(r.startswith(f"| {kind} | {docs} | {method} |") for r in rows) == 2
    assert "The best worst case over these settings: **" in out
    # the published page names the default the calibration chose, and the library uses it
    import streameval.bootstrap as bootstrap

    page = (ROOT / "docs" / "benchmarks" / "bootstrap.md").read_text(encoding="utf-8")
    chosen = page.split("The best worst case over these settings: **")[1].split("**")[0]
    assert mod.NAMES[bootstrap.DEFAULT_INTERVAL] == chosen
