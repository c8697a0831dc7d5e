"""MkDocs hooks for the streameval site (named under ``hooks:`` in ``mkdocs.yml``).

1. The API reference is generated, so it cannot fall behind the code. Every name in
   ``streameval.__all__`` is resolved statically (griffe, no import) to the module that defines it;
   each such module gets a page ``api/<module>.md`` holding one mkdocstrings ``::: module`` block
   (the module's own ``__all__`` picks what it shows), and ``api/index.md`` lists every public name
   with a link. The pages go under the nav entry ``API reference``. A new public name, or a new
   module, appears with no edit here.
2. Benchmarks: the nav entry ``Benchmarks`` lists ``benchmarks.md`` then every
   ``docs/benchmarks/*.md`` that exists (``core.md`` first), and the marker
   ``<!-- benchmark-pages -->`` in ``benchmarks.md`` becomes a list of links to them. A page's
   chart, ``docs/benchmarks/img/<page>.png`` (drawn from its tables by ``benchmarks/charts.py``),
   is shown above its first table.
3. Formulas render offline: MathJax 3 is copied from the ``django-static-mathjax`` wheel (a plain
   copy of MathJax's ``es5`` build, no Django needed) into ``site/assets/mathjax/``.
4. Code samples written as interactive sessions (``>>>``) are highlighted as ``pycon``, and
   ``docs/stylesheets/extra.css`` hides their prompts and output while the copy button copies, so
   what lands on the clipboard runs as it is.
5. Docstrings are written for doctest and plain reading; :class:`MarkdownDocstrings` (a griffe
   extension named in ``mkdocs.yml``) shows them well: ``>>>`` examples become code blocks,
   prose after a numpy ``Parameters`` list moves above it
   (numpy sections run to the next section header); RST simple tables become Markdown tables;
   a numpy "type" written as prose moves into its description; Sphinx roles left in docstrings
   (``:class:`~streameval.Contingency```) become cross-references.
"""

from __future__ import annotations

import html
import importlib.util
import re
import shutil
from pathlib import Path

import griffe
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

PACKAGE = "streameval"
API_SECTION = "API reference"
BENCH_SECTION = "Benchmarks"
BENCH_MARKER = "<!-- benchmark-pages -->"
# What of MathJax's es5 build the site needs: the TeX-to-HTML bundle, its fonts, the TeX
# extensions it loads on demand, and the menu with its accessibility parts.
MATHJAX_PARTS = ("tex-chtml.js", "output/chtml", "input/tex", "ui", "a11y", "sre")

_api_pages: dict = {}  # src_uri -> markdown, filled in on_config
_bench_pages: list = []
_mathjax: Path | None = None
_canonical: dict = {}  # "streameval.ELM" -> "streameval.metrics.element.ELM"


