"""The fenced code blocks of README.md and docs/*.md, as the documentation tests run them.

Python blocks (```python, ```pycon, or any block whose first line is a ``>>>`` prompt) run in
one namespace per page, in page order, as a reader pasting them would:

* a block of ``>>>`` examples runs as a doctest (its shown output is checked, ``...`` elides);
* a plain block runs as a script; a value shown in a trailing comment of an expression
  statement (``f(0.1)   # 0.89181580505...``) or on the comment line right after it
  (``# (0.0829, 0.0829)``) is checked to the digits shown;
* a block whose first line is ``# fragment: <why>`` is an illustrative fragment (a training
  loop needing a model, a framework's sampler...): compiled, not run.  Such marks are rare and
  each says why;
* a block that imports an optional package that is not installed is skipped, naming it.

Shell blocks show ``dpbounds ...`` command lines, with ``$ `` before the ones whose output
follows.  Every command line must parse; ``[--option value]`` (optional) is parsed with the
option, ``a|b`` with its first alternative.
"""
from __future__ import annotations

import ast
import dataclasses
import pathlib
import re
import shlex

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

PYTHON_INFOS = ("python", "pycon", "py")
SHELL_INFOS = ("", "text", "console", "bash", "sh", "shell")
FRAGMENT = re.compile(r"^#\s*fragment:\s*(\S.*)$")


@dataclasses.dataclass
class Block:
    page: pathlib.Path
    line: int          # 1-based line of the first line of code (after the fence)
    info: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def is_doctest(self) -> bool:
        first = next((ln for ln in self.text.splitlines() if ln.strip()), "")
        return first.lstrip().startswith(">>>")

    @property
    def is_python(self) -> bool:
        return self.info in PYTHON_INFOS or (self.info in SHELL_INFOS and self.is_doctest)

    @property
    def fragment_reason(self) -> str | None:
        first = next((ln for ln in self.text.splitlines() if ln.strip()), "")
        m = FRAGMENT.match(first.strip())
        return m.group(1) if m else None


def blocks(page: pathlib.Path) -> list[Block]:
    """Every fenced block of a Markdown page (``` or ~~~ fences, any indentation)."""
    out: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip().lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[j]):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        out.append(Block(page, i + 2, info, "\n".join(body) + "\n"))
        i = j + 1
    return out


# ---------------------------------------------------------------- shown values in comments
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?:\.\.\.)?"
_SHOWN = re.compile(rf"^\s*(\(\s*{_NUMBER}(?:\s*,\s*{_NUMBER})+\s*,?\s*\)|{_NUMBER})(?=\s|$)")


def shown_value(comment: str) -> str | None:
    """The value a comment shows (a number or a tuple of numbers), or None."""
    m = _SHOWN.match(comment)
    return m.group(1) if m else None


def numbers_in(shown: str) -> list[str]:
    return re.findall(_NUMBER, shown)


def agrees(actual: float, shown: str) -> bool:
    """``actual`` equals the number ``shown`` to its last digit (rounded, or truncated before ``...``)."""
    text = shown.rstrip(".") if shown.endswith("...") else shown
    mantissa = re.split(r"[eE]", text)[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(re.split(r"[eE]", text)[1]) if re.search(r"[eE]", text) else 0
    unit = 10.0 ** (exponent - decimals)
    value = float(text)
    if shown.endswith("..."):   # digits cut, not rounded: actual in [value, value + unit) (either sign)
        return abs(actual - value) < unit * (1 + 1e-9)
    return abs(actual - value) <= 0.5 * unit * (1 + 1e-9)


def checked_expressions(source: str) -> list[tuple[int, str, str]]:
    """(line, expression source, shown value) for each expression statement with a shown value."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out = []
    for node in tree.body:
        if not isinstance(node, ast.Expr) or node.end_lineno is None:
            continue
        last = lines[node.end_lineno - 1]
        comment = last.split("#", 1)[1] if "#" in last[node.end_col_offset:] else ""
        shown = shown_value(comment) if comment else None
        if shown is None and node.end_lineno < len(lines):   # the next line: a comment only
            nxt = lines[node.end_lineno].strip()
            if nxt.startswith("#"):
                shown = shown_value(nxt[1:])
        if shown is not None:
            out.append((node.lineno, ast.get_source_segment(source, node) or "", shown))
    return out


# ---------------------------------------------------------------- shell command lines
def command_lines(block: Block) -> list[tuple[int, list[str], list[str]]]:
    """(line, argv after 'dpbounds', shown output lines) of each dpbounds command in a shell block.

    Output is shown only after a ``$ `` prompt line, up to the next prompt or the block's end.
    """
    out: list[tuple[int, list[str], list[str]]] = []
    rows = block.text.splitlines()
    k = 0
    while k < len(rows):
        row = rows[k]
        prompt = row.startswith("$ ")
        cmd = row[2:] if prompt else row
        words = _words(cmd)
        if words and words[0] == "dpbounds":
            shown: list[str] = []
            if prompt:
                j = k + 1
                while j < len(rows) and not rows[j].startswith("$ "):
                    shown.append(rows[j])
                    j += 1
                k = j - 1
            out.append((block.line + k, _expand(words[1:]), shown))
        k += 1
    return out


def _words(cmd: str) -> list[str]:
    cmd = re.split(r"\s#\s|\s#$", cmd, maxsplit=1)[0]    # a trailing '# comment'
    cmd = cmd.split(" | ")[0].split(" && ")[0]             # the first command of a pipe
    try:
        return shlex.split(cmd)
    except ValueError:
        return []


def _expand(argv: list[str]) -> list[str]:
    """``[--x v]`` -> ``--x v``; ``a|b`` -> ``a`` (a synopsis as a runnable command)."""
    out = []
    for w in argv:
        w = w.strip("[]")
        if not w:
            continue
        if "|" in w and not w.startswith("--"):
            w = w.split("|")[0]
        elif "|" in w:
            w = w.split("|")[0]
        out.append(w)
    return out
