"""Every code block of README.md and docs/*.md runs, and shows what it prints.

How blocks are read (``>>>`` doctests, plain Python with shown values in comments, fragments
marked ``# fragment: <why>``, ``dpbounds ...`` command lines): see ``tests/docs_blocks.py``.
A page whose blocks take more than a few seconds in all is marked slow below, with its time.
"""
from __future__ import annotations

import ast
import contextlib
import doctest
import io
import os
import pathlib
import signal
import sys
import warnings
from typing import Any, Iterator

import docs_blocks as D
import pytest

import dpbounds
from dpbounds.cli import build_parser, main

pytestmark = pytest.mark.skipif(not (D.ROOT / "docs").is_dir(), reason="README.md and docs/ not next to tests/")

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: pages whose Python blocks take long in all (measured on this shared 2-core machine, loaded)
SLOW_PAGES = {
    "README.md": "calibration, the 2340-step training loop and the exact accountants: 15 s",
    "composition.md": "the optimal composition over the paper's k grid: 33 s",
}

#: commands that take more than a few seconds: parsed always, run only in the slow test
SLOW_COMMANDS = ("plan", "calibrate", "sweep", "plot", "curve")


def _pages_with(kind: str) -> list[pathlib.Path]:
    out = []
    for page in D.PAGES:
        bl = D.blocks(page)
        if kind == "python" and any(b.is_python for b in bl):
            out.append(page)
        if kind == "shell" and any(b.info in D.SHELL_INFOS and D.command_lines(b) for b in bl):
            out.append(page)
    return out


def _page_param(page: pathlib.Path) -> Any:
    marks = [pytest.mark.slow] if page.name in SLOW_PAGES else []
    return pytest.param(page, id=page.name, marks=marks)


@contextlib.contextmanager
def _in(directory: pathlib.Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(old)


class _Missing(Exception):
    pass


def _run_plain(block: D.Block, ns: dict[str, Any]) -> None:
    source = block.text
    code = compile(source, block.where, "exec")
    if block.fragment_reason is not None:
        return   # an illustrative fragment: it compiles; it is not run
    checks = D.checked_expressions(source)
    try:
        exec(code, ns)
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("dpbounds"):
            raise _Missing(exc.name) from None
        raise
    for line, expr, shown in checks:
        value = eval(compile(expr, f"{block.where}+{line - 1}", "eval"), ns)
        expected = D.numbers_in(shown)
        got = list(value) if isinstance(value, tuple) else [value]
        assert len(got) == len(expected), f"{block.where}+{line - 1}: {expr} = {value!r}, shown {shown}"
        for g, e in zip(got, expected):
            assert D.agrees(float(g), e), f"{block.where}+{line - 1}: {expr} = {value!r}, shown {shown}"


def _run_doctest(block: D.Block, ns: dict[str, Any]) -> None:
    test = doctest.DocTestParser().get_doctest(block.text, ns, block.where, str(block.page), block.line - 1)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=out.write, clear_globs=False)
    ns.update(test.globs)   # DocTest works on a copy of the namespace: keep what the block defined
    assert runner.failures == 0, out.getvalue()


def run_page(page: pathlib.Path, tmp: pathlib.Path) -> tuple[list[str], list[str]]:
    """Run the Python blocks of ``page`` in one namespace.

    Returns the blocks skipped (an optional package not installed, or a later block using what
    such a block defines) and the PrecisionWarnings issued (block: message).  Every other
    warning is an error: a documented example must not warn.
    """
    ns: dict[str, Any] = {"__name__": "__docs__"}
    missing: list[str] = []
    imprecise: list[str] = []
    with _in(tmp), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error")
        warnings.simplefilter("always", dpbounds.PrecisionWarning)
        warnings.filterwarnings("ignore", category=ResourceWarning)
        for block in D.blocks(page):
            if not block.is_python:
                continue
            before = len(caught)
            try:
                if block.is_doctest:
                    _run_doctest(block, ns)
                else:
                    _run_plain(block, ns)
            except _Missing as exc:
                missing.append(f"{block.where} needs {exc} (not installed)")
            except NameError as exc:
                if not missing:
                    raise
                missing.append(f"{block.where} uses a skipped block's names ({exc})")
            imprecise += [f"{block.where}: {w.message}" for w in caught[before:]]
    return missing, imprecise


@pytest.mark.parametrize("page", [_page_param(p) for p in _pages_with("python")])
def test_python_blocks_run(page: pathlib.Path, tmp_path: pathlib.Path) -> None:
    try:
        import matplotlib
    except ModuleNotFoundError:
        pass  # without the plot extra, the blocks that plot are reported missing (run_page) and skip
    else:
        matplotlib.use("Agg")
    missing, imprecise = run_page(page, tmp_path)
    assert not imprecise, imprecise  # a documented example never misses its requested precision
    if missing:
        pytest.skip("; ".join(missing))


