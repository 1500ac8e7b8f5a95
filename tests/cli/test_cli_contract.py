"""What every ``dpbounds`` command promises, whatever the command.

* numbers: counts accept ``1e4`` and refuse ``1.5`` / ``1e400``; negative values reach the
  validators (``--delta -1e-5`` says what is wrong with -1e-05, not "expected one argument");
* ``--json`` is valid JSON even where answers are inf or NaN (written as null);
* ``--version``, help on every option, an example in every command's help;
* never a traceback: bad output paths, overflow, a closed pipe, Ctrl-C, bad values;
* the Berry-Esseen coefficient is passed explicitly to the API, default "exact";
* no internal planning vocabulary in what users read.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from cli_harness import child_env, run, subcommands

import dpbounds
from dpbounds import RandomAllocationAccountant
from dpbounds.cli import build_parser, main
from dpbounds.cli._numbers import count, real, whole
from dpbounds.cli._output import jsonable

CLI_SOURCES = pathlib.Path(dpbounds.__file__).resolve().parent / "cli"






def cli_command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "dpbounds", *argv]


def strict_json(text: str):
    """json.loads that refuses NaN / Infinity (which Python's json accepts by default)."""
    def refuse(name: str):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def options(*kinds):
    """(command, option string) of every option parsed by one of ``kinds`` (real, count, whole)."""
    return [(name, a.option_strings[-1]) for name, p in subcommands().items()
            for a in p._actions if a.type in kinds]


# ---------------------------------------------------------------- numbers
def test_every_numeric_option_uses_the_one_number_parser():
    for name, p in subcommands().items():
        for a in p._actions:
            if a.type is not None:
                assert a.type in (real, count, whole), (name, a.option_strings, a.type)
    assert len(options(count)) >= 30 and len(options(real)) >= 20 and options(whole)


def test_number_parser_unit():
    for parse in (count, whole):
        assert parse("1e4") == 10000 and isinstance(parse("1e4"), int)
        assert parse("6.0e4") == parse("60000") == 60000 and parse("1.14e7") == 11_400_000
        for bad, msg in [("1.5", "whole number"), ("1e400", "too large"), ("abc", "not a number"),
                         ("inf", "whole number"), ("nan", "whole number"), ("1e17", r"<= 2\^53"),
                         ("-3", "whole number >= "), ("1e3.5", "not a number")]:
            with pytest.raises(argparse.ArgumentTypeError, match=msg):
                parse(bad)
    assert whole("0") == 0           # e.g. --optimal-points 0: none
    with pytest.raises(argparse.ArgumentTypeError, match="whole number >= 1"):
        count("0")
    assert real("-1e-5") == -1e-5 and real("1e308") == 1e308 and real("5e-324") == 5e-324
    assert real("inf") == np.inf and np.isnan(real("nan"))  # said explicitly: the validator refuses it
    for bad, msg in [("1e400", "too large"), ("-1e400", "too large"), ("x1", "not a number")]:
        with pytest.raises(argparse.ArgumentTypeError, match=msg):
            real(bad)


def _required_args(p: argparse.ArgumentParser, skip: str) -> list[str]:
    """Values for a command's required options (and one of each required group), except ``skip``."""
    sample = {"--sigma": "1", "--delta": "0.01", "--rounds": "100", "--a": "0.5", "--mu": "1",
              "--dataset-size": "1000", "--batch-size": "10", "--epochs": "1", "--out": "x.csv",
              "--noise-multiplier": "1", "--target-epsilon": "1"}
    argv = []
    for a in p._actions:
        flag = a.option_strings[-1] if a.option_strings else None
        if a.required and flag != skip:
            argv += [flag, sample[flag]]
    for g in p._mutually_exclusive_groups:
        flags = [a.option_strings[-1] for a in g._group_actions]
        if g.required and skip not in flags:
            argv += [flags[0], sample[flags[0]]]
    return argv


@pytest.mark.parametrize("command,flag", options(count, whole))
def test_every_count_option_refuses_non_counts_in_one_line_naming_it(capsys, command, flag):
    # every option parsed as a count, found by walking the parsers: a new one is covered as it is added
    p = subcommands()[command]
    base = _required_args(p, flag)
    kind = p._option_string_actions[flag].type
    for text, value in [("1e4", 10_000), ("1e6", 1_000_000), ("1.14e7", 11_400_000), ("60000", 60_000)]:
        got = getattr(p.parse_args(base + [flag, text]), p._option_string_actions[flag].dest)
        one = got[0] if isinstance(got, list) else got
        assert one == value and type(one) is int   # integer-valued: accepted, exact
    bad = ["0.5", "60000.5", "1e3.5", "inf", "nan", "-inf", "-1", "-3e2", "1e400", "abc"]
    if kind is count:
        bad.append("0")        # counts of things that happen at least once
    else:
        assert p.parse_args(base + [flag, "0"]) is not None
    for text in bad:
        with pytest.raises(SystemExit) as exc:
            p.parse_args(base + [flag, text])
        assert exc.value.code == 2, text
        err = capsys.readouterr().err
        assert err.startswith(f"dpbounds: error: argument {flag}: ") and err.count("\n") == 1, (text, err)


@pytest.mark.parametrize("command,flag", options(real))
def test_every_real_option_takes_negative_numbers_as_values(command, flag):
    # argparse (Python < 3.13) reads -1e-5 as an unknown option: "expected one argument"
    p = subcommands()[command]
    ns = p.parse_args(_required_args(p, flag) + [flag, "-1e-5"])
    value = getattr(ns, p._option_string_actions[flag].dest)
    assert value == -1e-5 or value == [-1e-5]


@pytest.mark.parametrize("argv", [
    ["delta", "--sigma", "1", "--rounds", "{n}"],
    ["tradeoff", "--sigma", "1", "--rounds", "{n}", "--a", "0.1", "0.5"],
    ["--json", "gdp-mu", "--sigma", "1", "--rounds", "{n}", "--epochs", "4", "--delta", "1e-5"],
    ["--json", "epsilon", "--sigma", "1", "--rounds", "{n}", "--epochs", "2", "--delta", "1e-5"],
    ["--json", "rdp", "--sigma", "1", "--dataset-size", "1e6", "--batch-size", "{b}", "--delta", "1e-5"],
])
def test_rounds_1e4_runs_like_10000(capsys, argv):
    a = run(capsys, *[x.format(n="1e4", b="1e2") for x in argv])
    b = run(capsys, *[x.format(n="10000", b="100") for x in argv])
    assert a == b and a[0] in (0, 1) and a[2] == ""


def test_curve_rounds_and_epochs_1e0_forms(tmp_path, capsys):
    p1, p2 = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["curve", "--sigma", "1", "--rounds", "1e2", "--epochs", "2e0", "--points", "5", "--out", str(p1)]) == 0
    assert main(["curve", "--sigma", "1", "--rounds", "100", "--epochs", "2", "--points", "5", "--out", str(p2)]) == 0
    assert p1.read_text() == p2.read_text()


