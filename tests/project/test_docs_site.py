"""The documentation site: it builds with warnings as errors, its examples run and print what
the pages say, it documents every public name, and a real browser renders it.

The site is ``docs/`` (Sphinx + MyST); build it with
``python -m sphinx -W --keep-going -b html docs docs/_build/html``.  The build and the browser
test are skipped when Sphinx or Chromium is not installed (``pip install ".[docs]"``;
``apt-get install chromium-headless-shell``); the doctests only need the package.
"""
from __future__ import annotations

import doctest
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

import dpbounds

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

pytestmark = pytest.mark.skipif(not (DOCS / "conf.py").exists(),
                                reason="docs/ not next to tests/ (wheel test from test-sources)")

# The pages other documents cite by file name: renaming one breaks those citations.
PAGES = ["index", "theorem31", "epochs", "tradeoff", "rdp", "accountant", "which-accountant",
         "cli", "api", "sampling", "accuracy", "composition", "planner", "sweep", "figures", "contract"]
# Pages with runnable ``>>>`` examples, and the least number each must run (a page whose
# examples silently vanish fails here).
DOCTEST_PAGES = {"index.md": 4, "theorem31.md": 10, "epochs.md": 4, "tradeoff.md": 8, "rdp.md": 8,
                 "accountant.md": 4, "which-accountant.md": 8, "composition.md": 8,
                 "planner.md": 10, "sweep.md": 8,
                 "outer.md": 3}


def _markdown_doctest(page: str) -> doctest.TestResults:
    path = DOCS / page
    return doctest.testfile(str(path), module_relative=False, optionflags=FLAGS, verbose=False,
                            globs={"__name__": "__docs__"})


@pytest.mark.parametrize("page", sorted(DOCTEST_PAGES))
def test_page_examples_run(page):
    result = _markdown_doctest(page)
    assert result.failed == 0
    assert result.attempted >= DOCTEST_PAGES[page]


def test_every_markdown_page_with_examples_is_doctested():
    with_examples = {p.name for p in DOCS.glob("*.md") if re.search(r"^>>> ", p.read_text(), flags=re.M)}
    assert with_examples <= set(DOCTEST_PAGES)


# Pages the documentation build writes (docs/_ext/dpbounds_docs.py), with their generator.
GENERATED_PAGES = {"contract": ROOT / "tools" / "gen_contract.py"}


def test_page_files_exist():
    for page in PAGES:
        if page in GENERATED_PAGES:
            assert GENERATED_PAGES[page].exists(), page
            continue
        assert (DOCS / f"{page}.md").exists() or (DOCS / f"{page}.rst").exists(), page


def test_toctree_lists_every_page():
    index = (DOCS / "index.md").read_text()
    toctree = re.search(r"```\{toctree\}(.*?)```", index, flags=re.S)
    assert toctree is not None
    listed = {line.strip() for line in toctree.group(1).splitlines() if line.strip() and ":" not in line}
    assert set(PAGES) - {"index"} <= listed


def test_cli_page_shows_every_command():
    import argparse

    from dpbounds.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    page = (DOCS / "cli.md").read_text()
    shown = set(re.findall(r"```\{dpbounds-cli-help\} (\S+)", page))
    assert shown == set(commands)


def _documented_names() -> set[str]:
    """Every ``dpbounds...`` name the API pages document (auto* and dpbounds-ufunc entries)."""
    names: set[str] = set()
    for page in sorted((DOCS / "api").glob("*.rst")):
        module = "dpbounds"
        for line in page.read_text().splitlines():
            m = re.match(r"\.\. (?:currentmodule|automodule):: (\S+)", line)
            if m and line.startswith(".. currentmodule"):
                module = m.group(1)
            m = re.match(r"\.\. (?:autofunction|autoclass|autoexception|dpbounds-ufunc|data):: (\S+)", line)
            if m:
                name = m.group(1)
                names.add(name if name.startswith("dpbounds.") else f"{module}.{name}")
            m = re.match(r"\.\. (?:automodule):: (\S+)", line)
            if m:
                names.add(m.group(1))
    return names


