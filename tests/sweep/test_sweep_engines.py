"""The processes engine in real processes: a plain script without a ``__main__`` guard, and Ctrl-C.

Slow: each test starts Python processes (the sweep's and its workers, which import numpy and
dpbounds).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from cli_harness import child_env

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")]


def _script(tmp_path, body):
    path = tmp_path / "plain_script.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_processes_engine_runs_from_a_script_without_main_guard(tmp_path):
    script = _script(tmp_path, """
        import numpy as np
        import dpbounds

        axes = dict(sigma=[0.3, 0.5, 1.0, 2.0], rounds=[10, 1e4, 1e8], chunk_size=2, progress=False)
        a = dpbounds.sweep("delta_bound", engine="processes", workers=2, **axes)
        b = dpbounds.sweep("delta_bound", **axes)
        print(np.array_equal(np.asarray(a["delta_bound"]), np.asarray(b["delta_bound"]), equal_nan=True)
              and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in ("valid", "reason")))
        print("the script ran")
    """)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=child_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "True\nthe script ran\n"   # once: the workers did not run the script again


def test_a_quantity_defined_in_an_unguarded_script_gets_a_message_not_a_hang(tmp_path):
    script = _script(tmp_path, """
        import dataclasses
        import dpbounds
        from dpbounds.sweeps._quantities import get_quantity
        from dpbounds.sweeps._sweep import run_sweep

        def compute(a, o, out=None):
            return {"gdp_delta": dpbounds.ufuncs.gdp_delta(a["eps"], a["mu"], out=None if out is None else out["gdp_delta"])}

        mine = dataclasses.replace(get_quantity("gdp_delta"), compute=compute)
        run_sweep(mine, engine="processes", workers=2, progress=False, axes=dict(eps=[0.5, 1.0], mu=[1.0, 2.0]))
    """)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=child_env(), timeout=300)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("dpbounds.DPBoundsError: a worker process of engine='processes' ended"), r.stderr
    assert 'put that code under `if __name__ == "__main__":`' in last
    assert time.monotonic() - t0 < 120


def test_ctrl_c_stops_the_processes_engine_within_two_seconds(tmp_path):
    out = tmp_path / "e.csv"
    manifest = tmp_path / "e.csv.sweep.json"
    # exact epsilons, one point per chunk: each chunk takes a noticeable time.  The first part is
    # saved a second into the run (FLUSH_MIN_SECONDS), and the test signals only once it is: the
    # grid must take several seconds even on a fast idle machine, else the first save seen is the
    # final commit, and the signal lands after the sweep has finished
    cmd = [sys.executable, "-m", "dpbounds", "sweep", "epsilon_poisson", "--sigma", "0.6:3:600", "--sample-rate",
           "0.02", "--steps", "2000", "--delta", "1e-5", "--engine", "processes", "--workers", "2",
           "--chunk-size", "1", "--no-progress", "-o", str(out)]
    # a new session: Ctrl-C in a terminal signals the whole foreground group (the sweep and its workers)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(),
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if manifest.exists() and json.loads(manifest.read_text())["finished_chunks"] >= 1:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the sweep finished before it could be interrupted"
        assert not json.loads(manifest.read_text())["complete"], "the sweep finished before it could be interrupted"
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130 and err == "dpbounds: interrupted\n"
    assert elapsed < 2.0, f"stopped {elapsed:.2f} s after Ctrl-C"
    # the manifest matches what is on disk, and no worker is left
    state = json.loads(manifest.read_text())
    assert state["finished_chunks"] >= 1 and not state["complete"]
    assert sorted(p.name for p in (tmp_path / "e.csv.partial").iterdir()) == [p["file"] for p in state["parts"]]
    with pytest.raises(ProcessLookupError):
        for _ in range(100):   # the workers are reaped as the sweep ends; give the OS a moment
            os.killpg(proc.pid, 0)
            time.sleep(0.05)
