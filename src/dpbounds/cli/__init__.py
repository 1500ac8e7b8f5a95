"""Command-line interface: ``dpbounds <command> ...`` (standard-library argparse only).

The commands only parse arguments and print answers; every number comes from the public API.
Each command module in :data:`COMMANDS` defines ``register(subparsers)`` and sets
``func=handler`` on its parsers, where ``handler(args) -> int`` prints its result (text, or JSON
with ``--json``) and returns the exit status.  :func:`main` turns every failure a user can cause
into one line on stderr and an exit status, never a traceback:

* bad input (``ValueError``, an overflowing number, an unwritable output path): one line, exit 2,
  naming the options as the user typed them (``--sigma`` or its alias ``--noise-multiplier``);
* no answer exists at the parameters asked about (the theorem does not apply, no M, no noise
  multiplier meets the target): the reason, exit 1;
* Ctrl-C: exit 130;
* the reader of stdout went away (``dpbounds table1 | head -1``): exit 141, silently.

Reading order: this file (the parser and :func:`main`), then what every command shares --
``_numbers`` (the number parsers), ``_options`` (options declared once) and ``_output`` (JSON,
tables, files, exit statuses) -- then one module per command group, in :data:`COMMANDS` order:
``_dpsgd``, ``_core``, ``_tradeoff``, ``_accountant``, ``_rdp``, ``_plot`` (with
``_plot_companion``), ``_plan``, ``_sweep``.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from typing import Any, NoReturn, Sequence

from dpbounds._errors import NoAnswer
from dpbounds.cli import _accountant, _core, _dpsgd, _plan, _plot, _rdp, _sweep, _tradeoff
from dpbounds.cli._numbers import NEGATIVE_NUMBER
from dpbounds.cli._options import RecordingStore, in_flags, typed_in_argv
from dpbounds.cli._output import EXIT_BROKEN_PIPE, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_NOT_VALID

__all__ = ["COMMANDS", "build_parser", "main"]

#: The command groups, in the order ``dpbounds --help`` lists their commands.
COMMANDS = (
    _dpsgd,        # dpsgd, calibrate
    _core,         # table1, rounds, delta
    _tradeoff,     # tradeoff, gdp, gdp-mu
    _accountant,   # epsilon, curve
    _rdp,          # rdp
    _plot,         # plot rounds|tradeoff|epsilon
    _plan,         # plan
    _sweep,        # sweep
)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Prose paragraphs wrapped, examples and tables (indented lines) kept as written; defaults shown."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for para in text.split("\n\n"):
            if any(line.startswith(" ") for line in para.splitlines()):
                paragraphs.append(textwrap.indent(para, indent))
            else:
                paragraphs.append(textwrap.fill(" ".join(para.split()), width, initial_indent=indent,
                                                subsequent_indent=indent))
        return "\n\n".join(paragraphs)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if ("%(default)" in text or action.required or not action.option_strings
                or default is None or default is False or default is argparse.SUPPRESS):
            return text
        return text + " (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and negative numbers (``--delta -1e-5``) read as values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        # argparse decides by this pattern whether "-1e-5" is a value or an unknown option
        self._negative_number_matcher = NEGATIVE_NUMBER
        # every stored value remembers the option string that set it (for messages)
        self.register("action", None, RecordingStore)
        self.register("action", "store", RecordingStore)
        self._argv: list[str] = []

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        # argparse names an option with aliases as "--sigma/--noise-multiplier": name the one typed
        m = re.match(r"argument ((?:--[\w-]+/)+--[\w-]+): ", message)
        if m:
            typed = typed_in_argv(m.group(1).split("/"), self._argv)
            if typed:
                message = f"argument {typed}: " + message[m.end():]
        sys.stderr.write(f"dpbounds: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def _version() -> str:
    from dpbounds import __version__

    return f"dpbounds {__version__}"


def build_parser() -> argparse.ArgumentParser:
    """The ``dpbounds`` parser with every command registered."""
    parser = Parser(
        prog="dpbounds",
        description="Differential-privacy bounds for DP-SGD: random allocation, Poisson subsampling and "
                    "sampling without replacement.",
        epilog="Run 'dpbounds COMMAND --help' for a command's options and an example.\n\n"
               "Exit status: 0 the answer is printed; 1 no answer exists at these parameters (the\n"
               "theorem does not apply, no M or no noise multiplier meets the target; the reason is\n"
               "printed); 2 bad input; 3 the certified bracket is wider than --tolerance; 130\n"
               "interrupted.  Tables of several schemes (dpsgd, rdp) mark a row without an answer\n"
               "with its reason and still exit 0.",
    )
    parser.add_argument("--version", action="version", version=_version(), help="print the version and exit")
    parser.add_argument("--json", action="store_true", help="machine-readable JSON output (non-finite numbers as null)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def _stdout_gone() -> int:
    # Later writes (and the interpreter's final flush) must not raise again: point stdout at
    # /dev/null, as the Python documentation's SIGPIPE note recommends.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


def _run(argv: Sequence[str] | None, parsed: list[argparse.Namespace]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    parsed.append(args)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    return int(args.func(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dpbounds`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status."""
    parsed: list[argparse.Namespace] = []
    try:
        try:
            return _run(argv, parsed)
        finally:
            # buffered output meets a closed pipe here, inside the handlers below, not at
            # interpreter exit (also after --help / --version, which leave by SystemExit)
            sys.stdout.flush()
    except NoAnswer as exc:   # a question without an answer, not bad input
        text = in_flags(str(exc), parsed[0]) if parsed else str(exc)
        sys.stderr.write(f"dpbounds: {text}\n")
        return EXIT_NOT_VALID
    except (ValueError, ArithmeticError) as exc:  # ArithmeticError: e.g. OverflowError from a huge input
        text = in_flags(str(exc), parsed[0]) if parsed else str(exc)
        sys.stderr.write(f"dpbounds: error: {text}\n")
        return EXIT_ERROR
    except BrokenPipeError:
        return _stdout_gone()
    except KeyboardInterrupt:
        sys.stderr.write("dpbounds: interrupted\n")
        return EXIT_INTERRUPTED
