"""Kill-and-resume trials with real signals sent to real processes (bench/report_sweep_kill_trials.py).

Each trial runs a sweep to a file in a child process (a plain script: no ``__main__`` guard),
signals it at a chosen moment -- SIGKILL at every step of the writing protocol and while chunks
are computed, SIGINT/SIGTERM/SIGHUP while chunks are computed on every engine and during a part
write -- then resumes the sweep and compares the output with an uninterrupted run's, and checks
that nothing else is left.  The in-process simulation of a kill at every step is
tests/test_sweep_files.py (fast).
"""
from __future__ import annotations

import pathlib
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")]

pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed")
pytest.importorskip("dask", reason="dask not installed")

import report_sweep_kill_trials as trials  # noqa: E402


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("trials")   # one reference output per format for all trials


@pytest.mark.parametrize("signame, moment, suffix, engine", trials.plan(), ids="-".join)
def test_kill_and_resume(workdir, signame, moment, suffix, engine):
    row = trials.trial(pathlib.Path(workdir), signame, moment, suffix, engine)
    assert row["result"] == "ok: resumed, identical, nothing left over", row
    if signame == "SIGKILL" and not moment.startswith("after "):
        assert row["ended"] == "signal SIGKILL"
    elif moment == "compute":
        # the handled signals end the process only after it has saved its chunks, as the signal would
        assert row["ended"] == f"signal {signame}", row
