"""``streameval watch`` scraped by a real Prometheus server (Debian's ``prometheus`` package) on
127.0.0.1, the values read back through Prometheus's HTTP API; the shipped alert rules checked by
``promtool check rules`` and loaded by the server; the Grafana dashboard's queries name the series
watch serves. Skipped cleanly when the binaries are absent (``.ci/run`` installs them).
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import re
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request

import pytest
from contingency_rounding import within
from test_cli import run
from test_cli_watch import (
    WATCH,
    expected,
    finish,
    needs_script,
    paused,
    rows_text,
    sample,
    start,
    wait_for,
)

pytestmark = needs_script

PROMETHEUS, PROMTOOL = shutil.which("prometheus"), shutil.which("promtool")
needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None, reason="no prometheus binary (apt-get install prometheus; .ci/run does)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port: int, expr: str) -> list:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            doc = json.load(resp)
    except OSError:
        return []
    return doc["data"]["result"] if doc.get("status") == "success" else []


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=5) as resp:
            return resp.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def prometheus_server(tmp_path, target: int, rules, scrape: str = "1s"):
    """A real Prometheus on a free port of 127.0.0.1 scraping ``target`` with ``rules``; yields
    its port once it answers, and stops it. The port is found free, then handed to Prometheus:
    another process may bind it in between, and Prometheus then exits at once (address in use),
    so it is started again on another port (up to 5 tries)."""
    config = tmp_path / "prometheus.yml"
    config.write_text(
        f"global: {{scrape_interval: {scrape}, evaluation_interval: 1s}}\n"
        f"rule_files: [{json.dumps(str(rules))}]\n"
        "scrape_configs:\n"
        "  - job_name: streameval\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{target}']}}]\n")
    for _ in range(5):
        port = free_port()
        prom = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if wait_for(lambda prom=prom, port=port: prom.poll() is not None or ready(port),
                    "Prometheus to start", timeout=90) and prom.poll() is None:
            break
    else:
        pytest.fail(f"Prometheus exited at once on 5 free ports (status {prom.returncode})")
    try:
        yield port
    finally:
        prom.terminate()
        try:
            prom.wait(timeout=30)
        except subprocess.TimeoutExpired:
            prom.kill()


def served_port(watch) -> int:
    line = watch.stderr.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", line)
    assert match, line
    return int(match.group(1))


@pytest.mark.skipif(PROMTOOL is None, reason="no promtool binary (apt-get install prometheus)")
def test_promtool_fires_the_drop_alert_on_the_counter_when_the_flag_falls_between_scrapes(
        tmp_path):
    """A scripted series (tests/promtool/drop-rules-test.yml): a drop flagged between two scrapes,
    the flag 0 at every scrape, the counter 0 then 1: the shipped alert fires, then clears; and
    the interval rule fires once the band's upper end stays below the reference."""
    rules = tmp_path / "streameval-alerts.yml"
    rules.write_text(run("alerts").stdout)
    script = pathlib.Path(__file__).parent / "promtool" / "drop-rules-test.yml"
    test = tmp_path / "test.yml"
    test.write_text(script.read_text().replace("RULES", str(rules)))
    check = subprocess.run([PROMTOOL, "test", "rules", str(test)], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS" in check.stdout


@pytest.mark.slow
@needs_prometheus
def test_a_real_prometheus_fires_the_drop_alert_for_a_flag_shorter_than_the_scrape_interval(
        tmp_path):
    """watch --follow: a steady stream, then a collapse and a recovery long enough to clear the
    flag, read by watch as one piece; Prometheus, scraping every 3 s, never sees the flag at 1,
    yet the counter-based alert fires, and what broke is exported.

    Why the flag is never 1 at a scrape, whatever the timing: a scrape reads the last snapshot
    published, and watch publishes only between the pieces its reader hands over (at the end of
    the file, and every ``CHUNK`` = 512 rows). The drop is flagged at row 610 and stays flagged
    for the next 100 rows (the window), up to row 709. The appended rows are written while watch
    is stopped (SIGSTOP, seen stopped by ``waitpid``), so its reader finds all 700 of them at
    once: its pieces end at rows 1112 and 1300, both long after the flag fell. (Written while
    it runs, the append could be seen in parts -- a file's new bytes become visible a page at a
    time -- and a piece ending within rows 610-709 would publish the flag at 1.)"""
    data = tmp_path / "live.csv"
    steady = [(f"e{i % 3}", f"c{i % 3}", 1) for i in range(600)]
    data.write_text("truth,guess,mult\n" + rows_text(steady))
    rules = tmp_path / "alerts.yml"
    rules.write_text(run("alerts").stdout)
    watch = start(data, *WATCH, "--follow", "--window", 100, "--drop-block", 10,
                  "--prometheus-port", 0, "--interval", 0.2)
    try:
        target = served_port(watch)
        with prometheus_server(tmp_path, target, rules, scrape="3s") as port:
            wait_for(lambda: query(port, "streameval_rows_total == 600"),
                     "Prometheus to scrape the steady rows", timeout=90)
            collapse = [(f"e{i % 3}", "all", 1) for i in range(100)]
            with paused(watch), data.open("a") as f:
                f.write(rows_text(collapse + steady))
            wait_for(lambda: query(port, "streameval_rows_total == 1300"),
                     "Prometheus to scrape the rest", timeout=90)
            (drops,) = query(port, "streameval_drops_total")
            assert float(drops["value"][1]) >= 1
            (flag,) = query(port, "max_over_time(streameval_drop[1h])")
            assert float(flag["value"][1]) == 0  # the flag was never 1 at a scrape
            firing = wait_for(lambda: query(
                port, 'ALERTS{alertname="StreamevalQualityDrop", alertstate="firing"}'),
                "the drop alert to fire", timeout=60)
            assert firing[0]["metric"]["severity"] == "warning"
            (age,) = query(port, "time() - streameval_last_drop_timestamp_seconds")
            assert 0 <= float(age["value"][1]) < 600
            (merges,) = query(port, "streameval_merges")  # the window is steady again
            assert float(merges["value"][1]) == 0
            # the interval rule's series: the band over the window's blocks (steady again: all
            # blocks 1.0) and the reference the detector took after the drop
            band = {r["metric"]["bound"]: float(r["value"][1])
                    for r in query(port, "streameval_drop_interval")}
            assert band == {"value": 1.0, "low": 1.0, "high": 1.0}
            (ref,) = query(port, "streameval_drop_reference")
            assert 0 <= float(ref["value"][1]) <= 1
    finally:
        code, _, stderr = finish(watch)
    assert code == 0, stderr


@pytest.mark.skipif(PROMTOOL is None, reason="no promtool binary (apt-get install prometheus)")
def test_promtool_accepts_the_shipped_alert_rules(tmp_path):
    rules = tmp_path / "streameval-alerts.yml"
    r = run("alerts")
    assert r.returncode == 0, r.stderr
    rules.write_text(r.stdout)
    check = subprocess.run([PROMTOOL, "check", "rules", str(rules)], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS: 7 rules found" in check.stdout


def test_the_grafana_dashboard_queries_the_series_watch_serves():
    r = run("grafana")
    assert r.returncode == 0, r.stderr
    dash = json.loads(r.stdout)
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    served = {"streameval_metric", "streameval_rows_total", "streameval_elements_total",
              "streameval_rows_skipped_total", "streameval_last_update_timestamp_seconds",
              "streameval_drop", "streameval_drops_total", "streameval_estimate_stderr",
              "streameval_estimate_low", "streameval_estimate_high",
              "streameval_labelled_share"}
    used = {name for e in exprs for name in re.findall(r"streameval_[a-z_]+", e)}
    assert used == served


@pytest.mark.slow
@needs_prometheus
def test_a_real_prometheus_scrapes_watch_and_loads_the_rules(tmp_path):
    rows = sample(n=500, seed=11)
    data = tmp_path / "live.csv"
    data.write_text("truth,guess,mult\n" + rows_text(rows))
    rules = tmp_path / "alerts.yml"
    rules.write_text(run("alerts").stdout)
    watch = start(data, *WATCH, "--follow", "--window", 100, "--prometheus-port", 0,
                  "--label", "stream=test-a", "--label", "team=ml", "--drop-block", 25)
    stack = contextlib.ExitStack()
    try:
        target = served_port(watch)
        port = stack.enter_context(prometheus_server(tmp_path, target, rules))
        found = wait_for(lambda: query(port, 'streameval_rows_total{job="streameval"} == 500'),
                         "Prometheus to scrape 500 rows", timeout=90)
        series = found[0]["metric"]
        assert (series["stream"], series["team"], series["instance"]) == (
            "test-a", "ml", f"127.0.0.1:{target}")
        want_all, want_window = expected(rows), expected(rows[-100:])
        for name in ("ELM", "AdjustedRand", "NormalizedMutualInfo"):
            for scope, want in (("all", want_all), ("window", want_window)):
                (hit,) = query(port, f'streameval_metric{{metric="{name}", scope="{scope}"}}')
                # Prometheus stores the float and answers with the shortest decimal that parses
                # back to it: the bound is streameval's own rounding (contingency_rounding)
                assert within(float(hit["value"][1]), want[name]), (name, scope, hit, want[name])
        (elements,) = query(port, "streameval_elements_total")
        assert float(elements["value"][1]) == sum(w for *_, w in rows)
        (skipped,) = query(port, "streameval_rows_skipped_total")
        assert float(skipped["value"][1]) == 0
        (drop,) = query(port, "streameval_drop")
        assert float(drop["value"][1]) in (0.0, 1.0)
        (age,) = query(port, "time() - streameval_last_update_timestamp_seconds")
        assert 0 <= float(age["value"][1]) < 600
        meta = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/metadata",
                                                timeout=5))["data"]
        kinds = {name: m[0]["type"] for name, m in meta.items() if name.startswith("streameval_")}
        for name in ("rows", "elements", "rows_skipped", "drops"):  # counters as counters
            assert kinds.get(f"streameval_{name}_total", kinds.get(f"streameval_{name}")) == \
                "counter", kinds
        assert kinds["streameval_metric"] == kinds["streameval_drop"] == "gauge"
        groups = wait_for(lambda: json.load(urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/v1/rules", timeout=5))["data"]["groups"],
            "the rules to load")
        assert {r["name"] for g in groups for r in g["rules"]} >= {
            "StreamevalQualityDrop", "StreamevalWindowIntervalBelowReference", "StreamevalStalled",
            "StreamevalDown"}
        assert all(r["health"] != "err" for g in groups for r in g["rules"])
    finally:
        stack.close()
        code, _, stderr = finish(watch)
    assert code == 0, stderr


@pytest.mark.slow
@needs_prometheus
def test_a_real_prometheus_scrapes_the_estimates_of_a_labelled_sample(tmp_path):
    """``watch --sample uniform`` on a file whose truth field is empty for unlabelled rows: every
    estimate, its standard error and interval bounds, and the labelled share, read back through a
    real Prometheus; the interval alert rule loads."""
    import streameval as se

    rows = sample(n=400, seed=5)
    sampled = {t for t, _, _ in rows[::7]}
    labelled = [(t if t in sampled else "", p, w) for t, p, w in rows]
    data = tmp_path / "live.csv"
    data.write_text("truth,guess,mult\n" + rows_text(labelled))
    est = se.SampleEstimator(design="uniform")
    for t, p, w in labelled:
        est.update(t or None, p, w)
    want = est.get()
    rules = tmp_path / "alerts.yml"
    rules.write_text(run("alerts").stdout)
    watch = start(data, *WATCH, "--follow", "--sample", "uniform", "--prometheus-port", 0)
    try:
        with prometheus_server(tmp_path, served_port(watch), rules) as port:
            wait_for(lambda: query(port, 'streameval_rows_total{job="streameval"} == 400'),
                     "Prometheus to scrape 400 rows", timeout=90)
            for name in ("pairwise_precision", "bcubed_recall", "entity_bcubed_precision"):
                e = want[name]
                (v,) = query(port, f'streameval_metric{{metric="{name}", scope="all"}}')
                # the same estimator over the same rows in the same order, exposed as repr(float)
                # and stored and answered by Prometheus as the shortest round-trip decimal
                assert float(v["value"][1]) == e.value
                for field, expect in (("stderr", e.stderr), ("low", e.low), ("high", e.high)):
                    (hit,) = query(port, f'streameval_estimate_{field}{{metric="{name}"}}')
                    assert float(hit["value"][1]) == expect, (name, field)
            (share,) = query(port, "streameval_labelled_share")
            assert float(share["value"][1]) == est.labelled_share
            groups = wait_for(lambda: json.load(urllib.request.urlopen(
                f"http://127.0.0.1:{port}/api/v1/rules", timeout=5))["data"]["groups"],
                "the rules to load")
            rule = next(r for g in groups for r in g["rules"]
                        if r["name"] == "StreamevalSampleEstimateLow")
            assert rule["health"] != "err" and "streameval_estimate_high" in rule["query"]
    finally:
        code, _, stderr = finish(watch)
    assert code == 0, stderr
