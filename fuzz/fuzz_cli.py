"""Fuzz the command line: ``dpbounds.cli.main(argv)`` in-process with fuzzed argv.

argv is assembled from the parser itself (its commands, each command's options and choices, read
from ``build_parser()``), with values drawn from number spellings (hard doubles, ``1e400``,
``-1e-5``, ``6e4``, ``0x10``, ``1_000``, ``nan``, ``-inf``), the options' choices, and arbitrary
text.  stdout and stderr are captured.  The contract (the CLI module docstring and ``dpbounds
--help``'s epilog):

* the exit status is one of 0 (ok), 1 (the bound does not apply), 2 (bad input), 3 (tolerance
  missed); ``--help``/``--version`` leave with SystemExit(0);
* no traceback on stderr; on status 2 stderr is one line starting ``dpbounds: error:``;
* with ``--json`` and status 0, stdout parses as JSON;
* every call takes < 1 s CPU.

Sizes are capped so one call is milliseconds: counts (``--dataset-size``, ``--rounds``, ``--steps``
...) are drawn small, ``--points`` <= 50; ``--out`` always names a file in a temporary directory.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _main import fuzz, instrument_dpbounds  # noqa: E402

instrument_dpbounds()

from _contract import Finding, attempt  # noqa: E402
from _inputs import HARD_DOUBLES, Draw  # noqa: E402

from dpbounds import cli  # noqa: E402

EXIT_CODES = {0, 1, 2, 3}
# --out files go to a fresh temporary directory, the harness's working directory, under relative
# names: an argv is then the same text on every run and machine (a random directory name in it
# would reach the fuzzer's comparison tables and make its mutations differ from run to run)
os.chdir(tempfile.mkdtemp(prefix="dpbounds-fuzz-cli-"))
# options whose value is a count: drawn small, so that one call stays within milliseconds
_SMALL = {"--dataset-size": 2000, "--batch-size": 500, "--rounds": 1000, "--steps": 3000, "--epochs": 3,
          "--points": 50}
_SPELLINGS = ("1e400", "-1e-5", "6e4", "6.0e4", "0x10", "1_000", "nan", "-nan", "inf", "-inf", "+1", "1.", ".5",
              "1e-320", "", " ", "abc", "--", "-", "1e", "١٢", "0", "-0", "2e9", "9007199254740993")


def _commands() -> dict[str, list[argparse.Action]]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: list(p._actions) for name, p in sub.choices.items()}


COMMANDS = _commands()


def _value(d: Draw, action: argparse.Action) -> str:
    opt = action.option_strings[-1] if action.option_strings else ""
    k = d.int(0, 9)
    if action.choices and k < 6:
        return str(d.pick(list(action.choices)))
    if opt == "--out":
        return str(d.pick(("out.json", "out.csv", "out.txt", "no/such/dir/x.csv")))
    if opt in _SMALL and k < 7:
        return str(d.int(-2, _SMALL[opt]))
    if k < 7:
        v = d.double(d.pick(("unit", "sigma", "eps", "any")))
        return d.pick((repr(v), f"{v:g}", f"{v:.3e}"))
    if k == 7:
        return repr(float(d.pick(HARD_DOUBLES)))
    if k == 8:
        return str(d.pick(_SPELLINGS))
    return d.text()


def _argv(d: Draw) -> list[str]:
    argv: list[str] = []
    if d.int(0, 9) == 0:
        argv.append(d.pick(("--json", "--version", "--help", "-h", "--bogus")))
    if d.int(0, 19) == 0:
        return argv + [d.text()]
    name = d.pick(sorted(COMMANDS))
    argv.append(name)
    actions = [a for a in COMMANDS[name] if a.option_strings]
    required = [a for a in actions if a.required]
    chosen = list(required) if d.int(0, 4) else []
    for _ in range(d.int(0, 6)):
        chosen.append(d.pick(actions))
    for a in chosen:
        if d.int(0, 15) == 0:
            continue     # drop it (a required option missing)
        argv.append(d.pick(a.option_strings))
        if a.nargs != 0:
            argv.append(_value(d, a))
    for opt in _SMALL:   # the size caps apply to whatever was drawn
        if opt in argv:
            i = argv.index(opt)
            if i + 1 < len(argv):
                try:
                    if float(argv[i + 1]) > _SMALL[opt]:
                        argv[i + 1] = str(_SMALL[opt])
                except ValueError:
                    pass
    return argv


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()

    def main() -> int:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                return cli.main(argv)
            except SystemExit as exc:   # --help / --version leave through argparse's SystemExit
                return exc.code if isinstance(exc.code, int) else 2

    ok, code = attempt(main)
    return int(code), out.getvalue(), err.getvalue()


def test_one_input(data: bytes) -> None:
    d = Draw(data)
    argv = _argv(d)
    code, out, err = run(argv)
    where = f"dpbounds {' '.join(repr(a) for a in argv)} -> exit {code}; stderr: {err[-400:]!r}"
    if code not in EXIT_CODES:
        raise Finding(f"exit status {code} not in {sorted(EXIT_CODES)}: {where}")
    if "Traceback" in err or "Traceback" in out:
        raise Finding(f"traceback printed: {where}")
    if code == 2 and not any(h in argv for h in ("--help", "-h")) and not err.startswith("usage:"):
        # (no command at all prints the usage to stderr with status 2, as documented)
        lines = err.strip().splitlines()
        if not (len(lines) == 1 and lines[0].startswith("dpbounds: error:")):
            raise Finding(f"status 2 without one 'dpbounds: error:' line: {where}")
    if code == 0 and "--json" in argv and out.strip() and not any(h in argv for h in ("--help", "-h", "--version")):
        try:
            json.loads(out)
        except ValueError as exc:
            raise Finding(f"--json output is not JSON ({exc}): {where}; stdout: {out[:300]!r}") from None


if __name__ == "__main__":
    fuzz(test_one_input)
