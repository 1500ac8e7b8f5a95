"""Command-line interface: ``dpbounds <command> ...`` (standard-library argparse only).

Sub-commands are contributed by modules named in ``_PLUGINS``; each defines
``register(subparsers)`` and sets ``func=handler`` on its parsers, where
``handler(args) -> int`` prints its result (honouring ``args.json``) and returns the
exit status.  A ``ValueError`` from any handler becomes one line on stderr and exit 2.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn, Sequence

_PLUGINS = ("dpbounds._cli_dpsgd", "dpbounds._cli_core", "dpbounds._cli_tradeoff", "dpbounds._cli_accountant",
            "dpbounds._cli_rdp")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        sys.stderr.write(f"dpbounds: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpbounds", description="Differential-privacy bounds for DP-SGD.")
    parser.add_argument("--json", action="store_true", help="machine-readable JSON output")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _PLUGINS:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except ValueError as exc:
        sys.stderr.write(f"dpbounds: error: {exc}\n")
        return 2
    except BrokenPipeError:  # `dpbounds ... | head`: the reader left; no traceback
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        sys.stderr.write("dpbounds: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