@pytest.mark.parametrize("argv,needle", [
    (["rounds", "--sigma", "1", "--delta", "-1e-5"], "delta must be in the open interval (0, 1), got -1e-05"),
    (["rounds", "--sigma", "-1", "--delta", "1e-5"], "sigma must be finite and > 0, got -1.0"),
    (["delta", "--sigma", "-1e-3", "--rounds", "100"], "sigma must be finite and > 0, got -0.001"),
    (["delta", "--sigma", "1", "--rounds", "-1e4"], "argument --rounds: must be a whole number >= 1"),
    (["delta", "--sigma", "1", "--rounds", "2"], "rounds must be an integer >= 3, got 2"),
    (["rdp", "--sigma", "1", "--dataset-size", "1e4", "--batch-size", "100", "--delta", "-1e-5"],
     "delta must be in the open interval (0, 1), got -1e-05"),
    (["dpsgd", "--noise-multiplier", "1", "--dataset-size", "1e4", "--batch-size", "100", "--steps", "-1e2"],
     "argument --steps: must be a whole number >= 1 (such as 100 or 1e4), got '-1e2'"),
    (["dpsgd", "--noise-multiplier", "1", "--dataset-size", "0", "--batch-size", "0", "--epochs", "1"],
     "argument --dataset-size: must be a whole number >= 1"),
    (["dpsgd", "--noise-multiplier", "1", "--dataset-size", "10", "--batch-size", "20", "--epochs", "1"],
     "--batch-size must be <= --dataset-size, got 20 > 10"),
    (["delta", "--sigma", "1", "--rounds", "1e400"], "argument --rounds: '1e400' is too large"),
    (["delta", "--sigma", "1e400", "--rounds", "100"], "argument --sigma: '1e400' is too large"),
    (["rounds", "--sigma", "1", "--delta", "1e-5", "--epochs", "1.5"], "argument --epochs: must be a whole number"),
    (["curve", "--sigma", "1", "--rounds", "100", "--points", "1", "--out", "c.csv"], "points must be >= 2"),
    (["rounds", "--sigma", "abc", "--delta", "0.01"], "not a number"),
    (["nosuchcommand"], "invalid choice"),
])
def test_bad_values_one_line_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("dpbounds: error: ") and needle in err and err.count("\n") == 1


