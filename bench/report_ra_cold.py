"""Cold single-epoch random allocation: dpbounds now, an earlier build of it, and PLD_accounting.

    python bench/report_ra_cold.py [--baseline SRC] [--rounds 9] [--reps 5] [--cases all|issue|e1]
                                   [--clock wall|cpu]

Each tool runs in its own worker process (``SRC``: the ``src`` directory of another dpbounds
checkout, built in place, e.g. main's: ``git worktree add /tmp/base main && cd /tmp/base &&
python setup.py build_ext --inplace``).  The workers are asked in turn, case by case and round by
round (interleaved, so that a load spike hits every tool alike), to time ``reps`` cold queries
``RandomAllocationPLD(sigma, M, 1).epsilon(1e-5)`` (every law cache cleared before each:
``dpbounds.accountant.clear_cache()``) or PLD_accounting's ``gaussian_allocation_epsilon_range``
(its numba functions compiled by a warm-up call first); the minimum over all rounds is reported,
with the ratios and the brackets (which must meet).  Under load only the ratios mean much;
``--clock cpu`` times each query by the worker's CPU time (``time.process_time``: every thread
of the process, so numba's too) instead of the wall clock, which waiting for a busy core does not
inflate.  ``--cases issue``: the two cases with figures to reach, (1, 100) and (0.5, 1000).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

# (sigma, M): the cold E = 1 cases of bench/test_bench_accountant.py first
CASES = [(1.0, 100), (0.5, 1000), (1.0, 1_000_000), (2.0, 100), (1.0, 10), (0.8, 1000), (3.0, 10_000)]
E1_CASE = (1.0, 100)
ISSUE_CASES = [(1.0, 100), (0.5, 1000)]

_WORKER = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
kind = sys.argv[1]
clock = time.process_time if sys.argv[2] == "cpu" else time.perf_counter
if kind == "peer":
    import PLD_accounting as pa
    pa.gaussian_allocation_epsilon_range(delta=1e-5, sigma=1.0, num_steps=10, num_epochs=1)  # numba
    def run(sigma, M):
        up, lo = pa.gaussian_allocation_epsilon_range(delta=1e-5, sigma=sigma, num_steps=M, num_epochs=1)
        return lo, up
else:
    from dpbounds import accountant as A
    def run(sigma, M):
        A.clear_cache()
        r = A.RandomAllocationPLD(sigma, M, 1).epsilon(1e-5)
        return float(r.lower), float(r.upper)
    run(1.0, 100)  # imports and first-call set-up (not part of a cold query)
print("ready", flush=True)
for line in sys.stdin:
    sigma, M, reps = json.loads(line)
    best, res = float("inf"), None
    for _ in range(reps):
        t0 = clock()
        res = run(sigma, M)
        best = min(best, clock() - t0)
    print(json.dumps([best, res]), flush=True)
"""


class Worker:
    """A tool in its own process, timing cold queries on request."""

    def __init__(self, kind: str, src: str | None, clock: str = "wall") -> None:
        env = dict(os.environ)
        if src is not None:
            env["PYTHONPATH"] = src
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER, kind, clock], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def time(self, sigma: float, M: int, reps: int) -> tuple[float, tuple[float, float]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([sigma, M, reps]) + "\n")
        self.proc.stdin.flush()
        best, res = json.loads(self.proc.stdout.readline())
        return best, (res[0], res[1])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def measure(cases: list[tuple[float, int]], baseline: str | None, rounds: int, reps: int,
            peer: bool = True, clock: str = "wall"
            ) -> dict[tuple[float, int], dict[str, tuple[float, tuple[float, float]]]]:
    """{case: {tool: (best seconds, (lower, upper))}} for tools "now", "baseline", "peer"."""
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    workers = {"now": Worker("dpbounds", here, clock)}
    if baseline is not None:
        workers["baseline"] = Worker("dpbounds", baseline, clock)
    if peer:
        workers["peer"] = Worker("peer", None, clock)
    out: dict[tuple[float, int], dict[str, tuple[float, tuple[float, float]]]] = {c: {} for c in cases}
    try:
        for _ in range(rounds):
            for c in cases:
                for name, w in workers.items():
                    t, res = w.time(c[0], c[1], reps)
                    if name not in out[c] or t < out[c][name][0]:
                        out[c][name] = (t, res)
    finally:
        for w in workers.values():
            w.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", help="src directory of an earlier dpbounds build")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cases", choices=("all", "issue", "e1"), default="all")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    a = ap.parse_args()
    cases = {"all": CASES, "issue": ISSUE_CASES, "e1": [E1_CASE]}[a.cases]
    out = measure(cases, a.baseline, a.rounds, a.reps, clock=a.clock)
    print(f"cold E = 1, delta = 1e-5, best of {a.rounds} x {a.reps} (interleaved, {a.clock} clock); "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'sigma':>5} {'M':>8} {'now ms':>8} {'base ms':>8} {'base/now':>8} {'peer ms':>8} {'peer/now':>8}"
          "  now [lo, hi] / peer [lo, hi]")
    for c in cases:
        r = out[c]
        tn, (lo, hi) = r["now"]
        tb = r["baseline"][0] if "baseline" in r else float("nan")
        tp, (plo, pup) = r["peer"]
        meet = lo <= pup and plo <= hi
        print(f"{c[0]:>5} {c[1]:>8} {tn * 1e3:>8.2f} {tb * 1e3:>8.2f} {tb / tn:>8.2f} {tp * 1e3:>8.2f} "
              f"{tp / tn:>8.1f}  [{lo:.8g}, {hi:.8g}] / [{plo:.6g}, {pup:.6g}]{'' if meet else '  <-- DISJOINT'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