def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def _api(root: Path) -> dict:
    """``{src_uri: markdown}`` for the API reference of ``streameval.__all__``."""
    pkg = griffe.load(PACKAGE, search_paths=[str(root)], resolve_aliases=True)
    by_module: dict = {}  # module path -> [(public name, object)]
    packages = {PACKAGE}  # modules that are a package's __init__
    for name in pkg.exports or ():
        obj = pkg[name]
        target = obj.final_target if obj.is_alias else obj
        module = target if target.is_module else target.module
        by_module.setdefault(module.path, []).append((name, target))
        if module.is_init_module:
            packages.add(module.path)
        _canonical[f"{PACKAGE}.{name}"] = target.path
    # Modules that hold classes and functions first (in __all__ order), exported namespaces last.
    order = sorted(by_module, key=lambda m: any(t.path == m for _, t in by_module[m]))
    pages, rows = {}, []
    for mod in order:
        short = mod.removeprefix(PACKAGE + ".") if mod != PACKAGE else PACKAGE
        uri = f"api/{short}.md"
        options = ""
        if mod in packages and not any(t.path == mod for _, t in by_module[mod]):
            # names defined in a package's __init__ itself: show only those, not its re-exports
            names = ", ".join(n for n, _ in by_module[mod])
            options = f"\n      members: [{names}]"
        pages[uri] = (
            f"::: {mod}\n    options:\n      show_root_heading: true\n      heading_level: 1"
            f"{options}\n"
        )
        for name, target in by_module[mod]:
            doc = target.docstring.value.strip().splitlines()[0] if target.docstring else ""
            rows.append(
                f"| [`{name}`]({short}.md#{target.path}) | {target.kind.value} | [`{short}`]({short}.md) "
                f"| {doc.replace('|', '&#124;')} |"
            )
    pages["api/index.md"] = (
        "# API reference\n\n"
        f"Every public name of `{PACKAGE}` (its `__all__`), the module that defines it, and the "
        "first line of its docstring. Each module page shows the module's docstring (the "
        "formulas and costs of its family) and everything it exports. These pages are generated "
        "from the code when the site is built.\n\n"
        "| name | kind | module | summary |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )
    return pages


def _set_section(nav, title: str, entries: list) -> None:
    for item in nav:
        if isinstance(item, dict) and title in item:
            item[title] = entries
            return
        if isinstance(item, dict):
            for value in item.values():
                if isinstance(value, list):
                    _set_section(value, title, entries)


def on_config(config):
    global _api_pages, _bench_pages, _mathjax
    _mathjax = _mathjax_dir()  # fail early, before any page is built
    root = _root(config)
    _api_pages = _api(root)
    api_nav = [{"Overview": "api/index.md"}] + [
        {uri[4:-3]: uri} for uri in _api_pages if uri != "api/index.md"
    ]
    bench_dir = Path(config.docs_dir) / "benchmarks"
    found = sorted(bench_dir.glob("*.md"), key=lambda p: (p.stem != "core", p.stem))
    _bench_pages = [f"benchmarks/{p.name}" for p in found]
    bench_nav = [{"Overview": "benchmarks.md"}] + _bench_pages  # titled by their own headings
    if config.nav is not None:
        _set_section(config.nav, API_SECTION, api_nav)
        _set_section(config.nav, BENCH_SECTION, bench_nav)
    return config


def on_files(files, config):
    for uri, text in _api_pages.items():
        files.append(File.generated(config, uri, content=text))
    return files


_PYTHON_SESSION = re.compile(r"^(\s*)```(?:python|py)\s*\n(?=\s*>>> )", re.M)


def on_page_markdown(markdown, page, config, files):
    # a Python block written as an interactive session is highlighted as one (``pycon``): its
    # prompts and output are then marked (.gp, .go), and the copy button leaves them out
    markdown = _PYTHON_SESSION.sub(lambda m: f"{m.group(1)}```pycon\n", markdown)
    uri = page.file.src_uri
    chart = Path(config.docs_dir) / "benchmarks" / "img" / f"{Path(uri).stem}.png"
    if uri.startswith("benchmarks/") and chart.is_file() and "](img/" not in markdown:
        # the chart drawn from this page's results (benchmarks/charts.py): after the introduction,
        # before the first section or table, as an overview of the tables that follow
        lines = markdown.split("\n")
        first = next((k for k, line in enumerate(lines) if line.startswith(("|", "## "))), len(lines))
        image = [f"![Chart of the results tabled on this page](img/{chart.name}){{ .bench-chart }}", "",
                 "*The chart is drawn from the tables below by `benchmarks/charts.py`.*", ""]
        markdown = "\n".join([*lines[:first], *image, *lines[first:]])
    if LAYERS_MARKER in markdown:
        # one line inside a <div>: a raw HTML block that Markdown leaves alone (``__main__`` would
        # otherwise turn bold and break the SVG)
        drawing = layers_svg(layer_rows(markdown)).replace("\n", "")
        markdown = markdown.replace(LAYERS_MARKER, f'<div class="layers">{drawing}</div>')
    if uri == "benchmarks.md" and BENCH_MARKER in markdown:
        links = [f"- [{Path(p).stem}]({p})" for p in _bench_pages] or [
            "- (no benchmark tables on this build yet)"
        ]
        markdown = markdown.replace(BENCH_MARKER, "\n".join(links))
    return markdown


_ROLE = re.compile(r":(?:class|meth|func|attr|mod|exc|data|obj):<code>(~?)([\w.]+)</code>")


def _role(m: re.Match) -> str:
    tilde, ident = m.groups()
    shown = ident.rsplit(".", 1)[-1] if tilde else ident
    target = html.escape(_canonical.get(ident, ident))
    return f'<autoref identifier="{target}" optional><code>{shown}</code></autoref>'


_DOTTED_CODE = re.compile(
    r'(<code>|<span class="doc doc-object-name[^"]*">)([A-Za-z_]\w*(?:\.\w+)+)(</code>|</span>)'
)


def on_page_content(content, page, config, files):
    content = _ROLE.sub(_role, content)
    # a dotted name may wrap after a dot, never inside a word (see docs/stylesheets/extra.css)
    return _DOTTED_CODE.sub(lambda m: m.group(1) + m.group(2).replace(".", ".<wbr>") + m.group(3), content)


def _mathjax_dir() -> Path:
    spec = importlib.util.find_spec("mathjax")
    for base in (spec.submodule_search_locations or []) if spec else []:
        es5 = Path(base) / "static" / "mathjax" / "es5"
        if (es5 / "tex-chtml.js").is_file():
            return es5
    raise PluginError(
        "MathJax not found: install the docs extra (pip install -e '.[docs]'), which brings the "
        "django-static-mathjax wheel that ships MathJax's es5 build"
    )


def on_post_build(config):
    src = _mathjax or _mathjax_dir()
    dest = Path(config.site_dir) / "assets" / "mathjax"
    for part in MATHJAX_PARTS:
        if (src / part).is_dir():
            shutil.copytree(src / part, dest / part, dirs_exist_ok=True)
        else:
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / part, dest / part)