def test_api_reference_documents_every_public_name():
    import dpbounds.accountant
    import dpbounds.rdp
    import dpbounds.sampling

    documented = _documented_names()
    expected = {f"dpbounds.{n}" for n in dpbounds.__all__ if n not in ("rdp", "sampling", "ufuncs")}
    expected |= {f"dpbounds.rdp.{n}" for n in dpbounds.rdp.__all__}
    expected |= {f"dpbounds.sampling.{n}" for n in dpbounds.sampling.__all__}
    # the accountant subpackage's names are re-exported at the top level; document the rest
    expected |= {f"dpbounds.accountant.{n}" for n in dpbounds.accountant.__all__ if n not in dpbounds.__all__}
    missing = sorted(expected - documented)
    assert not missing, missing
    # the raw kernels: the page generated from the declaration table
    assert ".. dpbounds-ufuncs::" in (DOCS / "api" / "ufuncs.rst").read_text()


def test_no_internal_document_is_cited():
    for page in sorted(DOCS.rglob("*.md")) + sorted(DOCS.rglob("*.rst")):
        if "_build" in page.parts:
            continue
        text = page.read_text()
        assert not re.search(r"\bSPEC\b|\bseed\s*0\d\d\b", text), page


def _sphinx_available() -> bool:
    try:
        import furo  # noqa: F401
        import myst_parser  # noqa: F401
        import numpydoc  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """The site built with warnings as errors into a temporary directory (built once)."""
    if not _sphinx_available():
        pytest.skip("sphinx, myst-parser, numpydoc or furo not installed (pip install '.[docs]')")
    out = tmp_path_factory.mktemp("html")
    doctrees = tmp_path_factory.mktemp("doctrees")
    env = dict(os.environ)
    # document the package the tests import (an installed wheel or the checkout's in-place build)
    env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(dpbounds.__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(doctrees), str(DOCS), str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    seconds = time.perf_counter() - start
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out, seconds


@pytest.mark.slow
def test_site_builds_with_warnings_as_errors(built_site):
    out, seconds = built_site
    for page in PAGES:
        assert (out / f"{page}.html").exists(), page
    api = (out / "api" / "theorem31.html").read_text()
    assert "rounds_required" in api and "validity_at" in api
    ufuncs = (out / "api" / "ufuncs.html").read_text()
    from dpbounds._ufunc_table import UFUNCS

    for spec in UFUNCS:
        if not spec.private:
            assert f"{spec.name}(" in ufuncs, spec.name
    cli = (out / "cli.html").read_text()
    assert "usage: dpbounds dpsgd" in cli
    print(f"site built in {seconds:.1f} s")


def _chromium() -> str | None:
    for name in ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _chromium_run(binary: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--virtual-time-budget=10000", *args],
                          capture_output=True, text=True, timeout=120)


def _visible_text(dom: str) -> str:
    dom = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom))


@pytest.mark.slow
def test_site_renders_in_headless_chromium(built_site, tmp_path):
    binary = _chromium()
    if binary is None:
        pytest.skip("no Chromium binary (apt-get install chromium-headless-shell)")
    out, _ = built_site

    index = _chromium_run(binary, "--dump-dom", (out / "index.html").as_uri())
    assert index.returncode == 0, index.stderr[-2000:]
    text = _visible_text(index.stdout)
    assert "dpbounds computes differential-privacy guarantees for DP-SGD" in text
    for title in ("Trade-off Functions for DP-SGD with Subsampling based on Random Allocation",
                  "Subsampled Rényi Differential Privacy and Analytical Moments Accountant",
                  "Geometry of Sensitivity: Twice Sampling and Hybrid Clipping"):
        assert title in text, title
    assert "Which accountant should I use" in text   # the toctree, rendered by the theme

    theorem = _chromium_run(binary, "--dump-dom", (out / "theorem31.html").as_uri())
    # MathJax ran in the browser: the TeX became rendered math elements
    assert "<mjx-container" in theorem.stdout

    api = _chromium_run(binary, "--dump-dom", (out / "api" / "theorem31.html").as_uri())
    text = _visible_text(api.stdout)
    assert "rounds_required" in text and "delta_bound" in text
    assert "Theorem 3.1" in text and "validity_at" in text

    shot = tmp_path / "index.png"
    proc = _chromium_run(binary, f"--screenshot={shot}", "--window-size=1100,800", (out / "index.html").as_uri())
    assert proc.returncode == 0 and shot.stat().st_size > 10_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# What a reader at a 1100 px window sees: every table and code block fits the content column