# ---------------------------------------------------------------- JSON
def test_jsonable_unit():
    got = jsonable({"a": float("nan"), "b": [np.inf, np.float64(1.5), -np.inf], "c": (1, np.int64(2)),
                    "d": np.array([1.0, np.nan]), "e": np.bool_(True), "f": None, "g": "x"})
    assert got == {"a": None, "b": [None, 1.5, None], "c": [1, 2], "d": [1.0, None], "e": True,
                   "f": None, "g": "x"}
    assert type(got["c"][1]) is int and type(got["e"]) is bool


@pytest.mark.parametrize("argv,path", [
    (["rounds", "--sigma", "0.5", "--delta", "1e-8"], ("rounds_exact",)),            # no M: was "inf"
    (["rounds", "--sigma", "0.5", "--delta", "1e-8"], ("min_dataset_size",)),        # inf: was Infinity
    (["tradeoff", "--sigma", "0.5", "--rounds", "10", "--a", "0.1", "0.5"], (0, "lower_bound")),  # NaN
    (["delta", "--sigma", "0.05", "--rounds", "3"], ("delta_min",)),                 # inf
    (["rdp", "--sigma", "1", "--dataset-size", "60000", "--batch-size", "256"], (2, "epsilon")),   # inf
    (["rdp", "--sigma", "1", "--dataset-size", "60000", "--batch-size", "256"], (2, "delta")),     # NaN
    (["epsilon", "--sigma", "1", "--rounds", "1000", "--delta", "1e-5", "--method", "closed_form"],
     ("epsilon_upper",)),                                                            # inf: was exit 2
])
def test_json_is_valid_with_non_finite_values(capsys, argv, path):
    for args in (["--json", *argv], [*argv, "--json"]):
        code, out, err = run(capsys, *args)
        assert code in (0, 1) and err == ""
        node = strict_json(out)
        for key in path:
            node = node[key]
        assert node is None


# ---------------------------------------------------------------- version, help
def test_version(capsys):
    code, out, err = run(capsys, "--version")
    assert code == 0 and out == f"dpbounds {dpbounds.__version__}\n" and err == ""


