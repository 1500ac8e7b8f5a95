"""Running ``dpbounds`` in the test process and in child processes (shared by the CLI tests)."""
from __future__ import annotations

import argparse
import os
import pathlib

import dpbounds
from dpbounds.cli import build_parser, main


def run(capsys, *argv):  # type: ignore[no-untyped-def]
    """``dpbounds ARGV`` in this process: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exits (--version, --help, refused values)
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def child_env() -> dict[str, str]:
    """The environment of a child process that must import the same dpbounds as this process
    (the in-place build or the installed wheel)."""
    root = str(pathlib.Path(dpbounds.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser by its words (``"plot rounds"``), nested subcommands included."""
    def walk(p: argparse.ArgumentParser, path: str):  # type: ignore[no-untyped-def]
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    sub = f"{path} {name}".strip()
                    yield sub, sp
                    yield from walk(sp, sub)
    return dict(walk(build_parser(), ""))