# ---------------------------------------------------------------------------- docstrings
_SECTION = re.compile(r"^(Parameters|Returns|Raises|Attributes|Yields|Examples|Notes)\s*$")
_DASHES = re.compile(r"^-{3,}\s*$")
_ITEM = re.compile(r"^\*{0,2}\w+(\s*,\s*\*{0,2}\w+)*( : .*)?$")  # "name : type" or "name"
_RST_BORDER = re.compile(r"^\s*=+( +=+)+\s*$")


def _prose_above_sections(lines: list) -> list:
    """Move paragraphs that follow a numpy section's items (and are not items) above the section."""
    for k in range(len(lines) - 1):
        if _SECTION.match(lines[k]) and _DASHES.match(lines[k + 1]):
            end = k + 2
            while end < len(lines):
                line = lines[end]
                if end + 1 < len(lines) and _DASHES.match(lines[end + 1]):
                    break  # the next section
                if (
                    lines[end - 1].strip() == "" and line.strip() and not line.startswith(" ")
                    and not _ITEM.match(line)
                ):
                        moved = lines[end:]
                        return _prose_above_sections(lines[:k] + moved + [""] + lines[k:end])
                end += 1
    return lines


def _fence(lines: list) -> list:
    """Wrap ``>>>`` examples and RST simple tables in code fences."""
    out, k, in_fence = [], 0, False
    while k < len(lines):
        line = lines[k]
        indent = line[: len(line) - len(line.lstrip())]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.lstrip().startswith(">>>"):
            end = k
            while end < len(lines) and lines[end].strip():
                end += 1
            out += [indent + "```pycon", *lines[k:end], indent + "```"]
            k = end
            continue
        elif not in_fence and _RST_BORDER.match(line):
            end, borders = k + 1, 1
            while end < len(lines) and borders < 3:
                borders += bool(_RST_BORDER.match(lines[end]))
                end += 1
            table = _rst_table(lines[k:end])
            out += [indent + row for row in table] if table else [
                indent + "```text", *lines[k:end], indent + "```"]
            k = end
            continue
        out.append(line)
        k += 1
    return out


