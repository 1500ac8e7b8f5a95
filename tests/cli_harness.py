"""Running ``dpbounds`` in the test process and in child processes (shared by the CLI tests)."""
from __future__ import annotations

import os
import pathlib

import dpbounds
from dpbounds.cli import main


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
