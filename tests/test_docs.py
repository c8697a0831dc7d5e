"""The documentation site: it builds with ``mkdocs build --strict``, its API reference covers
``streameval.__all__``, its conventions table names real tests, and a real headless Chromium
renders its pages, finds "ELM" with the site's search and shows its formulas, with no request
leaving the machine.

The build tests skip only where MkDocs is not installed; the browser test skips where the
``playwright`` package or Debian's Chromium (``/usr/bin/chromium``) is missing (``.ci/run``
installs Chromium, the ``test`` extra installs the rest).
"""

import ast
import functools
import http.server
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

import streameval

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("STREAMEVAL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
PAGES = {  # page -> a heading it must show
    "": "streameval",
    "architecture/": "Architecture",
    "metrics/": "Metric reference",
    "conventions/": "Edge-case conventions",
    "benchmarks/": "Benchmarks",
    "api/": "API reference",
    "api/metrics.element/": "streameval.metrics.element",
}


def _hooks():
    """``docs_hooks.py`` (the site's MkDocs hooks), loaded from the checkout."""
    pytest.importorskip("mkdocs", reason="MkDocs is not installed (pip install -e '.[docs]')")
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once with ``mkdocs build --strict`` into a temporary directory."""
    pytest.importorskip("mkdocs", reason="MkDocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    run = _build(ROOT, out)
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    return out


def _build(root: Path, out: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", str(out)],
        cwd=root, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip


def _inventory(site: Path) -> set:
    """The object names in the site's ``objects.inv`` (Sphinx inventory, version 2)."""
    raw = (site / "objects.inv").read_bytes()
    body = raw.split(b"\n", 4)[4]
    return {line.split(" ", 1)[0] for line in zlib.decompress(body).decode().splitlines()}


def _path(name: str):
    """Where ``streameval.<name>`` is defined, as mkdocstrings names it (None if unknowable)."""
    obj = getattr(streameval, name)
    if hasattr(obj, "__path__") or type(obj).__name__ == "module":
        return obj.__name__
    if hasattr(obj, "__qualname__") and hasattr(obj, "__module__"):
        return f"{obj.__module__}.{obj.__qualname__}"
    return None


@pytest.mark.slow
def test_mkdocs_build_strict(site):
    for page in PAGES:
        assert (site / page / "index.html").is_file(), page
    assert (site / "assets" / "mathjax" / "tex-chtml.js").is_file()
    assert any((site / "assets" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff"))
    assert (site / "search" / "search_index.json").is_file()
    html = (site / "metrics" / "index.html").read_text()
    assert 'class="arithmatex"' in html and "assets/mathjax/tex-chtml.js" in html
    assert "fonts.googleapis.com" not in html  # the theme's web font is off: nothing external


@pytest.mark.slow
def test_benchmark_pages_listed_when_they_land(site, tmp_path):
    # a copy of the docs with one more benchmark table, as a benchmark script writes it
    for part in ("mkdocs.yml", "docs_hooks.py", "docs", "streameval", "CHANGELOG.md"):
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, tmp_path / part)
    (tmp_path / "docs" / "benchmarks").mkdir(exist_ok=True)
    (tmp_path / "docs" / "benchmarks" / "zeta.md").write_text("# Zeta timings\n\n| a |\n|---|\n| 1 |\n")
    run = _build(tmp_path, tmp_path / "site")
    assert run.returncode == 0, run.stdout + run.stderr
    index = (tmp_path / "site" / "benchmarks" / "index.html").read_text()
    assert 'href="zeta/"' in index and "Zeta timings" in index  # linked, and in the nav
    assert (tmp_path / "site" / "benchmarks" / "zeta" / "index.html").is_file()


@pytest.mark.slow
def test_api_reference_covers_all(site):
    inventory = _inventory(site)
    index = (site / "api" / "index.html").read_text()
    missing = []
    for name in streameval.__all__:
        path = _path(name)
        found = path in inventory if path else any(
            entry.startswith("streameval.") and entry.endswith("." + name) for entry in inventory
        )
        if not found or f"<code>{name}</code>" not in index:
            missing.append(name)
    assert not missing, f"public names missing from the API reference: {missing}"


@pytest.mark.slow
def test_api_pages_follow_all():
    # the generated pages are a function of streameval.__all__: one per defining module
    pages = _hooks()._api(ROOT)
    text = "\n".join(pages.values())
    assert "api/index.md" in pages and "api/contingency.md" in pages
    assert "::: streameval.metrics.element" in pages["api/metrics.element.md"]
    for name in streameval.__all__:
        assert f"[`{name}`]" in pages["api/index.md"], name
    assert text.count(":::") == len(pages) - 1


def test_conventions_table_names_real_tests():
    table = (ROOT / "docs" / "conventions.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| ") and "test_" in line]
    named = [re.search(r"`(test_\w+)`", row).group(1) for row in rows]
    module = ast.parse((ROOT / "tests" / "test_conventions.py").read_text())
    tests = [n.name for n in module.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    assert len(named) == len(set(named)), "a test is named in two rows"
    assert sorted(named) == sorted(tests), "one row per convention test, one test per row"


def test_markdown_docstring():
    convert = _hooks().markdown_docstring
    doc = "Sum.\n\nParameters\n----------\nx : int\n    A number.\n\nCost O(1).\n\n>>> 1 + 1\n2"
    assert convert(doc) == (
        "Sum.\n\nCost O(1).\n\n```pycon\n>>> 1 + 1\n2\n```\n\n"
        "Parameters\n----------\nx : int\n    A number.\n"
    )
    table = "=  =\na  b\n=  =\n1  2\n=  =\n\nafter"  # an RST simple table becomes a Markdown one
    assert convert(table) == "\n| a | b |\n|---|---|\n| 1 | 2 |\n\n\nafter"
    wide = "====  ======\nname  value\n====  ======\nx     ``a|b``\n      more\n====  ======"
    assert convert(wide) == "\n| name | value |\n|---|---|\n| x | ``a\\|b`` more |\n"
    # a numpy "type" written as prose moves into the description, where it renders as Markdown
    doc = "Parameters\n----------\nmode : ``\"a\"`` (default) or ``\"b\"``\n    What to do.\nn : int\n    Count."
    assert convert(doc) == (
        "Parameters\n----------\nmode\n    ``\"a\"`` (default) or ``\"b\"``.\n    What to do.\n"
        "n : int\n    Count."
    )


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(site):
    """The built site over HTTP on 127.0.0.1 (an ephemeral port), for the browser."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.mark.slow
def test_site_in_browser(served, browser):
    outside, errors = [], []
    context = browser.new_context(viewport={"width": 1280, "height": 900})

    def local_only(route):
        url = route.request.url
        if url.startswith((served, "data:", "blob:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", local_only)
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))

    for path, heading in PAGES.items():
        response = page.goto(served + path)
        assert response.status == 200, path
        assert heading in page.locator("article h1").first.inner_text(), path

    # formulas: every arithmatex span is typeset by MathJax, with no TeX error
    page.goto(served + "metrics/")
    page.wait_for_function(
        "document.querySelectorAll('.arithmatex').length > 0 && "
        "document.querySelectorAll('.arithmatex mjx-container').length === "
        "document.querySelectorAll('.arithmatex').length",
        timeout=30_000,
    )
    assert page.locator("mjx-merror").count() == 0
    assert page.locator("mjx-container[display='true']").count() == 2  # the $$ blocks
    if os.environ.get("STREAMEVAL_SHOTS"):  # a directory to keep screenshots in, for a person
        page.screenshot(path=os.environ["STREAMEVAL_SHOTS"] + "/metrics.png")

    # the copy button copies code without the session's prompts and output: Material reads the
    # block's innerText while it is marked [data-md-copying] (extra.css hides .gp and .go then)
    page.goto(served)
    copied = page.evaluate(
        """() => { const code = document.querySelector('.highlight code:has(.gp)');
                   code.setAttribute('data-md-copying', '');
                   const text = code.innerText; code.removeAttribute('data-md-copying');
                   return [text, code.innerText]; }"""
    )
    assert copied[1].lstrip().startswith(">>> import streameval as se")  # shown with prompts
    assert copied[0].lstrip().startswith("import streameval as se")  # copied without
    assert ">>>" not in copied[0] and "..." not in copied[0] and "{'ELM': 1.0" not in copied[0]
    # a dotted module name wraps only at its dots
    page.goto(served + "api/metrics.element/")
    assert "streameval.<wbr>metrics.<wbr>element" in page.content()

    # search: the site's own index, in the browser, finds ELM
    with page.expect_response(lambda r: r.url.endswith("search/search_index.json")):
        page.goto(served)
    box, results = page.locator("input.md-search__input"), page.locator(".md-search-result__item")
    box.click()
    for _ in range(30):  # the search worker may still be indexing: type again until it answers
        box.fill("")
        box.press_sequentially("ELM", delay=20)
        page.wait_for_timeout(1000)
        if results.count():
            break
    assert results.count() >= 3
    assert "ELM" in page.locator(".md-search-result").inner_text()
    if os.environ.get("STREAMEVAL_SHOTS"):
        page.screenshot(path=os.environ["STREAMEVAL_SHOTS"] + "/search.png")

    context.close()
    assert not outside, f"the site asked for outside resources: {outside}"
    assert not errors, f"JavaScript errors: {errors}"


@pytest.mark.slow  # draws every page's chart with matplotlib: out of the quick loop
def test_benchmark_charts_are_drawn_from_the_results(tmp_path):
    # benchmarks/charts.py reads each page's tables back and draws its chart; every page that
    # has results gets one, and the committed PNG is there for the site
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("charts", ROOT / "benchmarks" / "charts.py")
    charts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(charts)
    pages = sorted((ROOT / "docs" / "benchmarks").glob("*.md"))
    assert pages
    for page in pages:
        assert page.stem in charts.CHARTS, f"no chart for {page.name}"
        fig = charts.CHARTS[page.stem](page.read_text())
        drawn = sum(len(ax.lines) + len(ax.patches) for ax in fig.axes)
        charts.plt.close(fig)  # one page's figure at a time (pyplot keeps every open one)
        assert drawn >= 3, page.name
        assert (ROOT / "docs" / "benchmarks" / "img" / f"{page.stem}.png").is_file(), page.name
    # the numbers come from the tables: the core chart's streameval Rand at K=10 is the table's
    core = (ROOT / "docs" / "benchmarks" / "core.md").read_text()
    row = next(r for h, rows in charts.tables(core) if h[0] == "metric" for r in rows if r[0] == "Rand")
    fig = charts.core(core)
    line = next(x for x in fig.axes[0].lines if x.get_label() == "streameval: Rand alone")
    charts.plt.close(fig)
    assert line.get_ydata()[0] == charts.number(row[1])


@pytest.mark.slow
def test_benchmark_pages_show_their_chart(site):
    for png in (ROOT / "docs" / "benchmarks" / "img").glob("*.png"):
        html = (site / "benchmarks" / png.stem / "index.html").read_text()
        assert f'src="../img/{png.name}"' in html and "bench-chart" in html, png.name
        assert (site / "benchmarks" / "img" / png.name).is_file()


def test_readme_and_docs_index_give_the_same_set_up():
    def setup(path):
        text = (ROOT / path).read_text()
        section = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
        return re.findall(r"```\n(.*?)\n```", section, re.S)

    commands = setup("README.md")
    assert commands == setup("docs/index.md")
    assert 'pip install -e ".[test]" && python -m pytest -q' in commands
    run = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]"' in run and "python -m pytest -q" in run  # CI runs the same


@pytest.mark.slow
def test_architecture_page_draws_every_layer_from_its_table(site):
    """The layer drawing is made from the page's own layer table (the one tests/test_structure.py
    checks the imports against), as one SVG that Markdown left intact."""
    rows = _hooks().layer_rows((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    html = (site / "architecture" / "index.html").read_text(encoding="utf-8")
    svg = html[html.index('<div class="layers"><svg'):html.index("</svg></div>")]
    assert len(rows) == 8 and "<strong>" not in svg
    for number, name, modules, _rule in rows:
        assert f">{number} {name}</text>" in svg
        for module in modules:
            assert f">{module}</text>" in svg, module


# every benchmark page
DENSITY_PAGES = sorted(p.stem for p in (ROOT / "docs" / "benchmarks").glob("*.md"))


@pytest.mark.parametrize("name", DENSITY_PAGES)
def test_benchmark_pages_name_their_density_and_give_instruction_counts(name):
    """Each page names its stream's cells per row and gives callgrind instruction counts beside
    its CPU times, or says why counts would mean nothing there."""
    text = (ROOT / "docs" / "benchmarks" / f"{name}.md").read_text()
    assert re.search(r"cells per (row|true)", text), name
    assert re.search(r"instructions? (per|/|ratio|count)|No (CPU times or )?instruction counts|"
                     r"no instruction counts|Instructions", text), name


def test_readme_batch_claim_matches_the_batch_page():
    """The README's ratios to scikit-learn are the batch page's range over the metric functions
    on integer labels (CPU per K, instructions over both K)."""
    page = (ROOT / "docs" / "benchmarks" / "batch.md").read_text()
    table = page.split("## Integer labels")[1].split("##")[0]
    cpu: dict = {}
    instr = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 8 and cells[1].startswith("`") and "contingency" not in cells[1]:
            cpu.setdefault(cells[0], []).append(float(cells[4].rstrip("×")))
            instr.append(float(cells[7].rstrip("×")))
    readme = " ".join((ROOT / "README.md").read_text().split())
    for k, values in cpu.items():
        claim = rf"{min(values):.2f}–{max(values):.2f}×( scikit-learn's CPU time)? at K = {k}"
        assert re.search(claim, readme), (k, min(values), max(values))
    assert f"{min(instr):.2f}–{max(instr):.2f}× its instructions" in readme

