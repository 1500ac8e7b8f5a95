"""The RDP -> (eps, delta) conversions round towards the safe side (issue 14).

Reference: the conversion of the very doubles given, in mpmath at 50 digits.  Every returned
epsilon / delta must be >= that exact value, and at most K ulp of the objective's largest term
above it.  Checked at hard points (huge orders, where the conversion term is below half an ulp
of the RDP value; tiny delta; huge RDP; orders next to 1 and beyond 2^53) and on a seeded
random sample spanning every magnitude.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from dpbounds import rdp
from dpbounds.rdp import _outward

U = 2.0 ** -52   # "ulp" of a value x below means U * |x| (the convention of the kernel tests)
K_EPS = 8        # claimed: eps at most 8 ulp of its largest term above the exact value
K_LOGDELTA = 8   # claimed: log delta at most 8 ulp of its largest term (+ 4 ulp of delta) above


def _exact(a: float, r: float, x: float, improved: bool) -> tuple[mp.mpf, mp.mpf, mp.mpf, mp.mpf]:
    """Exact eps(delta = x), its largest term, log delta(eps = x), its largest term (mpmath, 50 digits)."""
    with mp.workdps(50):
        a_, r_, x_ = mp.mpf(a), mp.mpf(r), mp.mpf(x)
        if a_ == mp.inf:
            eps, se = r_, abs(r_)
            ld = mp.inf if r_ > x_ else -mp.inf
            sd = mp.mpf(0)
        else:
            l1 = mp.log(1 - 1 / a_)
            if improved:
                eps = r_ + l1 - (mp.log(x_) + mp.log(a_)) / (a_ - 1)
                se = max(abs(r_), abs(l1), abs(mp.log(x_)) / (a_ - 1), abs(mp.log(a_)) / (a_ - 1))
                ld = (a_ - 1) * (r_ - x_ + l1) - mp.log(a_)
                sd = max(abs((a_ - 1) * r_), abs((a_ - 1) * x_), abs((a_ - 1) * l1), abs(mp.log(a_)))
            else:
                eps = r_ - mp.log(x_) / (a_ - 1)
                se = max(abs(r_), abs(mp.log(x_) / (a_ - 1)))
                ld = (a_ - 1) * (r_ - x_)
                sd = max(abs((a_ - 1) * r_), abs((a_ - 1) * x_))
        if improved:
            eps = max(eps, 0)
            if x_ ** 2 >= -mp.expm1(-r_):
                eps = mp.mpf(0)
            if r_ > 0:
                ld = min(ld, mp.log(-mp.expm1(-r_)) / 2)
            else:
                ld = -mp.inf
        ld = min(ld, 0)
        # the total-variation branch's log is a term of its own when it decides
        return eps, se, ld, max(sd, abs(ld)) if ld > -mp.inf else sd


def _eps_excess(a: float, r: float, d: float, improved: bool) -> float:
    """Assert epsilon >= exact at one point; return its excess in ulp of the largest term."""
    conv = "improved" if improved else "classic"
    eps_ex, se, _, _ = _exact(a, r, d, improved)
    e = rdp.epsilon([r], [a], d, conv)
    assert mp.mpf(e) >= eps_ex, (a, r, d, conv, e, eps_ex)
    return float((mp.mpf(e) - eps_ex) / (U * se)) if se > 0 else 0.0


def _logdelta_excess(a: float, r: float, eps: float, improved: bool) -> float:
    """Assert delta >= exact at one point; return the excess of log delta beyond 4 ulp of
    delta, in ulp of max(1, its largest term)."""
    conv = "improved" if improved else "classic"
    _, _, ld_ex, sd = _exact(a, r, eps, improved)
    d = rdp.delta([r], [a], eps, conv)
    with mp.workdps(50):
        d_ex = mp.exp(ld_ex) if ld_ex > -mp.inf else mp.mpf(0)
        assert mp.mpf(d) >= d_ex, (a, r, eps, conv, d, d_ex)
        if d_ex == 0:
            assert d == 0.0, (a, r, eps, conv, d)
            return 0.0
        if d_ex < 2.0 ** -1022:
            # subnormal: at most 3 subnormal steps above (exp's rounding there is absolute, and an
            # exact value below the smallest subnormal answers at least the smallest)
            assert d <= max(float(d_ex) * (1 + 1e-12), 0.0) + 3 * 2.0 ** -1074, (a, r, eps, conv, d, d_ex)
            return 0.0
        return max(float((mp.log(mp.mpf(d)) - ld_ex - 4 * U) / (U * max(sd, 1))), 0.0)


def _check_point(a: float, r: float, x: float, improved: bool) -> tuple[float, float]:
    """Both conversions at one point (x is delta for epsilon, epsilon for delta)."""
    return _eps_excess(a, r, x, improved), _logdelta_excess(a, r, x, improved)


HARD = [
    # the fuzz finding: the term 8e-14 is below half an ulp of the RDP value 9e5
    (9.00719925e15, 897687.35876041, 2.2250738585072014e-308),
    (9.00719925e15, 897687.35876041, 1e-5),
    (2.0 ** 53 + 2, 3.0, 1e-300),          # a - 1 rounds
    (1e300, 1e10, 5e-324),                 # 1/a and the term subnormal-ish
    (1.7e308, 0.5, 1e-300),
    (1.0 + 2.0 ** -52, 1e-3, 0.5),         # next order after 1: 1/(a - 1) = 2^52
    (1.0 + 1e-9, 1e-12, 1e-3),
    (2.0, 1e300, 1e-5),                    # huge RDP
    (2.0, 1.7e308, 1e-5),
    (64.0, 5e-324, 0.5),                   # subnormal RDP
    (64.0, 0.0, 1e-5),                     # zero RDP
    (3.0, 0.7, 5e-324),                    # smallest delta
    (np.inf, 0.3, 1e-6),
    (1e4, 1e-4, 1e-300),
    (32.0, 12.5, 1e-10),
]


@pytest.mark.parametrize("improved", [False, True], ids=["classic", "improved"])
@pytest.mark.parametrize("a, r, x", HARD)
def test_hard_points(a: float, r: float, x: float, improved: bool) -> None:
    ex_e, ex_d = _check_point(a, r, x, improved)
    assert ex_e <= K_EPS and ex_d <= K_LOGDELTA, (ex_e, ex_d)


def test_fuzz_finding_delta_of_epsilon() -> None:
    # the conversions are consistent on the safe side: delta(epsilon(delta)) <= delta
    for a, r, d in HARD[:4]:
        for conv in ("classic", "improved"):
            e = rdp.epsilon([r], [a], d, conv)
            assert rdp.delta([r], [a], e, conv) <= d, (a, r, d, conv)


def _sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    am1 = 10.0 ** rng.uniform(-10, 16, n)
    a = np.where(rng.random(n) < 0.3, np.round(1.0 + 10.0 ** rng.uniform(0, 4, n)), 1.0 + am1)
    r = 10.0 ** rng.uniform(-12, 8, n)
    d = 10.0 ** rng.uniform(-307, np.log10(0.5), n)
    e = 10.0 ** rng.uniform(-12, 3, n)
    return a, r, d, e


# one sample of 1500 points (~5 s of mpmath): its first 300 in the fast suite, the rest in the slow tier
@pytest.mark.parametrize("part", [slice(0, 300), pytest.param(slice(300, 1500), marks=pytest.mark.slow)],
                         ids=["first300", "rest"])
def test_random_sample_never_below_and_within_k_ulp(part, record_accuracy) -> None:  # type: ignore[no-untyped-def]
    a, r, d, e = (x[part] for x in _sample(1500, 20261202))
    worst_e = worst_d = 0.0
    for i in range(a.size):
        for improved in (False, True):
            ex_e = _eps_excess(float(a[i]), float(r[i]), float(d[i]), improved)
            ex_d = _logdelta_excess(float(a[i]), float(r[i]), float(e[i]), improved)
            worst_e, worst_d = max(worst_e, ex_e), max(worst_d, ex_d)
    record_accuracy("dpbounds.rdp.epsilon", worst_e, "ulp", "1500 random points x 2 conversions, above the exact value")
    record_accuracy("dpbounds.rdp.delta", worst_d, "ulp", "1500 random points x 2 conversions, log delta above the exact one")
    assert worst_e <= K_EPS and worst_d <= K_LOGDELTA, (worst_e, worst_d)


def test_arrays_and_curves_match_the_scalar_guarantee() -> None:
    # a curve over many orders and a delta array: the minimum of values each >= its exact
    # objective is >= the exact minimum; arrays give the scalar answers element by element
    a, r, d, _ = _sample(40, 7)
    for conv, improved in (("classic", False), ("improved", True)):
        got = rdp.epsilon(r, a, d[:5], conv)
        for j in range(5):
            exact = min(_exact(float(a[i]), float(r[i]), float(d[j]), improved)[0] for i in range(40))
            assert mp.mpf(float(got[j])) >= exact
            assert got[j] == rdp.epsilon(r, a, float(d[j]), conv)


@pytest.mark.parametrize("conversion", ["classic", "improved"])
def test_rdp_accountant_rounds_towards_the_bound(conversion: str) -> None:
    orders = np.array([1.5, 2.0, 8.0, 64.0, 1e4, 9.00719925e15])
    acc = rdp.RDPAccountant(orders=orders, conversion=conversion).compose(rdp.Gaussian(1e-5), 1.0)
    curve = np.asarray(acc.rdp(orders))
    improved = conversion == "improved"
    for d in (1e-5, 2.2250738585072014e-308):
        exact = min(_exact(float(o), float(c), d, improved)[0] for o, c in zip(orders, curve))
        assert mp.mpf(acc.get_epsilon(d)) >= exact
        assert acc.get_epsilon(d) == rdp.epsilon(curve, orders, d, conversion)
    for e in (1.0, 1e9):
        with mp.workdps(50):
            exact = min(mp.exp(_exact(float(o), float(c), e, improved)[2]) for o, c in zip(orders, curve))
        assert mp.mpf(acc.get_delta(e)) >= exact
        assert acc.get_delta(e) == rdp.delta(curve, orders, e, conversion)
        assert acc.get_delta_bracket(e).upper == acc.get_delta(e)


def test_total_variation_shortcut_only_when_certain() -> None:
    # delta^2 a hair below 1 - e^{-rdp}: the shortcut does not apply exactly, eps must not be 0
    r = 1e-10
    with mp.workdps(50):
        thr = mp.sqrt(-mp.expm1(-mp.mpf(r)))
    d_below = float(thr) * (1 - 4e-16)
    assert rdp.epsilon([r], [2.0], d_below, "improved") > 0
    # clearly above the threshold it applies (eps = 0 is then exact)
    assert rdp.epsilon([r], [2.0], float(thr) * (1 + 1e-14), "improved") == 0.0


def test_numpy_elementary_functions_within_the_assumed_bound() -> None:
    # the error bounds of rdp/_outward.py assume numpy's log, log1p, expm1 and exp are within
    # _F (4 ulp) relative on this build: measure it against mpmath over every magnitude
    rng = np.random.default_rng(3)
    x = 10.0 ** rng.uniform(-300, 300, 3000)
    small = rng.uniform(-700, 700, 3000)
    cases = [(np.log, mp.log, x), (np.log1p, mp.log1p, x), (np.log1p, mp.log1p, -rng.uniform(0, 1, 3000)),
             (np.expm1, mp.expm1, rng.uniform(-700, 700, 3000)), (np.expm1, mp.expm1, 10.0 ** rng.uniform(-300, 0, 3000)),
             (np.exp, mp.exp, small)]
    worst = 0.0
    with mp.workdps(40):
        for f, g, xs in cases:
            ys = f(xs)
            for xi, yi in zip(xs, ys):
                ref = g(mp.mpf(float(xi)))
                if ref != 0 and abs(ref) >= 2.0 ** -1022:
                    worst = max(worst, float(abs((mp.mpf(float(yi)) - ref) / ref)))
    assert worst <= _outward._F, worst / U


def test_exp_up_is_never_below_and_zero_only_at_minus_inf() -> None:
    xs = np.array([-np.inf, -1e308, -800.0, -745.2, -708.5, -1.0, -1e-300, 0.0])
    got = _outward.exp_up(xs)
    with mp.workdps(50):
        for x, y in zip(xs, got):
            assert mp.mpf(float(y)) >= (mp.exp(mp.mpf(float(x))) if x > -math.inf else 0)
    assert got[0] == 0.0 and np.all(got[1:] > 0) and got[-1] == 1.0
