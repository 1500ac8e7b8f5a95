"""The sweep's element-wise path now against its chunk evaluation at an earlier git revision.

    python bench/report_sweep_against.py REV [--points 1e7] [--repeat 9] [--clock cpu|wall]

Same grids as bench/report_sweep_overhead.py (delta_bound, the issue's sigma 0.5:4 x rounds
1e3:1e9 grid with 14% invalid points, and an all-valid one), in one process: the raw ufunc on
the flattened points, ``dpbounds.sweep`` with ``src/dpbounds/sweeps/_evaluate.py`` as of REV
(loaded from git under another module name and put in place of the engine's chunk function),
and ``dpbounds.sweep`` as it is -- interleaved, minimum of each, overhead relative to the raw
ufunc.  (This tree's in-memory sweep computes the reasons when they are read; REV's chunk
function computes them with the values, so the comparison includes that.)  The rest of the package (the writers, the kernels) is the current one.  Both sweeps'
values, valid and reason columns are compared bit for bit first.  For a REV whose
``_evaluate.py`` takes the same Plan (true since the element-wise path was introduced).
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import dpbounds
from dpbounds import ufuncs
from dpbounds.sweeps import _engines, _evaluate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_sweep_overhead import ELEMENTWISE, grid  # noqa: E402


def load_at(rev):
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True,
                          cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    src = subprocess.run(["git", "show", f"{rev}:src/dpbounds/sweeps/_evaluate.py"], capture_output=True,
                         text=True, check=True, cwd=root).stdout
    path = os.path.join(tempfile.mkdtemp(), "evaluate_at_rev.py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("evaluate_at_rev", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["evaluate_at_rev"] = mod   # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rev")
    ap.add_argument("--points", type=float, default=1e7)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    a = ap.parse_args()
    clock = time.process_time if a.clock == "cpu" else time.perf_counter
    old = load_at(a.rev)
    n_s = 1000
    n_m = int(a.points) // n_s
    print(f"delta_bound element-wise, {n_s} sigma x {n_m} rounds, best of {a.repeat} (interleaved, {a.clock} time); "
          f"load average {os.getloadavg()[0]:.1f}")
    for label, s_lo, m_lo in (("issue grid", 0.5, 1e3), ("all-valid grid", 1.0, 1e6)):
        s, m = grid(n_s, n_m, s_lo, m_lo)
        S, M = np.repeat(s, m.size), np.tile(m, s.size)

        def sweep_with(chunk_fn):
            def run():
                # the engine's keywords (stop=, reasons=) are this tree's: an older chunk function
                # gets the arguments it takes, and computes the reasons at once
                _engines.evaluate_chunk = chunk_fn if chunk_fn is _evaluate.evaluate_chunk else \
                    (lambda plan, i, out=None, **_: _evaluate.ChunkResult(**vars(chunk_fn(plan, i, out))))
                try:
                    return dpbounds.sweep(ELEMENTWISE, sigma=s, rounds=m, progress=False)
                finally:
                    _engines.evaluate_chunk = _evaluate.evaluate_chunk
            return run

        runs = {"raw": lambda: ufuncs.delta_bound_exact(S, M),
                a.rev: sweep_with(old.evaluate_chunk), "now": sweep_with(_evaluate.evaluate_chunk)}
        got = [runs[k]() for k in (a.rev, "now")]
        for col in ("delta_bound", "valid", "reason"):
            x, y = (np.asarray(g[col]) for g in got)
            same = np.array_equal(x.view(np.uint64), y.view(np.uint64)) if x.dtype == np.float64 else \
                np.array_equal(x, y)
            assert same, col
        del got
        times = {k: [] for k in runs}
        for _ in range(a.repeat):
            for k, f in runs.items():
                t0 = clock()
                f()
                times[k].append(clock() - t0)
        raw = min(times["raw"])
        print(f"  {label}: " + "; ".join(f"{k} {min(v) * 1e9 / S.size:.1f} ns/pt ({min(v) / raw - 1:+.1%})"
                                        for k, v in times.items()))
    print(f"  load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
