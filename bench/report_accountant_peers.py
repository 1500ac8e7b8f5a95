"""Random allocation, exact accountant vs PLD_accounting (with numba) on the issue's grid, one run.

    python bench/report_accountant_peers.py [--quick]

sigma in {0.5, 1, 2} x M in {10, 100, 1000} x E in {1, 10}, delta = 1e-5.  Both tools cold
(dpbounds: ``clear_cache()`` first; PLD_accounting: its numba functions compiled by one warm-up
call before timing).  Prints times, the ratio peer/ours, both brackets and which is narrower.
The peer takes minutes at E = 10 with M = 1000; ``--quick`` skips E = 10.
"""
import sys
import time
import warnings

from dpbounds.accountant import RandomAllocationPLD, clear_cache


def main() -> int:
    import PLD_accounting as pa

    quick = "--quick" in sys.argv
    pa.gaussian_allocation_epsilon_range(delta=1e-5, sigma=1.0, num_steps=10, num_epochs=1)  # numba warm-up
    print(f"{'sigma':>5} {'M':>5} {'E':>3} {'ours s':>8} {'peer s':>8} {'ratio':>6} "
          f"{'our width':>10} {'peer width':>10}  ours [lo, hi] / peer [lo, hi]")
    worst = None
    for E in ((1,) if quick else (1, 10)):
        for sigma in (0.5, 1.0, 2.0):
            for M in (10, 100, 1000):
                clear_cache()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time.perf_counter()
                    r = RandomAllocationPLD(sigma, M, E).epsilon(1e-5)
                    to = time.perf_counter() - t
                t = time.perf_counter()
                up, lo = pa.gaussian_allocation_epsilon_range(delta=1e-5, sigma=sigma, num_steps=M, num_epochs=E)
                tp = time.perf_counter() - t
                wo, wp = r.relative_width, (up - lo) / up
                ok = r.lower <= up and lo <= r.upper and wo < wp
                ratio = tp / to
                worst = ratio if worst is None else min(worst, ratio)
                print(f"{sigma:>5} {M:>5} {E:>3} {to:>8.3f} {tp:>8.3f} {ratio:>6.1f} {wo:>10.2e} {wp:>10.2e}  "
                      f"[{r.lower:.6g}, {r.upper:.6g}] / [{lo:.6g}, {up:.6g}]{'' if ok else '  <-- CHECK'}", flush=True)
    print(f"smallest speed ratio peer/ours: {worst:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
