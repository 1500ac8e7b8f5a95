"""Fuzz Renyi DP: dpbounds.rdp's functions (gaussian, laplace, randomized_response,
poisson_gaussian, subsampled_gaussian_wor, epsilon, delta), its mechanism objects and RDPAccountant.

Checked where a call succeeds:

* every RDP value is >= 0 (NaN nowhere) and non-decreasing in the order alpha (on a sorted
  array of orders; relative slack 1e-12: Renyi divergences are monotone in alpha);
* epsilon(...) >= 0 and delta(...) in [0, 1]; for one curve, delta at the returned epsilon is
  <= the target delta (1 + 1e-9): the conversion's answer is sufficient;
* RDPAccountant: get_epsilon >= 0; its bracket has lower <= upper; get_delta in [0, 1];
  get_delta(get_epsilon(delta)) <= delta (1 + 1e-6) (same curve, same orders: the epsilon found
  is sufficient), and epsilon is non-increasing in delta on pairs.

Sizes: the orders are kept <= 256 and sigma >= 0.05 for the Poisson-subsampled Gaussian (the
hang at tiny sigma / huge alpha is a known finding being fixed by another developer), sigma >= 1e-5
for the without-replacement bound (it hangs at sigma = 1e-9: found here, recorded), steps <= 1e6.
The mechanism objects are built only with valid arguments here (that they accept q = 1.5 or
sigma < 0 is the same developer's fix; tests/rdp/test_rdp_fuzz_regressions.py records it).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _main import fuzz, instrument_dpbounds  # noqa: E402

instrument_dpbounds()

import numpy as np  # noqa: E402
from _contract import attempt, check  # noqa: E402
from _inputs import Draw  # noqa: E402

from dpbounds import rdp  # noqa: E402

_ALPHA_MAX = 256.0
_SIGMA_MIN = 0.05
# subsampled_gaussian_wor never returns at sigma = 1e-9 (0.3 s at 1e-6): a finding of this
# harness (tests/rdp/test_rdp_fuzz_regressions.py, xfail); kept out so that a run reports new things
_WOR_SIGMA_MIN = 1e-5


def _orders(d: Draw) -> np.ndarray:
    o = np.sort(np.array([d.double("order") for _ in range(d.int(1, 6))]))
    return o


def _monotone(v: np.ndarray, o: np.ndarray, call: str) -> None:
    v = np.asarray(v, dtype=np.float64)
    check(~np.isnan(v), f"NaN RDP at alpha = {o[np.isnan(v)][:3]}", call)
    check(v >= 0, f"negative RDP {v[v < 0][:3]}", call)
    if v.size > 1:
        drop = np.diff(v) < -1e-12 * np.abs(v[:-1]) - 1e-300
        check(~drop, f"RDP decreases in alpha: {o[:-1][drop][:2]} -> {o[1:][drop][:2]}: "
              f"{v[:-1][drop][:2]} -> {v[1:][drop][:2]}", call)


def fuzz_functions(d: Draw) -> None:
    o = _orders(d)
    which = d.int(0, 4)
    if which == 0:
        s = d.scalar("sigma")
        ok, v = attempt(rdp.gaussian, o, s, names=("alpha", "sigma"))
        call = f"rdp.gaussian({o!r}, {s!r})"
    elif which == 1:
        b = d.scalar("positive")
        ok, v = attempt(rdp.laplace, o, b, names=("alpha", "b"))
        call = f"rdp.laplace({o!r}, {b!r})"
    elif which == 2:
        p = d.scalar("unit")
        ok, v = attempt(rdp.randomized_response, o, p, names=("alpha", "p"))
        call = f"rdp.randomized_response({o!r}, {p!r})"
    elif which == 3:
        s, q, mode = d.scalar("sigma"), d.scalar("unit"), d.pick(("exact", "compat", "bogus"))
        try:
            small = float(np.asarray(s, dtype=np.float64)) < _SIGMA_MIN
        except (TypeError, ValueError, OverflowError):
            small = False
        if small or np.any(o[np.isfinite(o)] > _ALPHA_MAX):
            return
        ok, v = attempt(rdp.poisson_gaussian, o, s, q, mode, names=("alpha", "sigma", "q", "mode"))
        call = f"rdp.poisson_gaussian({o!r}, {s!r}, {q!r}, {mode!r})"
    else:
        s, g, bound = d.scalar("sigma"), d.scalar("unit"), d.pick(("improved", "theorem9", "lower", "x"))
        try:
            tiny = float(np.asarray(s, dtype=np.float64)) < _WOR_SIGMA_MIN
        except (TypeError, ValueError, OverflowError):
            tiny = False
        if tiny or np.any(o[np.isfinite(o)] > _ALPHA_MAX):
            return
        ok, v = attempt(rdp.subsampled_gaussian_wor, o, s, g, bound, names=("alpha", "sigma", "gamma", "bound"))
        call = f"rdp.subsampled_gaussian_wor({o!r}, {s!r}, {g!r}, {bound!r})"
    if ok:
        _monotone(v, o, call)


#: the rounding granularity of a delta rounded up below the normal range (rdp/_outward.py)
_SUBNORMAL_SLACK = 3 * 5e-324


def fuzz_conversion(d: Draw) -> None:
    o = _orders(d)
    r = np.maximum.accumulate(np.abs(np.array([d.double("positive") for _ in o])))
    if d.int(0, 5) == 0:
        r = d.array("positive")
    dl, e = d.scalar("unit"), d.scalar("eps")
    conv = d.pick(("improved", "classic", "other"))
    ok, eps = attempt(rdp.epsilon, r, o, dl, conv, names=("rdp_values", "orders", "delta", "conversion"))
    call = f"rdp.epsilon({r!r}, {o!r}, {dl!r}, {conv!r})"
    if ok:
        ev = np.asarray(eps)
        check(ev >= 0, f"negative epsilon {ev}", call)
        # not through order inf: there the delta conversion drops the total-variation shortcut
        # (a recorded finding: tests/rdp/test_rdp_fuzz_regressions.py), so the round trip is loose
        if ev.ndim == 0 and math.isfinite(float(ev)) and np.all(np.isfinite(o)):
            back = rdp.delta(r, o, float(ev), conv)
            # the objectives are accurate to 4 ulps of their largest term: an error de in epsilon
            # moves delta by a factor exp((alpha - 1) de)
            # (an infinite RDP value makes its order unusable, not the tolerance NaN: finite ones only)
            rv = np.asarray(r, dtype=np.float64)
            rmax = float(np.max(np.abs(rv[np.isfinite(rv)]), initial=0.0))
            rel = 1e-9 + (float(np.max(o)) - 1.0) * 8 * float(np.spacing(rmax + 1.0))
            # delta is rounded up (never below the exact value): below the normal range its
            # granularity is the smallest subnormal, of which it may be up to 3 above
            check(back <= float(dl) * (1 + rel) + _SUBNORMAL_SLACK, f"delta(epsilon) = {back} > {dl}", call)
    ok, dd = attempt(rdp.delta, r, o, e, conv, names=("rdp_values", "orders", "epsilon", "conversion"))
    if ok:
        dv = np.asarray(dd)
        check((dv >= 0) & (dv <= 1), f"delta outside [0, 1]: {dv}", f"rdp.delta({r!r}, {o!r}, {e!r}, {conv!r})")


def _mechanism(d: Draw) -> rdp.Mechanism:
    k = d.int(0, 4)
    s = max(abs(d.double("sigma")), _SIGMA_MIN)
    s = s if math.isfinite(s) else 1.0
    q = min(max(abs(d.double("unit")), 1e-12), 1.0)
    q = q if math.isfinite(q) else 0.5
    if k == 0:
        return rdp.Gaussian(s)
    if k == 1:
        return rdp.PoissonGaussian(s, q, d.pick(("exact", "compat")))
    if k == 2:
        return rdp.SubsampledGaussianWOR(s, q, d.pick(("improved", "theorem9")))
    if k == 3:
        return rdp.Laplace(s)
    return rdp.RandomizedResponse(min(max(q, 0.5 + 1e-9), 1 - 1e-9))


def fuzz_accountant(d: Draw) -> None:
    orders = d.pick((None, None, "default", _orders(d)))
    acc_ok, acc = attempt(rdp.RDPAccountant, orders, d.pick(("improved", "classic", "x")),
                          d.pick((1e4, 256.0, 2.0, d.double("order"))), names=("orders", "conversion", "max_order"))
    if not acc_ok:
        return
    for _ in range(d.int(1, 3)):
        mech = _mechanism(d)
        count = d.pick((1, 10, 1000, d.double("count")))
        ok, _ = attempt(acc.compose, mech, count, names=("count", "mechanism"))
    if d.bool():
        s = d.scalar("sigma")
        try:
            small = abs(float(np.asarray(s, dtype=np.float64))) < _SIGMA_MIN   # the known slow corner
        except (TypeError, ValueError, OverflowError):
            small = False
        if not small:
            attempt(acc.step, noise_multiplier=s, sample_rate=d.scalar("unit"),
                    names=("noise_multiplier", "sample_rate"))
    if len(acc.mechanisms) == 0:
        return
    d1, d2 = sorted((d.double("unit"), d.double("unit")))
    call = f"{acc!r}.get_epsilon({d1!r}, {d2!r})"
    ok1, e1 = attempt(acc.get_epsilon, d1, names=("delta",))
    ok2, e2 = attempt(acc.get_epsilon, d2, names=("delta",))
    if ok1:
        check(e1 >= 0 and not math.isnan(e1), f"epsilon {e1}", call)
        b = acc.get_epsilon_bracket(d1)
        check(b.lower <= b.upper, f"bracket lower > upper: {b}", call)
        if math.isfinite(e1):
            back = acc.get_delta(e1)
            check(0 <= back <= 1, f"delta {back}", call)
            if back > d1 * (1 + 1e-6):
                # get_epsilon's answer must be certified at the order it chose; that get_delta's own
                # order search can miss that order (stopping at the total-variation minimum near
                # alpha = 1) is a recorded finding (tests/rdp/test_rdp_fuzz_regressions.py, xfail)
                _, order = acc.get_epsilon(d1, return_order=True)
                at = rdp.delta(acc.rdp([order]), [order], e1, acc.conversion)
                check(at <= d1 * (1 + 1e-6) + _SUBNORMAL_SLACK, f"get_epsilon({d1}) = {e1} is not certified at its order {order}: "
                      f"delta there {at}", call)
    if ok1 and ok2:
        check(e2 <= e1 * (1 + 1e-9) + 1e-12, f"epsilon increases in delta: {e1} -> {e2}", call)


_FAMILY = (fuzz_functions, fuzz_functions, fuzz_conversion, fuzz_accountant)


def test_one_input(data: bytes) -> None:
    d = Draw(data)
    d.pick(_FAMILY)(d)


if __name__ == "__main__":
    fuzz(test_one_input)
