"""The examples of docs/opacus.md, docs/dp_accounting.md and the README's Opacus snippet run.

Each page's ``python`` blocks run in order in one namespace, as a reader would paste them; the
asserts inside them are the page's claims.  A block whose first line is ``# requires ...`` needs
a package the tests do not install (JAX Privacy) and is only checked to be valid Python.
"""
from __future__ import annotations

import ast
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent.parent / "docs"
README = DOCS.parent / "README.md"

pytestmark = [
    pytest.mark.skipif(not DOCS.exists(), reason="docs/ not next to tests/ (wheel test from test-sources)"),
    pytest.mark.filterwarnings("ignore:Secure RNG turned off:UserWarning"),
    pytest.mark.filterwarnings("ignore:Full backward hook is firing:UserWarning"),
    pytest.mark.filterwarnings("ignore:Optimal order is the largest alpha:UserWarning"),
]


def _blocks(page: str) -> list[str]:
    path = README if page == "README.md" else DOCS / page
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), flags=re.S | re.M)


def _run(page: str) -> int:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    for code in _blocks(page):
        tree = ast.parse(code)   # every block is valid Python
        if code.startswith("# requires"):
            continue
        exec(compile(tree, f"{page} block {ran}", "exec"), namespace)  # noqa: S102
        ran += 1
    return ran


def test_opacus_page_examples_run(capsys):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("opacus", reason="opacus is not installed")
    torch.set_num_threads(1)  # tiny models: threads only contend for the cores
    assert _run("opacus.md") >= 6


def test_dp_accounting_page_examples_run(capsys):
    pytest.importorskip("dp_accounting", reason="dp-accounting is not installed")
    assert _run("dp_accounting.md") >= 4
    assert sum(b.startswith("# requires JAX Privacy") for b in _blocks("dp_accounting.md")) == 1


@pytest.mark.skipif(not README.exists(), reason="README.md not next to tests/")
def test_readme_opacus_snippet_runs(capsys):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("opacus", reason="opacus is not installed")
    torch.set_num_threads(1)
    snippets = [b for b in _blocks("README.md") if "dpbounds.integrations.opacus" in b]
    assert len(snippets) == 1
    namespace: dict[str, object] = {"__name__": "__readme__"}
    exec(compile(snippets[0], "README.md Opacus snippet", "exec"), namespace)  # noqa: S102
    engine = namespace["engine"]
    assert engine.accountant.history == [(1.1, 1 / 23, 23)]
    assert 0 < engine.get_epsilon(1e-5) == engine.accountant.get_epsilon_bracket(1e-5).upper