# (wide ones wrap, docs/_static/dpbounds.css), and no link text shows raw LaTeX.  Before, the
# table and a code block of "Which accountant" ran under the column's edge, and links to
# "Several epochs" read "composing (0, \delta) guarantees".
_MEASURE = """<script>
window.addEventListener("load", function () { setTimeout(function () {
  var art = document.querySelector("article") || document.body;
  var edge = art.getBoundingClientRect().right, out = [];
  art.querySelectorAll("table, pre").forEach(function (el) {
    // what would need a horizontal scroll: the block itself, or the theme's scroller around it
    // (whose small negative margins, for its shadow, put it a few px past the edge by design)
    var over = el.scrollWidth - el.clientWidth;
    var box = el.parentElement.closest(".table-wrapper, .highlight");
    if (box) { over = Math.max(over, box.scrollWidth - box.clientWidth); }
    else { over = Math.max(over, el.getBoundingClientRect().right - edge); }
    out.push([el.tagName, Math.round(over), el.textContent.slice(0, 50)]);
  });
  var pre = document.createElement("pre"); pre.id = "dpbounds-measure";
  pre.textContent = JSON.stringify({width: window.innerWidth, blocks: out});
  document.body.appendChild(pre);
}, 1000); });
</script>"""

_WIDE_PAGES = ("which-accountant", "cli", "accountant", "sampling", "theorem31", "sweep", "index")


def _link_texts(html: str) -> list[str]:
    texts = []
    for inner in re.findall(r"<a\b[^>]*>(.*?)</a>", html, flags=re.S):
        inner = re.sub(r'<span class="math[^"]*">.*?</span>', " ", inner, flags=re.S)   # typeset math
        texts.append(re.sub(r"<[^>]+>", "", inner))
    return texts


@pytest.mark.slow
def test_site_link_texts_show_no_latex(built_site):
    out, _ = built_site
    for page in sorted(out.rglob("*.html")):
        for text in _link_texts(page.read_text(encoding="utf-8")):
            assert not re.search(r"\\[A-Za-z]+|\$", text), f"{page.relative_to(out)}: link text {text!r}"


@pytest.mark.slow
def test_site_fits_a_1100px_window(built_site, tmp_path):
    import json

    binary = _chromium()
    if binary is None:
        pytest.skip("no Chromium binary (apt-get install chromium-headless-shell)")
    out, _ = built_site
    for name in _WIDE_PAGES:
        page = out / f"{name}.html"
        probe = out / f"_measure_{name}.html"   # beside the page: same relative links to the theme's files
        probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
        proc = _chromium_run(binary, "--window-size=1100,900", "--dump-dom", probe.as_uri())
        m = re.search(r'id="dpbounds-measure">([^<]*)<', proc.stdout)
        assert m, (name, proc.stderr[-1000:])
        data = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                          .replace("&gt;", ">"))
        assert data["width"] == 1100 and data["blocks"], name
        clipped = [b for b in data["blocks"] if b[1] > 1]
        assert not clipped, (name, clipped)
    shot = tmp_path / "which-accountant.png"
    proc = _chromium_run(binary, f"--screenshot={shot}", "--window-size=1100,1600",
                         (out / "which-accountant.html").as_uri())
    assert proc.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
