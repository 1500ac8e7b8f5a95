"""Ctrl-C: every long computation stops within 0.2 s of SIGINT (and raises KeyboardInterrupt).

The compiled loops run without the GIL, where CPython cannot raise KeyboardInterrupt; they
look for a pending signal between blocks of work (dpbounds/_interrupt.pxd).  Each test runs
one long call in a subprocess, sends SIGINT once the call is under way, and measures the time
from the signal to the moment the child's ``except KeyboardInterrupt`` runs (both read the
system-wide monotonic clock, so interpreter shutdown is not counted).  The call is made long
(several seconds unloaded) so that it cannot finish before the signal; the child reports
"done" if it did, and the test fails then, since it would have measured nothing.

Margin on a loaded machine: a scheduling hiccup can delay one delivery; each case is tried
up to three times and the best latency must be < 0.2 s.  A loop that does not look for
signals fails all three (it ignores Ctrl-C for seconds).

The in-process tests check the mechanism without timing: SIGINT from a helper thread stops a
raw ufunc early (the tail of ``out=`` is never written) and the exception is the
KeyboardInterrupt itself, whichever numpy loop path (contiguous, strided, buffered casts,
``where=``, the paired Theorem 3.1 loop) runs.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable

import numpy as np
import pytest

from dpbounds import ufuncs

# xdist_group: under pytest-xdist (-n 2 --dist loadgroup) the latency measurements run one after
# another in one worker, so that two of them never compete for the cores their children need
pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
              pytest.mark.xdist_group("sigint_latency")]

LATENCY = 0.2  # seconds from SIGINT to KeyboardInterrupt (the limit docs/outer.md states)

_CHILD = r'''
import sys, time, warnings
import numpy as np
import dpbounds
from dpbounds import ufuncs
{setup}
sys.stdout.write("go\n"); sys.stdout.flush()
try:
    {call}
    print("done")
except KeyboardInterrupt:
    print("interrupted", repr(time.monotonic()))
'''


def _latency_once(setup: str, call: str, wait: float) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.Popen([sys.executable, "-c", _CHILD.format(setup=setup, call=call)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = p.stdout.readline() if p.stdout else ""
        assert line == "go\n", (line, p.communicate()[1])
        time.sleep(wait)  # the call is under way
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    words = out.split()
    assert words and words[0] == "interrupted", f"the call finished before the signal or failed: {out!r} {err!r}"
    return float(words[1]) - t0


def _latency(setup: str, call: str, wait: float = 0.4) -> float:
    best = float("inf")
    for _ in range(3):
        best = min(best, _latency_once(setup, call, wait))
        if best < LATENCY:
            break
    return best


# (setup, call): each call runs for several seconds on an unloaded machine
LONG_CALLS = {
    # the example: a rounds_required grid (raw ufunc and validated wrapper)
    "ufunc rounds_required grid": ("x = np.full((3000, 1000), 1.0)", "ufuncs.rounds_required_exact(x, 1e-5)"),
    "rounds_required grid": ("s = np.linspace(0.8, 2.0, 3000)[:, None]", "dpbounds.rounds_required(s, np.full(1000, 1e-5))"),
    # numpy's buffered path (float32 cast): many short inner-loop calls
    "ufunc buffered cast": ("x = np.full((3000, 1000), 1.0, dtype=np.float32)", "ufuncs.rounds_required_exact(x, 1e-5)"),
    "ufunc strided where=": ("x = np.full((1000, 6000), 1.0)[:, ::2]; o = np.empty_like(x)",
                             "ufuncs.rounds_required_exact(x, 1e-5, out=o, where=x > 0)"),
    # hand-written kernels of the without-replacement RDP bounds (_kernels_rdp.pxi): order by order
    # (wor_gaussian), and the integer-order tables (O(amax^2) terms: wor_table, pv_logd)
    "rdp wor_gaussian orders": ("from dpbounds import rdp; a = np.linspace(2, 2000, 1_000_000)",
                                "rdp.subsampled_gaussian_wor(a, 1.0, 0.01, bound='theorem9')"),
    "rdp wor_table": ("from dpbounds import rdp",
                      "rdp.subsampled_wor(np.array([6e4]), rdp.Gaussian(1.0), 0.01, bound='theorem9')"),
    "rdp pv_logd": ("from dpbounds import _kernels; ls = np.log(np.arange(1, 100_001, dtype=float))",
                    "_kernels.pv_logd(ls)"),
    # Python-level loops around short compiled calls (signals land between bytecodes); kept
    # here so that a future single long call inside them is caught
    # (1500 orders: ~15 s of quadrature, under the work limit that refuses 40,000 of them at once)
    "rdp accountant small sigma": ("from dpbounds import rdp; o = np.linspace(1.01, 200, 1_500)",
                                   "rdp.RDPAccountant(orders=o).compose(rdp.PoissonGaussian(0.02, 0.01), 10).get_epsilon(1e-5)"),
    "poisson accountant fine lattice": ("", "dpbounds.PoissonAccountant(noise_multiplier=1.0, sample_rate=1e-2, "
                                            "steps=10000, tolerance=1e-7, max_lattice=2**24).get_epsilon(1e-5)"),
    # a history of 400 noise levels: hundreds of lattice compositions (tens of seconds)
    "random allocation accountant many noise levels": (
        "acc = dpbounds.RandomAllocationAccountant()\n"
        "for i in range(40_000): acc.step(noise_multiplier=1.0 + i // 100 / 400, sample_rate=1 / 100)",
        "acc.get_epsilon(1e-5)"),
    # the small-sigma single-epoch law behind gdp_mu: log-domain convolutions of up to ~0.5 s each
    # (the C core asks the watch between its nodes)
    "random allocation gdp_mu small sigma": ("", "[dpbounds.RandomAllocationAccountant(0.5 + i / 1000, 300, 1).gdp_mu() "
                                                 "for i in range(20)]"),
    "calibrate_noise": ("", "[dpbounds.calibrate_noise(2.0 + i / 10, 1e-5, dataset_size=60000, batch_size=256, "
                            "epochs=10) for i in range(40)]"),
    # one call: windows of up to 2**22 binomial terms (composition.WINDOW_MAX), ~30 s at k = 1e11
    "composition optimal large k": ("", "dpbounds.composition.optimal(0.001, 0.0, 10**11, 1e-5)"),
}


@pytest.mark.parametrize("name", sorted(LONG_CALLS))
def test_sigint_latency(name: str) -> None:
    setup, call = LONG_CALLS[name]
    assert _latency(setup, call) < LATENCY


# ---------------------------------------------------------------- in-process, no timing


def _interrupt_soon(delay: float) -> threading.Thread:
    def fire() -> None:
        time.sleep(delay)
        os.kill(os.getpid(), signal.SIGINT)
    th = threading.Thread(target=fire)
    th.start()
    return th


def _stops_early(run: Callable[[], Any], out: np.ndarray, delay: float = 0.05) -> None:
    """``run`` (which writes ``out``, prefilled with NaN) raises KeyboardInterrupt and leaves part unwritten.

    The signal always lands inside ``pytest.raises``: if the call finished first, the block waits
    for the helper thread to send it.  (Left pending, it would interrupt whatever runs next -- the
    next test, or pytest itself.)  A loaded machine can start the helper thread only after the
    call has finished; each case is tried up to three times, as the latency tests are.
    """
    for _ in range(3):
        out[...] = np.nan
        th = _interrupt_soon(delay)
        try:
            with pytest.raises(KeyboardInterrupt):
                try:
                    run()
                finally:
                    th.join()  # the signal has been sent when this returns
                time.sleep(5.0)  # only reached if the call finished first: the signal lands here
        finally:
            th.join()
        flat = np.asarray(out).ravel()
        if np.isnan(flat[-1]):
            assert not np.isnan(flat[0])
            return
    pytest.fail("the loop ran to the end despite the signal, three times")


def test_plain_loop_stops() -> None:
    x = np.full(2_000_000, 1.0)
    o = np.empty_like(x)
    _stops_early(lambda: ufuncs.rounds_required_exact(x, 1e-5, out=o), o)


def test_buffered_loop_stops() -> None:
    x = np.full(2_000_000, 1.0, dtype=np.float32)
    o = np.empty(x.shape)
    _stops_early(lambda: ufuncs.rounds_required_exact(x, 1e-5, out=o), o)


def test_paired_theorem31_loop_stops() -> None:
    # sigma varies so that every element is evaluated; two outputs (value, status)
    s = np.linspace(0.8, 3.0, 5_000_000)
    o = np.empty_like(s)
    st = np.empty(s.shape, dtype=np.int8)
    _stops_early(lambda: ufuncs._delta_bound_checked_exact(s, 1e6, out=(o, st)), o, delay=0.01)


def test_uninterrupted_results_unchanged() -> None:
    # the blocks and the signal looks change nothing: every element equals its scalar evaluation
    s = np.geomspace(0.5, 5.0, 4099)
    got = ufuncs.rounds_required_exact(s, 1e-5)
    want = np.array([ufuncs.rounds_required_exact(v, 1e-5) for v in s[:: 97]])
    assert np.array_equal(got[:: 97], want)
    got2 = ufuncs.delta_bound_exact(s, 1e6)
    want2 = np.array([ufuncs.delta_bound_exact(v, 1e6) for v in s[:: 97]])
    assert np.array_equal(got2[:: 97], want2, equal_nan=True)


def test_wor_chunks_unchanged() -> None:
    # the integer-order tables are filled in chunks of orders with looks for Ctrl-C between them:
    # entry j depends on the base curve up to j (+1 for "improved") only, so a table computed in
    # one chunk (short) equals the same orders of a long table computed in several
    from dpbounds import _kernels
    tab = np.arange(0, 4002, dtype=float) / (2 * 1.3 ** 2)
    tab[:2] = 0.0
    g = np.array([0.001, 0.05, 1.0])
    for b in (0, 1, 2):
        long_ = _kernels.wor_table(tab, np.inf, g, b)
        short = _kernels.wor_table(tab[:402], np.inf, g, b)
        k = 400 if b == 1 else 401
        assert np.array_equal(long_[:, 2:k], short[:, 2:k])
    ls = np.log(np.arange(1, 4001, dtype=float))
    assert np.array_equal(_kernels.pv_logd(ls)[:300], _kernels.pv_logd(ls[:300]), equal_nan=True)
    # orders one by one against one call over all of them
    a = np.linspace(2, 3000, 257)
    got = _kernels.wor_gaussian(a, 0.9, 0.02, 1)
    assert np.array_equal(got, np.array([_kernels.wor_gaussian(v, 0.9, 0.02, 1) for v in a]))