def test_version_subprocess():
    proc = subprocess.run(cli_command("--version"), capture_output=True, text=True, env=child_env(), timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == f"dpbounds {dpbounds.__version__}"


@pytest.mark.parametrize("command", sorted(subcommands()))
def test_help_has_an_example_and_every_option_is_explained(capsys, command):
    p = subcommands()[command]
    for a in p._actions:
        assert a.help and a.help.strip(), (command, a.option_strings)
    code, out, _ = run(capsys, *command.split(), "--help")
    assert code == 0
    assert re.search(rf"^example:\n  dpbounds {re.escape(command)}\b", out, re.MULTILINE), out


def test_user_facing_text_names_concepts_not_planning_documents(capsys, tmp_path):
    texts = [build_parser().format_help()] + [p.format_help() for p in subcommands().values()]
    for argv in (["table1"], ["rdp", "--sigma", "1", "--dataset-size", "6e4", "--batch-size", "256"],
                 ["--json", "rdp", "--sigma", "1", "--dataset-size", "1e8", "--batch-size", "100", "--delta", "0.3"],
                 ["tradeoff", "--sigma", "1", "--rounds", "100", "--a", "0.5"], ["delta", "--sigma", "1", "--rounds", "100"]):
        texts.append("".join(run(capsys, *argv)[1:]))
    for text in texts:
        assert not re.search(r"\bSPEC\b|\bseeds?\b|seed[ -]?00\d", text, re.IGNORECASE), text


# ---------------------------------------------------------------- the coefficient
def _spy(monkeypatch, module, name, calls):
    f = getattr(module, name)

    def wrapper(*args, **kwargs):
        calls.append((name, kwargs.get("coefficient")))
        return f(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)


def test_coefficient_is_passed_explicitly(monkeypatch, capsys):
    import dpbounds.cli._core as core
    import dpbounds.tradeoff as T

    calls: list[tuple[str, str | None]] = []
    for name in ("rounds_required", "rounds_closed_form", "theorem31"):
        _spy(monkeypatch, core, name, calls)
    _spy(monkeypatch, T, "tradeoff_lower_bound", calls)
    assert run(capsys, "table1")[0] == 0
    assert {c for _, c in calls} == {"simplified", "exact"}      # the paper's table, and the exact rows
    calls.clear()
    for argv in (["rounds", "--sigma", "1", "--delta", "1e-3", "--epochs", "2"], ["delta", "--sigma", "1", "--rounds", "1e6"],
                 ["tradeoff", "--sigma", "2", "--rounds", "1e4", "--a", "0.5", "--method", "lower-bound"]):
        assert run(capsys, *argv)[0] == 0
    assert len(calls) == 4 and all(c == "exact" for _, c in calls), calls
    calls.clear()
    assert run(capsys, "delta", "--sigma", "1", "--rounds", "1e6", "--coefficient", "simplified")[0] == 0
    assert calls == [("theorem31", "simplified")]


def test_table1_is_the_papers_simplified_table_first(capsys):
    code, out, _ = run(capsys, "--json", "table1")
    rows = strict_json(out)["rows"]
    assert [r["coefficient"] for r in rows[:5]] == ["simplified"] * 5
    # Table 1 of the paper, sigma = 1: M = 1140369 (simplified); the exact moment gives 429713
    assert {(r["coefficient"], r["sigma"]): r["rounds_exact"] for r in rows}[("simplified", 1.0)] == 1140369


# ---------------------------------------------------------------- rdp's random-allocation row
@pytest.mark.parametrize("sigma,n,b,epochs,delta", [
    (1.0, 10 ** 8, 100, 2, 0.3), (2.0, 10 ** 8, 100, 1, 1e-3), (1.5, 10 ** 9, 10, 3, 0.2), (1.0, 10 ** 6, 1000, 1, 1e-3),
])
def test_rdp_random_allocation_row_is_the_closed_form_accountant(capsys, sigma, n, b, epochs, delta):
    code, out, _ = run(capsys, "--json", "rdp", "--sigma", str(sigma), "--dataset-size", str(n), "--batch-size",
                       str(b), "--epochs", str(epochs), "--delta", str(delta))
    ra = strict_json(out)[-1]
    acc = RandomAllocationAccountant(sigma, n // b, epochs, method="closed_form")
    assert code == 0 and ra["scheme"] == "random-allocation" and ra["reason"] == ""
    assert ra["delta"] == acc.get_delta_bracket(0.0).upper     # the same number, bit for bit
    assert ra["epsilon"] == (0.0 if acc.get_epsilon_bracket(delta).upper == 0 else None)
    assert ra["steps"] == (n // b) * epochs


def test_rdp_random_allocation_row_says_why_there_is_no_guarantee(capsys):
    code, out, _ = run(capsys, "rdp", "--sigma", "1.1", "--dataset-size", "60000", "--batch-size", "256",
                       "--epochs", "10")
    assert code == 0
    assert "random allocation: no closed-form guarantee here: Theorem 3.1 does not apply" in out
    assert "dpbounds epsilon --sigma 1.1 --rounds 234 --epochs 10 --delta 1e-05" in out


def test_cli_reaches_no_private_compiled_module():
    for path in CLI_SOURCES.glob("*.py"):
        text = path.read_text()
        assert "_ufuncs" not in text and "import_module" not in text, path.name


# ---------------------------------------------------------------- never a traceback
def test_unwritable_output_path_is_one_line(tmp_path):
    target = tmp_path / "no_such_dir" / "c.csv"
    proc = subprocess.run(cli_command("curve", "--sigma", "1", "--rounds", "100", "--out", str(target)),
                          capture_output=True, text=True, env=child_env(), timeout=120)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr == f"dpbounds: error: cannot write --out {str(target)!r}: No such file or directory\n"


def test_unwritable_png_path_is_one_line(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="matplotlib not installed")
    target = tmp_path / "no_such_dir" / "c.png"
    code, out, err = run(capsys, "curve", "--sigma", "1", "--rounds", "100", "--points", "5", "--out", str(target))
    assert code == 2 and out == "" and err.startswith("dpbounds: error: cannot write --out") and err.count("\n") == 1


def test_overflow_subprocess_is_one_line():
    proc = subprocess.run(cli_command("delta", "--sigma", "1", "--rounds", "1e400"), capture_output=True, text=True,
                          env=child_env(), timeout=120)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "too large" in proc.stderr


def buffering_env(unbuffered: bool) -> dict[str, str]:
    env = child_env()
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


def _pipe_cases():
    # a process per case: main's own output buffered and unbuffered, and argparse's printing
    # (whose unbuffered write error shows only at the flush) in the fast suite; the rest slow
    fast = {("table1", False), ("table1", True), ("--version", True)}
    for argv in (["table1"], ["--json", "gdp", "--mu", "1", "--eps", "1"], ["--version"], ["rounds", "--help"]):
        for unbuffered in (False, True):
            marks = () if (argv[-1], unbuffered) in fast else pytest.mark.slow
            yield pytest.param(argv, unbuffered, marks=marks, id=f"{'-'.join(argv)}-{'unbuffered' if unbuffered else 'buffered'}")


@pytest.mark.parametrize("argv,unbuffered", list(_pipe_cases()))
def test_closed_pipe_is_silent(argv, unbuffered):
    # no reader at all: a write fails with EPIPE -- in the first print when unbuffered, else only
    # when the buffered output is flushed (which must happen inside main, not at interpreter exit)
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run(cli_command(*argv), stdout=w, stderr=subprocess.PIPE, text=True,
                              env=buffering_env(unbuffered), timeout=120)
    finally:
        os.close(w)
    assert proc.stderr == ""
    # argparse's own printing (--help, --version) ignores a write error; it can only show at the flush
    assert proc.returncode == 141 or (argv[-1] in ("--help", "--version") and unbuffered and proc.returncode == 0)


@pytest.mark.parametrize("unbuffered", [False, True])
def test_pipe_into_head_is_silent(unbuffered):
    # `dpbounds ... | head -1` with more output than a pipe buffer holds (so the write after head
    # has gone must fail), run by a real shell
    a = " ".join(f"{x:.6f}" for x in np.linspace(0, 1, 3000))
    cmd = " ".join(cli_command()) + f" tradeoff --sigma 1 --rounds 100 --method clt --a {a} | head -1"
    proc = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, env=buffering_env(unbuffered),
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith("# sigma=1.0 rounds=100")
    assert proc.stdout.count("\n") == 1 and proc.stderr == ""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_exits_130_with_one_line(tmp_path):
    # the exact curve at 20,000 points of (0.5, 1e6): minutes of work; interrupted after 3 s
    # the context manager closes the pipes on every path, so a failure here leaves no open file behind
    with subprocess.Popen(cli_command("curve", "--sigma", "0.5", "--rounds", "1e6", "--points", "20000",
                                      "--out", str(tmp_path / "curve.csv")),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env()) as proc:
        try:
            time.sleep(3.0)
            assert proc.poll() is None, "the command finished before it could be interrupted"
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 130 and out == ""
    assert err == "dpbounds: interrupted\n"
    assert list(tmp_path.iterdir()) == []     # no partial --out file is left behind


def test_entry_point_is_cli_main():
    text = (pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml")
    if not text.exists():
        pytest.skip("pyproject.toml not next to tests/")
    assert 'dpbounds = "dpbounds.cli:main"' in text.read_text()
    assert callable(main)


# ---------------------------------------------------------------- one exit-status rule
@pytest.mark.parametrize("argv, status", [
    # 1: valid input, no answer at these parameters (the reason is printed)
    (["rounds", "--sigma", "100", "--delta", "1e-5", "--coefficient", "simplified"], 1),   # no M <= 2^53
    (["delta", "--sigma", "0.5", "--rounds", "100"], 1),                                   # theorem does not apply
    (["epsilon", "--sigma", "1", "--rounds", "100", "--delta", "1e-5", "--method", "closed_form"], 1),
    (["calibrate", "--target-epsilon", "0.001", "--dataset-size", "60000", "--batch-size", "256",
      "--epochs", "1"], 1),
    (["plan", "--dataset-size", "1000", "--delta", "0.01", "--sigma", "1,2"], 1),          # no sigma admits an M
    # 0: the answer
    (["rounds", "--sigma", "1", "--delta", "0.01"], 0),
    (["delta", "--sigma", "1", "--rounds", "1e6"], 0),
    (["epsilon", "--sigma", "1", "--rounds", "1e6", "--delta", "0.05", "--method", "closed_form"], 0),
    # 2: bad input
    (["rounds", "--sigma", "0", "--delta", "1e-5"], 2),
    (["epsilon", "--sigma", "0.1", "--rounds", "100", "--delta", "1e-5"], 2),
])
def test_exit_status_follows_one_rule(capsys, argv, status):
    code, out, err = run(capsys, *argv)
    assert code == status, (code, out, err)
    if status == 1:   # the reason is said, in one place, without "error"
        assert (out.strip() or err.strip()) and "error" not in err and "Traceback" not in err
    json_code, json_out, _ = run(capsys, "--json", *argv)
    assert json_code == status
    if status != 2:
        strict_json(json_out)


def test_exit_statuses_are_documented():
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "cli.md")
    if not text.exists():
        pytest.skip("docs/ not next to tests/")
    section = text.read_text().split("**Exit status**")[1].split("\n## ")[0]
    for status in ("0", "1", "2", "3", "130"):
        assert re.search(rf"^  \| {status} \| ", section, re.MULTILINE), status
    for command in ("`delta`", "`rounds`", "`calibrate`", "`plan`", "`dpsgd`", "`rdp`"):
        assert command in section, command
    # the top-level --help says the same
    epilog = build_parser().epilog or ""
    assert "1 no answer exists" in epilog and "2 bad input" in epilog
