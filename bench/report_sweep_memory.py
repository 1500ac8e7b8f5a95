"""Peak RSS of a 10^8-point closed-form sweep streamed to Parquet (must stay <= 500 MB).

    python bench/report_sweep_memory.py [--points 1e8] [--keep]

Runs ``dpbounds.sweep("delta_bound", sigma=10^4 values, rounds=10^4 values, out=...parquet)``
in a child process and reads the child's peak resident set size from
``resource.getrusage(RUSAGE_CHILDREN)`` (what ``/usr/bin/time -v`` reports as "Maximum resident
set size"); also the same for a 10^6-point sweep, and the interpreter + imports alone.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

CHILD = """
import sys, numpy as np, dpbounds
from dpbounds.sweeps import parse_axis
n_s, n_m, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if n_s:
    s = np.linspace(0.5, 4.0, n_s)
    m = np.rint(np.geomspace(1e3, 1e12, n_m))   # distinct integers at this density
    assert np.unique(m).size == n_m
    dpbounds.sweep("delta_bound", sigma=s, rounds=m, out=out, progress=False)
"""


def run(n_s, n_m, out):
    env = dict(os.environ)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHILD, str(n_s), str(n_m), out], check=True, env=env)
    # RUSAGE_CHILDREN's maxrss is the largest of the waited-for children: run the big one last
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=float, default=1e8)
    ap.add_argument("--keep", action="store_true", help="keep the Parquet file")
    a = ap.parse_args()
    side = int(round(a.points ** 0.5))
    with tempfile.TemporaryDirectory() as d:
        base, _ = run(0, 0, "")
        small, t_small = run(1000, 1000, os.path.join(d, "s.parquet"))
        big_path = os.path.join(d, "b.parquet")
        big, t_big = run(side, side, big_path)
        size = os.path.getsize(big_path)
        if a.keep:
            os.replace(big_path, "sweep_memory.parquet")
    print(f"peak RSS: interpreter + dpbounds {base:.0f} MiB; 1e6 points {small:.0f} MiB ({t_small:.1f} s); "
          f"{side * side:.3g} points {big:.0f} MiB ({t_big:.1f} s, file {size / 2**20:.0f} MiB)")
    print("limit 500 MB:", "met" if big * 2**20 <= 500e6 else "EXCEEDED")
    return 0 if big * 2**20 <= 500e6 else 1


if __name__ == "__main__":
    sys.exit(main())
