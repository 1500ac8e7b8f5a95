"""Sphinx extension of the dpbounds documentation: pages generated from the package itself.

* ``dpbounds-ufuncs`` -- the table of every compiled ufunc, read from the declaration table
  ``dpbounds._ufunc_table.UFUNCS`` (the same source as the ufuncs, their stubs and
  ``docs/accuracy.md``), one table per documentation group.
* ``dpbounds-cli-help`` -- the ``--help`` text of the ``dpbounds`` command or of one of its
  sub-commands, taken from the real argparse parser at a fixed width of 100 columns.
* ``dpbounds-ufunc NAME`` -- the reference entry of one ufunc (``dpbounds.ndtr`` and friends
  are numpy ufuncs, whose argument names autodoc cannot see), from the declaration table.
* the page ``contract.md`` -- what every public function does with each kind of bad input, and
  the accuracy claims with their published measurements: written into the source directory by
  ``tools/gen_contract.py`` before the sources are read (it runs the probes; not committed).

Generating these at build time means the documentation cannot drift from the code.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]


def _group_titles() -> dict[str, str]:
    """Section titles of the declaration table's groups: the generator's, so both tables agree."""
    spec = importlib.util.spec_from_file_location("_dpbounds_gen_ufuncs", ROOT / "tools" / "gen_ufuncs.py")
    if spec is None or spec.loader is None:
        return {}
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(getattr(module, "_GROUP_TITLES", {}))


HELP_COLUMNS = "100"


def _table(header: list[str], rows: list[list[nodes.Node]], widths: list[int]) -> nodes.table:
    table = nodes.table(classes=["dpbounds-generated"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for w in widths:
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for h in header:
        row += nodes.entry("", nodes.paragraph(text=h))
    head += row
    body = nodes.tbody()
    group += body
    for cells in rows:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += cell if isinstance(cell, nodes.paragraph) else nodes.paragraph("", "", cell)
            row += entry
        body += row
    return table


def _literal(text: str) -> nodes.paragraph:
    return nodes.paragraph("", "", nodes.literal(text=text))


class UfuncTable(SphinxDirective):
    """Every public ufunc of ``dpbounds.ufuncs``, grouped, from the declaration table."""

    has_content = False
    option_spec = {"private": directives.flag}

    def run(self) -> list[nodes.Node]:
        from dpbounds._ufunc_table import UFUNCS

        show_private = "private" in self.options
        out: list[nodes.Node] = []
        titles = _group_titles()
        groups = list(dict.fromkeys(u.group for u in UFUNCS))  # the table's order
        for group in groups:
            specs = [u for u in UFUNCS if u.group == group and (show_private or not u.private)]
            if not specs:
                continue
            title = titles.get(group, group or "Other")
            section = nodes.section(ids=[nodes.make_id(f"ufuncs-{title}")])
            section += nodes.title(text=title)
            rows = []
            for u in specs:
                args = ", ".join(a.name for a in u.args)
                summary = u.doc.strip().splitlines()[0]
                python = u.python or ""
                rows.append([
                    _literal(f"{u.name}({args})"),
                    nodes.paragraph(text=summary),
                    _literal(python) if python else nodes.paragraph(text="-"),
                    nodes.paragraph(text=str(u.nout)),
                ])
            section += _table(["ufunc", "what it computes", "validated wrapper", "outputs"], rows,
                              [30, 50, 25, 8])
            out.append(section)
        return out


@contextlib.contextmanager
def _columns(width: str) -> Iterator[None]:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def cli_help(command: str | None) -> str:
    """The help text ``dpbounds [COMMAND] --help`` prints, at 100 columns."""
    from dpbounds.cli import build_parser

    with _columns(HELP_COLUMNS):
        parser = build_parser()
        if command is None:
            return parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                if command in action.choices:
                    return str(action.choices[command].format_help())
        raise ValueError(f"dpbounds has no command {command!r}")


class CliHelp(SphinxDirective):
    """``dpbounds --help`` or ``dpbounds COMMAND --help``, as the installed parser prints it."""

    has_content = False
    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        command = self.arguments[0] if self.arguments else None
        try:
            text = cli_help(command)
        except ValueError as exc:
            raise self.error(str(exc)) from exc
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def ufunc_rst(name: str, module: str) -> list[str]:
    """A ``py:function`` description of ufunc ``name`` from its entry in the declaration table."""
    from dpbounds._ufunc_table import by_name

    spec = by_name(name)
    args = ", ".join(a.name for a in spec.args)
    lines = [f".. py:function:: {name}({args}, /, out=None, *, where=True)", f"   :module: {module}", ""]
    body = [spec.doc.strip(), "",
            "A numpy ufunc (broadcasting, ``out=``, ``where=``): a value outside its domain "
            "gives NaN, never an error.", "", ":Arguments:"]
    for a in spec.args:
        meaning = f" (NaN means {a.nan_means})" if a.nan_means else ""
        body.append(f"   - ``{a.name}``: {a.constraint.text}{meaning}")
    if spec.accuracy is not None:
        acc = spec.accuracy
        body.append(f":Accuracy: <= {acc.bound:g} {acc.unit} for {acc.regime} (checked by ``{acc.test}``)")
    if spec.python and spec.python != f"{module}.{name}":
        body.append(f":Validated wrapper: :func:`{spec.python}`")
    body.append(f":C function: ``{spec.c_function}``")
    return lines + ["   " + _escape_bars(b) if b else "" for b in body] + [""]


class UfuncEntry(SphinxDirective):
    """The reference entry of one ufunc (autodoc cannot introspect a numpy ufunc's arguments)."""

    required_arguments = 1
    option_spec = {"module": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        module = self.options.get("module", "dpbounds")
        try:
            text = "\n".join(ufunc_rst(self.arguments[0], module))
        except KeyError as exc:
            raise self.error(f"no ufunc {self.arguments[0]!r} in the declaration table") from exc
        return self.parse_text_to_nodes(text)


# |x| in a plain-text docstring is an absolute value, but reStructuredText reads it as a
# substitution reference (and fails: the docstrings define no substitutions).  The pattern is
# docutils' own rule for a substitution reference: a bar followed by non-space ... non-space
# followed by a bar.
_BARS = re.compile(r"(?<![\\|])\|(?=\S)([^|\n]*?\S)\|(?![|\w])")
_INLINE_LITERAL = re.compile(r"(``.+?``)")


def _escape_bars(line: str) -> str:
    parts = _INLINE_LITERAL.split(line)
    return "".join(p if p.startswith("``") else _BARS.sub(r"\\|\1\\|", p) for p in parts)


def escape_absolute_values(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Make the absolute-value bars of plain-text docstrings literal (outside code and doctests)."""
    in_literal = in_doctest = False
    literal_indent = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped:
            in_doctest = False
            continue
        if in_literal and indent <= literal_indent:
            in_literal = False
        if stripped.startswith(">>>"):
            in_doctest = True
        if not (in_literal or in_doctest):
            lines[i] = _escape_bars(line)
        if stripped.endswith("::") and not in_literal:
            in_literal, literal_indent = True, indent


def generate_contract_page(app: Sphinx) -> None:
    """Write ``contract.md`` into the source directory (rewritten only when its text changes)."""
    generator = ROOT / "tools" / "gen_contract.py"
    if not generator.exists():
        raise ExtensionError(f"{generator} not found: the contract page is generated from it")
    spec = importlib.util.spec_from_file_location("_dpbounds_gen_contract", generator)
    if spec is None or spec.loader is None:
        raise ExtensionError(f"cannot load {generator}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write(Path(app.srcdir) / "contract.md")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", generate_contract_page)
    app.add_directive("dpbounds-ufuncs", UfuncTable)
    app.add_directive("dpbounds-cli-help", CliHelp)
    app.add_directive("dpbounds-ufunc", UfuncEntry)
    app.connect("autodoc-process-docstring", escape_absolute_values)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
