"""Kill-and-resume trials with real signals sent to real processes (bench/report_sweep_kill_trials.py).

Each trial runs a sweep to a file in a child process (a plain script: no ``__main__`` guard),
signals it at a chosen moment -- SIGKILL at every step of the writing protocol and while chunks
are computed, SIGINT/SIGTERM/SIGHUP while chunks are computed on every engine and during a part
write -- then resumes the sweep and compares the output with an uninterrupted run's, and checks
that nothing else is left.  The in-process simulation of a kill at every step is
tests/sweep/test_sweep_files.py (fast).
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


@pytest.mark.parametrize("limit, where", [(3000, "a part"), (60000, "the merged file")])
def test_a_full_disk_in_a_real_process_ends_cleanly(tmp_path, limit, where):
    """The OS refuses the write (RLIMIT_FSIZE: 'File too large', as a full disk refuses it)."""
    import json
    import subprocess

    from cli_harness import child_env

    out = tmp_path / "g.csv"
    argv = ["sweep", "rounds_required", "--sigma", "0.5:4:40:lin", "--delta", "1e-12:1e-2:40:log", "--chunk-size",
            "100", "--no-progress"]
    child = ("import resource, signal, sys\n"
             "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
             f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
             "from dpbounds.cli import main\n"
             f"sys.exit(main({argv + ['-o', str(out)]!r}))\n")
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=child_env(), timeout=300)
    assert r.returncode == 2 and r.stderr.startswith(f"dpbounds: error: cannot write '{out}': File too large; the "), \
        (where, r.stderr)
    assert "resume=True continues" in r.stderr
    state = json.loads((tmp_path / "g.csv.sweep.json").read_text())
    partial = tmp_path / "g.csv.partial"
    assert sorted(p.name for p in partial.iterdir()) == [p["file"] for p in state["parts"]]   # no temporary file
    assert not out.exists() and not (tmp_path / "g.csv.sweep.lock").exists()
    from dpbounds.cli import main

    assert main([*argv, "--resume", "-o", str(out)]) == 0
    full = tmp_path / "full.csv"
    assert main([*argv, "-o", str(full)]) == 0
    assert out.read_bytes() == full.read_bytes()