def _rst_table(lines: list) -> list:
    """An RST simple table (three ``===`` borders) as a Markdown table, or ``[]`` if it is not one.

    Columns are cut where the first border's ``=`` runs start; a row whose first column is blank
    continues the row above. Cells keep their inline markup (````x```` renders as code); a ``|``
    in a cell is escaped.
    """
    border = lines[0].strip("\n")
    starts = [m.start() for m in re.finditer(r"=+", border)]
    if len(starts) < 2 or sum(bool(_RST_BORDER.match(x)) for x in lines) != 3:
        return []
    indent = len(border) - len(border.lstrip())
    header, body, part = [], [], 0
    for line in lines[1:]:
        if _RST_BORDER.match(line):
            part += 1
            continue
        if not line.strip():
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None])]
        rows = header if part == 0 else body
        if rows and not line[indent:starts[1]].strip():  # a continuation line
            rows[-1] = [f"{x} {c}".strip() for x, c in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    if not header:
        return []

    def row(cells):
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    head = [row([" ".join(h).strip() for h in zip(*header)])] if len(header) > 1 else [row(header[0])]
    return ["", *head, "|" + "---|" * len(starts), *map(row, body), ""]


_TYPED_ITEM = re.compile(r"^(\s*)(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*) : (.+)$")


def _types_to_descriptions(lines: list) -> list:
    """In numpy sections, a "type" written as prose (inline markup, or more than three words) moves
    to the start of its item's description, where it renders as Markdown instead of raw text in the
    type column (the column then shows the signature's annotation)."""
    out, section = [], None
    for k, line in enumerate(lines):
        if k + 1 < len(lines) and _SECTION.match(line) and _DASHES.match(lines[k + 1]):
            section = line.strip()
        m = _TYPED_ITEM.match(line) if section in ("Parameters", "Attributes", "Raises") else None
        if m and ("``" in m.group(3) or ":`" in m.group(3) or len(m.group(3).split()) > 3):
            indent, name, prose = m.groups()
            nxt = lines[k + 1] if k + 1 < len(lines) else ""
            deeper = len(nxt) - len(nxt.lstrip()) > len(indent) and nxt.strip()
            sub = nxt[: len(nxt) - len(nxt.lstrip())] if deeper else indent + "    "
            if deeper and nxt.lstrip()[:1].isupper() and prose[-1] not in ".,;:":
                prose += "."  # "``"raise"`` or ``"skip"``" then "What to do ...": two sentences
            out += [indent + name, sub + prose]  # the prose runs on into the description
            continue
        out.append(line)
    return out


def markdown_docstring(text: str) -> str:
    """A docstring written for doctest and plain reading, as Markdown for mkdocstrings."""
    lines = _types_to_descriptions(_prose_above_sections(text.split("\n")))
    return "\n".join(_fence(lines))


class MarkdownDocstrings(griffe.Extension):
    """Griffe extension: rewrite every docstring with :func:`markdown_docstring` as it loads."""

    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)


# --------------------------------------------------------------------------- the layers drawing
LAYERS_MARKER = "<!-- layers-drawing -->"
_LAYER_ROW = re.compile(r"^\| (\d+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|\s*$")


def layer_rows(markdown: str) -> list:
    """``[(number, name, [module, ...], rule)]`` from the architecture page's layer table, top
    layer first (the table ``tests/test_structure.py`` checks the imports against)."""
    rows = []
    for line in markdown.splitlines():
        m = _LAYER_ROW.match(line)
        if m:
            modules = re.findall(r"`([^`]+)`", m.group(3))
            rows.append((int(m.group(1)), m.group(2).strip(), modules, m.group(4).strip()))
    return rows


def layers_svg(rows: list) -> str:
    """An SVG drawing of the layers: one band a layer, top layer first, its modules as boxes, and
    the one direction imports may take (down)."""
    from html import escape

    width, band, gap, left = 880, 46, 10, 150
    height = len(rows) * (band + gap) + gap
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width + 14} {height}" '
             f'role="img" aria-label="The layers of streameval" class="layers-drawing" '
             f'style="max-width:100%;font-family:sans-serif;font-size:13px">']
    for k, (number, name, modules, _rule) in enumerate(rows):
        y = gap + k * (band + gap)
        hue = 210 - 22 * number
        parts.append(f'<rect x="4" y="{y}" width="{width - 40}" height="{band}" rx="8" '
                     f'fill="hsl({hue},55%,92%)" stroke="hsl({hue},45%,55%)"/>')
        parts.append(f'<text x="14" y="{y + band / 2 + 5}" font-weight="bold" '
                     f'fill="hsl({hue},50%,25%)">{number} {escape(name)}</text>')
        x = left
        for mod in modules:
            w = 14 + 8.2 * len(mod)
            parts.append(f'<rect x="{x}" y="{y + 10}" width="{w}" height="{band - 20}" rx="4" '
                         f'fill="white" stroke="hsl({hue},35%,60%)"/>')
            parts.append(f'<text x="{x + 6}" y="{y + band / 2 + 5}" font-family="monospace" '
                         f'fill="#222">{escape(mod)}</text>')
            x += w + 8
    parts.append(f'<line x1="{width - 22}" y1="{gap + 6}" x2="{width - 22}" y2="{height - gap - 6}" '
                 f'stroke="#555" stroke-width="2"/>')
    parts.append(f'<path d="M{width - 28},{height - gap - 14} L{width - 22},{height - gap - 2} '
                 f'L{width - 16},{height - gap - 14} Z" fill="#555"/>')
    parts.append(f'<text x="{width - 18}" y="{height / 2}" fill="#555" font-size="12" '
                 f'transform="rotate(90 {width - 18} {height / 2})" text-anchor="middle">'
                 f'imports point down</text>')
    parts.append("</svg>")
    return "\n".join(parts)
