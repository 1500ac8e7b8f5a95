"""How long ``dpbounds sweep`` takes to stop after Ctrl-C, per engine.

    python bench/report_sweep_ctrl_c.py [--runs 3] [--chunk-size 8] [--engines local,processes,dask]

Each run starts ``dpbounds sweep epsilon_poisson ... -o x.csv`` (exact epsilons, chunks of a few
points: each takes seconds, as an exact sweep's do) in a new session, waits until its manifest shows a finished chunk, sends SIGINT to the
whole process group -- what Ctrl-C in a terminal does -- and measures the time until the
process has exited, with its exit status (130 expected) and the chunks its manifest lists.
Target (issue 23): every engine within 2 s, as the default engine.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

import dpbounds


def _env() -> dict[str, str]:
    root = str(pathlib.Path(dpbounds.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def once(engine: str, d: pathlib.Path, chunk: int) -> tuple[float, int, int]:
    out = d / f"{engine}.csv"
    manifest = d / f"{engine}.csv.sweep.json"
    for p in d.glob(f"{engine}.csv*"):
        if p.is_dir():
            for q in p.iterdir():
                q.unlink()
            p.rmdir()
        else:
            p.unlink()
    cmd = [sys.executable, "-m", "dpbounds", "sweep", "epsilon_poisson", "--sigma", "0.6:3:60", "--sample-rate",
           "0.02", "--steps", "2000", "--delta", "1e-5", "--engine", engine, "--workers", "2", "--chunk-size", str(chunk),
           "--no-progress", "-o", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(),
                            start_new_session=True)
    try:
        while proc.poll() is None:
            try:
                if json.loads(manifest.read_text())["finished_chunks"] >= 1:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.01)
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=300)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return elapsed, proc.returncode, json.loads(manifest.read_text())["finished_chunks"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--chunk-size", type=int, default=8)
    ap.add_argument("--engines", default="local,processes,dask")
    a = ap.parse_args()
    print(f"time from Ctrl-C to exit, best and worst of {a.runs}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as d:
        for engine in a.engines.split(","):
            runs = [once(engine, pathlib.Path(d), a.chunk_size) for _ in range(a.runs)]
            times = [r[0] for r in runs]
            print(f"  --engine {engine:9s}: {min(times):.2f} to {max(times):.2f} s; exit {sorted({r[1] for r in runs})}; "
                  f"chunks saved {[r[2] for r in runs]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