def test_fragments_are_rare_and_say_why() -> None:
    python = [b for p in D.PAGES for b in D.blocks(p) if b.is_python]
    fragments = [b for b in python if b.fragment_reason is not None]
    assert len(fragments) <= max(3, len(python) // 10), [b.where for b in fragments]
    for b in fragments:
        assert len(b.fragment_reason or "") >= 10, b.where
        compile(b.text, b.where, "exec")


def test_every_block_is_recognised() -> None:
    # a block in an unknown language would silently escape these tests
    known = set(D.PYTHON_INFOS) | set(D.SHELL_INFOS) | {"{dpbounds-cli-help}", "{toctree}", "{eval-rst}", "toml",
                                                           "json", "csv", "c", "math", "{math}"}
    for page in D.PAGES:
        for b in D.blocks(page):
            assert b.info in known, f"{b.where}: a ```{b.info} block"


# ---------------------------------------------------------------- command lines
def _commands(slow: bool | None = None) -> list[Any]:
    out = []
    for page in _pages_with("shell"):
        for b in D.blocks(page):
            if b.info not in D.SHELL_INFOS or b.is_doctest:
                continue
            for line, argv, shown in D.command_lines(b):
                is_slow = bool(argv) and argv[0] in SLOW_COMMANDS
                if slow is None or is_slow == slow:
                    out.append(pytest.param(argv, shown, id=f"{page.name}:{line}"))
    return out


@pytest.mark.parametrize("argv, shown", _commands())
def test_commands_parse(argv: list[str], shown: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    try:
        parser.parse_args(argv)
    except SystemExit as exc:   # --help and --version leave with 0; a bad command line with 2
        assert exc.code == 0, capsys.readouterr().err
    capsys.readouterr()


class _Timeout(Exception):
    pass


def _run_command(argv: list[str], seconds: float) -> tuple[int, str, str]:
    def alarm(signum: int, frame: Any) -> None:
        raise _Timeout

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = int(exc.code or 0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return code, out.getvalue(), err.getvalue()


def _check_command(argv: list[str], shown: list[str], tmp: pathlib.Path, seconds: float) -> None:
    with _in(tmp):
        try:
            code, out, err = _run_command(argv, seconds)
        except _Timeout:
            pytest.skip(f"dpbounds {' '.join(argv)}: over {seconds:g} s here (run by the slow test)")
    # 0 the answer, 1 no answer at these parameters (shown as such), 3 a bracket wider than asked
    assert code in (0, 1, 3), (code, err)
    want = "\n".join(shown).strip()
    if want:
        checker = doctest.OutputChecker()
        assert checker.check_output(want + "\n", out, FLAGS), f"shown:\n{want}\n\nprinted:\n{out}"


@pytest.mark.skipif(sys.platform == "win32", reason="SIGALRM")
@pytest.mark.parametrize("argv, shown", _commands(slow=False))
def test_commands_run_and_print_what_is_shown(argv: list[str], shown: list[str], tmp_path: pathlib.Path) -> None:
    _check_command(argv, shown, tmp_path, 10.0)


@pytest.mark.slow
@pytest.mark.parametrize("argv, shown", _commands(slow=True))
def test_slow_commands_run_and_print_what_is_shown(argv: list[str], shown: list[str], tmp_path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    _check_command(argv, shown, tmp_path, 300.0)


# ---------------------------------------------------------------- names quoted in the text and scripts
def _dotted_names(text: str) -> set[str]:
    import re

    return set(re.findall(r"`(dpbounds(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?`", text))


def _resolve(name: str) -> Any:
    import importlib
    import importlib.util

    parts = name.split(".")
    obj: Any = importlib.import_module(parts[0])
    for i, p in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, p)
        except AttributeError:
            module = ".".join(parts[: i + 1])
            try:
                obj = importlib.import_module(module)
            except ModuleNotFoundError as exc:
                # a module of the package that needs an optional extra (torch, opacus, ...): it
                # exists when its file does; the names inside it are checked where the extra is installed
                if exc.name is not None and not exc.name.startswith("dpbounds") \
                        and importlib.util.find_spec(module) is not None:
                    return None
                raise
    return obj


@pytest.mark.parametrize("page", D.PAGES, ids=lambda p: p.name)
def test_names_quoted_in_the_text_exist(page: pathlib.Path) -> None:
    # every dotted dpbounds name a page quotes in backticks resolves
    for name in sorted(_dotted_names(page.read_text(encoding="utf-8"))):
        try:
            _resolve(name)
        except (AttributeError, ModuleNotFoundError) as exc:
            raise AssertionError(f"{page.name}: `{name}` does not exist ({exc})") from None


@pytest.mark.parametrize("script", sorted((D.ROOT / "bench").glob("report_*.py")), ids=lambda p: p.name)
def test_report_scripts_name_what_exists(script: pathlib.Path) -> None:
    # every dpbounds attribute a report script uses exists (a missing one fails only after its timings)
    tree = ast.parse(script.read_text())
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "dpbounds":
                    aliases[(a.asname or a.name).split(".")[0]] = a.asname and a.name or "dpbounds"
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dpbounds":
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = []
            cur: ast.expr = node
            while isinstance(cur, ast.Attribute):
                chain.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in aliases:
                name = ".".join([aliases[cur.id], *reversed(chain)])
                try:
                    _resolve(name)
                except (AttributeError, ModuleNotFoundError) as exc:
                    raise AssertionError(f"{script.name}:{node.lineno}: {name} does not exist ({exc})") from None


def test_shown_value_reader() -> None:
    # the reader of shown values itself: what it accepts and refuses
    assert D.shown_value(" 0.89181580505... CLT integral") == "0.89181580505..."
    assert D.shown_value(" (0.0829458, 0.0829043, 0.1081589)") == "(0.0829458, 0.0829043, 0.1081589)"
    assert D.shown_value(" TV(P0, P1) = 0.05") is None and D.shown_value(" f_M(a) and ...") is None
    assert D.agrees(0.8918158050512, "0.89181580505...") and not D.agrees(0.8918158049, "0.89181580505...")
    assert D.agrees(4.30679, "4.3068") and not D.agrees(4.3069, "4.3068") and D.agrees(1e-5, "1e-05")
    assert D.checked_expressions("f(1)   # 2.0\nx = 3  # 4.0\ng(2)\n# (1, 2)\n") == [(1, "f(1)", "2.0"),
                                                                                  (3, "g(2)", "(1, 2)")]
