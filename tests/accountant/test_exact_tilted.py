"""Small-sigma regime of the exact accountant: the exponentially tilted series (docs/accountant.md).

Where affordable, small sigma is now served by the log-domain law (tests/accountant/test_exact_logdomain.py);
every test here disables that route (fixture ``tilted_route``) so the tilted series, still used
for large M at small sigma, stays exercised.

References are independent of the Fourier machinery: mpmath quadrature of the tilted
characteristic function, scipy quadrature of the two-term sum (M = 2), seeded Monte Carlo
(M = 10, 100), and the untilted series with its (wide) certified error bars.
"""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpbounds import accountant as A
from dpbounds._kernels import (
    lognormal_cf_m1,
    lognormal_cf_m1_pair_grid,
    lognormal_cf_m1_tilted,
    lognormal_cf_m1_tilted_grid,
)
from dpbounds.accountant import RandomAllocationPLD, exact_max_gap, tradeoff_exact
from dpbounds.accountant._laws import select as S
from dpbounds.accountant._laws.select import fourier_law as _law
from dpbounds.accountant._laws.tilted import TiltedFourierLaw


def _law_best(sigma, M):
    return S.law_for(sigma, M, "curve")
from exact_references import assert_matches_monte_carlo, m2_tradeoff_quadrature, tv_m2_quadrature


@pytest.fixture(autouse=True, scope="module")
def tilted_route():
    """Route small sigma to the tilted series (as for M too large for the log-domain law)."""
    A.clear_cache()
    with pytest.MonkeyPatch.context() as mp_:
        mp_.setattr(S, "LOGDOMAIN_BUDGET_S", -1.0)
        mp_.setattr(S, "LOGDOMAIN_BUDGET_COMPOSE_S", -1.0)
        yield
    A.clear_cache()


# ---------------------------------------------------------------- kernel at t + i lam
def _cf_tilted_mpmath(sigma, t, lam, size_biased):
    # r(tau) = E[e^{i tau (Z-1)}] - 1 - i tau (EZ - 1), tau = t + i lam, by tanh-sinh on the line
    # u + i eta (entire integrand; any eta in the strip gives the same value), 25 digits
    mp.mp.dps = 25
    s = mp.mpf(1) / sigma
    m = (1 if size_biased else -1) * s * s / 2
    tau = mp.mpf(t) + 1j * mp.mpf(lam)
    theta = mp.atan2(lam, t)
    eta = min(mp.pi / 2 - theta, mp.mpf(1.2) * s) / s
    ez_m1 = mp.e ** (s * s) - 1 if size_biased else 0

    def f(u):
        z = u + 1j * eta
        v = mp.exp(s * z + m) - 1
        return mp.exp(-z * z / 2) / mp.sqrt(2 * mp.pi) * mp.exp(1j * tau * v)

    pts = [-14] + list(np.linspace(-8, 8 + 3 * float(s), 25)) + [14 + 3 * float(s)]
    return complex(mp.quad(f, pts) - 1 - 1j * tau * ez_m1)


# the ends of the sigma axis in the fast suite, the middle two slow (mpmath quadrature)
@pytest.mark.parametrize("sigma", [0.3, pytest.param(0.5, marks=pytest.mark.slow),
                                   pytest.param(1.0, marks=pytest.mark.slow), 5.0])
@pytest.mark.parametrize("t,lam", [(0.0, 1.0), (0.05, 8.0), (3.0, 0.05), (40.0, 1.0)])
@pytest.mark.parametrize("sb", [False, True])
def test_cf_tilted_vs_mpmath(sigma, t, lam, sb):
    got = complex(lognormal_cf_m1_tilted(sigma, np.array([t]), lam, sb)[0])
    ref = _cf_tilted_mpmath(sigma, t, lam, sb)
    assert abs(got - ref) <= 1e-12 * abs(ref)


def test_cf_tilted_edges_and_lam0():
    t = np.array([0.3, -0.3, np.nan])
    r = lognormal_cf_m1_tilted(0.5, t, 0.7)
    assert r[0] == np.conj(r[1])
    assert np.isnan(r[2])
    for bad in (-1.0, float("nan"), 1e3):
        assert np.all(np.isnan(lognormal_cf_m1_tilted(0.5, np.array([1.0]), bad)))
    assert np.all(np.isnan(lognormal_cf_m1_tilted(0.1, np.array([1.0]), 1.0)))
    # lam = 0 is the untilted kernel (identical on the real line, quantised contour otherwise)
    tt = np.logspace(-6, 3, 40)
    for sigma in (0.3, 1.0, 3.0):
        a = lognormal_cf_m1(sigma, tt)
        b = lognormal_cf_m1_tilted(sigma, tt, 0.0)
        assert np.max(np.abs(a - b) / np.abs(a)) <= 1e-12
    # raw mode: chi itself, = 1 + r + i tau (EZ - 1) where that sum does not cancel
    tt = np.array([0.0, 0.3, 2.0])
    for sb, ez1 in ((False, 0.0), (True, math.expm1(1.0))):
        raw = lognormal_cf_m1_tilted(1.0, tt, 0.5, sb, True)
        r = lognormal_cf_m1_tilted(1.0, tt, 0.5, sb)
        assert np.allclose(raw, 1 + r + 1j * (tt + 0.5j) * ez1, rtol=0, atol=1e-14)
    # pure tilt: E e^{-lam (Y - 1)} - 1 is real and positive
    z = lognormal_cf_m1_tilted(0.5, np.array([0.0]), 2.0)[0]
    assert z.imag == 0 and z.real > 0


# ---------------------------------------------------------------- kernel on equally spaced t
# dt a power of two: n dt is exact, so the grid kernel (anchor + tabulated steps) and the pointwise
# kernel evaluate the characteristic function at the very same t.
@pytest.mark.parametrize("sigma,lam,dt,n0", [(0.5, 4.26e-6, 2.0 ** -21, 0), (0.5, 4.26e-6, 2.0 ** -21, 380_000),
                                             (0.3, 1e-3, 2.0 ** -13, 0), (0.7, 3e-5, 2.0 ** -19, 2_000),
                                             (1.0, 0.5, 2.0 ** -5, 0)])
@pytest.mark.parametrize("sb,raw", [(False, False), (True, True), (True, False), (False, True)])
def test_cf_tilted_grid_matches_pointwise(sigma, lam, dt, n0, sb, raw):
    cnt = 3000
    got = lognormal_cf_m1_tilted_grid(sigma, n0, cnt, dt, lam, sb, raw)
    ref = lognormal_cf_m1_tilted(sigma, np.arange(n0, n0 + cnt) * dt, lam, sb, raw)
    # both are trapezoid sums on the same nodes: they differ by round-off (measured <= 2e-15
    # relative at sigma <= 0.7, 3e-14 at sigma = 1, lam = 0.5, t up to 94)
    tol = 5e-14 * np.abs(ref) + 1e-16 * (1.0 + np.abs(ref) if raw else 1.0)
    assert np.all(np.abs(got - ref) <= tol)


def test_cf_tilted_grid_large_tilt_vs_mpmath():
    # lam = 2, t up to 750: both kernels are at their round-off floor here, ~eps |tau| sum |w v| in
    # absolute terms (the subtraction of i tau (EZ - 1) = 0 node by node), and differ by up to 1e-11
    # relative; at the points where they differ most, both stay within 1e-15 (1 + |t|) of mpmath
    sigma, lam, dt = 0.4, 2.0, 0.25
    got = lognormal_cf_m1_tilted_grid(sigma, 0, 3000, dt, lam)
    old = lognormal_cf_m1_tilted(sigma, np.arange(3000) * dt, lam)
    for i in np.argsort(np.abs(got - old) / np.abs(old))[-4:]:
        ref = _cf_tilted_mpmath(sigma, i * dt, lam, False)
        assert abs(old[i] - ref) <= 1e-15 * (1 + i * dt)
        assert abs(got[i] - ref) <= 1e-15 * (1 + i * dt)


# the ends of the node axis in the fast suite, the middle two slow (mpmath references)
@pytest.mark.parametrize("sigma,lam", [(0.5, 4.26e-6), (0.3, 1e-3), (0.7, 3e-5)])
@pytest.mark.parametrize("n", [700, pytest.param(5_000, marks=pytest.mark.slow),
                               pytest.param(200_000, marks=pytest.mark.slow), 390_000])
@pytest.mark.parametrize("sb", [False, True])
def test_cf_tilted_grid_vs_mpmath(sigma, lam, n, sb):
    # the regime of the tilted series at sigma = 0.5, M = 1000 (lam ~ 4e-6, t up to ~0.2): r for Y
    # (relative accuracy matters: it is raised to the power M), chi itself for wY
    dt = 2.0 ** -21
    got = complex(lognormal_cf_m1_tilted_grid(sigma, n - 37, 128, dt, lam, sb, sb)[37])
    ref = _cf_tilted_mpmath(sigma, n * dt, lam, sb)
    if sb:
        ref = ref + 1 + 1j * (n * dt + 1j * lam) * math.expm1(1 / sigma ** 2)
    # the pointwise kernel at sigma = 0.3 (wY) is limited by its trapezoid step (~1e-10): compare both
    old = complex(lognormal_cf_m1_tilted(sigma, np.array([n * dt]), lam, sb, sb)[0])
    assert abs(got - ref) <= max(4e-15, 2.0 * abs(old - ref) / abs(ref)) * abs(ref)


@pytest.mark.parametrize("sigma,dt,lam,sb", [(0.3, 2.0 ** -6, 1e-3, False), (0.5, 2.0 ** -6, 0.5, False),
                                             (1.0, 2.0 * math.pi / 6158.36, 0.0, False),
                                             (1.0, 2.0 * math.pi / 6158.36, 0.0, True),
                                             (5.0, 2.0 ** -10, 0.5, False)])
def test_cf_tilted_grid_short_blocks_vs_mpmath(sigma, dt, lam, sb):
    # small |tau| (n < ~1150): blocks shortened to keep |tau| within 1/0.9 of the anchor (r, not
    # raw, the Fourier law's coefficients at lam = 0); the whole range against the pointwise kernel,
    # and the points where the two differ most (the hardest for the block path) against mpmath
    cnt = 1140
    got = lognormal_cf_m1_tilted_grid(sigma, 1, cnt, dt, lam, sb)
    ref = lognormal_cf_m1_tilted(sigma, np.arange(1, cnt + 1) * dt, lam, sb)
    rel = np.abs(got - ref) / np.abs(ref)
    assert np.all(rel <= 5e-14)
    for i in np.argsort(rel)[-3:]:
        mp_ref = _cf_tilted_mpmath(sigma, (i + 1) * dt, lam, sb)
        # measured: <= 1.3e-14 (the pointwise kernel itself is up to 3e-14 off at sigma = 0.3)
        assert abs(got[i] - mp_ref) <= 2e-14 * abs(mp_ref)


def test_cf_tilted_grid_edges():
    assert lognormal_cf_m1_tilted_grid(0.5, 0, 0, 0.1, 1.0).size == 0
    with pytest.raises(ValueError, match="count"):
        lognormal_cf_m1_tilted_grid(0.5, 0, -1, 0.1, 1.0)
    for args in ((0.5, -1, 4, 0.1, 1.0), (0.5, 0, 4, 0.0, 1.0), (0.5, 0, 4, float("nan"), 1.0),
                 (0.5, 0, 4, 0.1, -1.0), (0.1, 0, 4, 0.1, 1.0), (0.5, 0, 4, float("inf"), 1.0)):
        assert np.all(np.isnan(lognormal_cf_m1_tilted_grid(*args)))
    # t = 0 without tilt: r = 0, chi = 1
    assert lognormal_cf_m1_tilted_grid(0.5, 0, 1, 0.1, 0.0)[0] == 0
    assert lognormal_cf_m1_tilted_grid(0.5, 0, 1, 0.1, 0.0, True, True)[0] == 1


# ---------------------------------------------------------------- M = 2: independent quadrature
# ~2 s each: the ends of sigma in the fast suite, the middle in the slow tier
@pytest.mark.parametrize("sigma,cs", [(0.6, (0.5, 1.2, 2.9)),
                                      pytest.param(0.7, (0.5, 1.2, 2.9, 6.0), marks=pytest.mark.slow),
                                      (0.8, (0.5, 1.2, 2.9, 6.0))])
def test_tilted_m2_tv_and_tradeoff_vs_quadrature(sigma, cs):
    assert isinstance(_law_best(sigma, 2.0), TiltedFourierLaw)  # the tilted path is exercised
    tv, e = exact_max_gap(sigma, 2, return_error=True)
    ref = tv_m2_quadrature(sigma)
    assert e <= 1e-9 * ref
    assert abs(tv - ref) <= 1e-8 * ref
    for c in cs:
        a, f_ref = m2_tradeoff_quadrature(sigma, c)
        f, err = tradeoff_exact(a, sigma, 2)
        assert err <= 1e-9
        assert abs(f - f_ref) <= err + 1e-11


# ---------------------------------------------------------------- Monte Carlo at small sigma
@pytest.mark.parametrize("sigma", [0.4, pytest.param(0.5, marks=pytest.mark.slow)])
@pytest.mark.parametrize("M,n", [(10, 1_000_000), pytest.param(100, 200_000, marks=pytest.mark.slow)])
def test_small_sigma_vs_monte_carlo(sigma, M, n):  # Monte Carlo: one case fast, the rest slow
    assert isinstance(_law_best(sigma, float(M)), TiltedFourierLaw)
    assert_matches_monte_carlo(sigma, M, n, 777 + M + int(100 * sigma), (0.05, 0.3, 0.7), err_max=1e-9)


# ---------------------------------------------------------------- error bars and their honesty
@pytest.mark.parametrize("sigma,M", [(0.3, 100), (0.5, 10), (0.4, 1e4), (0.3, 1e9)])
def test_small_sigma_error_bar_grid(sigma, M):
    a = np.array([0.0, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.9, 0.99, 1 - 1e-6, 1.0])
    f, err = tradeoff_exact(a, sigma, M)
    # 1e-9 for a >= 0.01; at a = 1e-3 the threshold sits further out, where the tilt amplifies
    # round-off (e^{lam u}) and the likelihood-ratio slope multiplies it (5e-9 at sigma = 0.3, M = 100)
    assert np.all(err[(a >= 0.01) & (a <= 1)] <= 1e-9)
    assert err[1] <= 1e-8
    assert f[0] == 1.0 and f[-1] == 0.0
    assert np.all(np.diff(f) <= err[1:] + err[:-1])
    assert np.all((f >= 0) & (f <= 1 - a + err))
    # tiny a (possibly beyond the served range): the returned interval must meet the interval
    # [f(1e-3) - err, 1 - a] known to contain the truth (f is non-increasing, f(a) <= 1 - a)
    aa = np.array([1e-12, 1e-9])
    fa, ea = tradeoff_exact(aa, sigma, M)
    assert np.all(np.isfinite(ea))
    assert np.all(fa - ea <= 1 - aa + 1e-15)
    assert np.all(fa + ea >= f[1] - err[1])


def test_tilted_and_untilted_brackets_overlap():
    # sigma = 0.5, M = 100: the untilted series is usable but its window leaves ~1.6e-7 of tail
    # mass; the tilted series must lie inside its bracket and be much narrower (two methods)
    s, M = 0.5, 100.0
    law_u = _law(s, M)
    assert not law_u.truncated
    p_t = RandomAllocationPLD(s, M, 1)
    assert isinstance(p_t._law, TiltedFourierLaw)
    p_u = RandomAllocationPLD(s, M, 1)
    p_u._law = law_u
    for eps in (0.0, 0.5, 1.5, 3.0):
        lo_t, hi_t = p_t.delta(eps)
        lo_u, hi_u = p_u.delta(eps)
        assert lo_u - 1e-12 <= lo_t <= hi_t <= hi_u + 1e-12
        assert hi_t - lo_t <= 1e-9
    tv = exact_max_gap(s, M)
    assert p_t.delta(0.0)[0] - 1e-12 <= tv <= p_t.delta(0.0)[1] + 1e-12
    # an epsilon bracket at small sigma (it was (0, inf) / refused before tilting)
    lo, hi = p_t.epsilon(1e-3)
    assert 0 < lo <= hi < math.inf and hi - lo <= 1e-6 * hi


def _phase_exact(n, q):
    """e^{-2 pi i frac(n q)} with n q formed exactly (Veltkamp splitting), in numpy."""
    def split(a):
        t = 134217729.0 * a
        h = t - (t - a)
        return h, a - h
    hi = n * q
    nh, nl = split(n)
    qh, ql = split(np.float64(q))
    lo = ((nh * qh - hi) + nh * ql + nl * qh) + nl * ql
    return np.exp(-2j * np.pi * ((hi - np.floor(hi)) + lo))


def test_tilted_series_kernel_matches_numpy():
    # the C kernel against numpy (outer product of exponentials, as it replaced, but with the phase
    # n q formed exactly: numpy's mod(n q, 1) rounds n q first, ~7e-10 off at xhi after the e^12
    # amplification, while the kernel is within ~1e-12 there); CDF scale, with the e^{lam u}
    # amplitude; G(xlo) = 0 exactly and the density there still from the series
    law = TiltedFourierLaw(0.5, 100.0)
    x = np.array([law.xlo, -50.0, 0.0, 3.0, 250.0, law.xhi])
    u = x - law.xlo
    n = np.arange(1, law.n_eff + 1, dtype=float)
    e = np.array([_phase_exact(n, uu / law.P) for uu in u])
    amp = np.exp(law.lam * u)
    ref = []
    for c, base in ((law.c0, law.base0), (law.c1, law.base1)):
        s_ = c[0].real + 2.0 * (e @ c[1:]).real
        ref.append((amp * s_ - base) / law.P)
    d_ref = amp * (law.b0[0].real + 2.0 * (e @ law.b0[1:]).real) / law.P
    g0, g1, d0 = law.wrapped_cdf_pair(x, density=True)
    assert g0[0] == 0.0 and g1[0] == 0.0
    assert abs(ref[0][0]) <= law.err(law.xlo) and abs(ref[1][0]) <= law.err(law.xlo)
    assert np.all(np.abs(g0[1:] - ref[0][1:]) <= 2e-15 * amp[1:])
    assert np.all(np.abs(g1[1:] - ref[1][1:]) <= 2e-15 * amp[1:])
    assert np.all(np.abs(d0 - d_ref) <= 2e-15 * amp * np.max(np.abs(d_ref)))
    g0b, g1b = law.wrapped_cdf_pair(x)
    assert np.array_equal(g0b, g0) and np.array_equal(g1b, g1)


@pytest.mark.parametrize("sigma,M", [(0.3, 20), (0.4, 6)])
def test_tilted_self_consistency_two_windows(sigma, M):
    # the same CDFs from two different windows/tilts/frequency budgets (different lam, P, N) must
    # agree within the two error bounds; this caught a 1e-9 cancellation in the H1 coefficients
    a = TiltedFourierLaw(sigma, M)
    b = TiltedFourierLaw(sigma, M, cut=1e-14, max_freq=200_000, amp=8.0)
    assert not a.truncated and not b.truncated and abs(a.lam / b.lam - 1) > 0.1
    x = np.array([-0.5 * M, 0.0, 0.5 * M, min(a.xhi, b.xhi)])
    ga0, ga1 = a.wrapped_cdf_pair(x)
    gb0, gb1 = b.wrapped_cdf_pair(x)
    tol = a.err(x) + b.err(x)
    assert np.all(tol[:3] <= 1e-10)
    assert np.all(np.abs(ga0 - gb0) <= tol) and np.all(np.abs(ga1 - gb1) <= tol)


def test_tiny_m_small_sigma_still_honest():
    # sigma = 0.5, M = 2 without the log-domain law: neither series converges within the budget;
    # refused, never a wrong number (the log-domain law serves this case: test_exact_logdomain.py)
    with pytest.raises(ValueError, match="does not converge"):
        exact_max_gap(0.5, 2)
    f, err = tradeoff_exact(0.5, 0.5, 2)
    assert math.isnan(err)


@settings(max_examples=4, deadline=None, derandomize=True)
@given(st.floats(0.3, 0.8), st.integers(20, 10 ** 9))
def test_property_small_sigma_tv_max_gap_and_monotone_delta(sigma, M):
    # TV is the maximal gap of the curve; delta(eps) brackets are non-increasing and contain TV at 0
    try:
        tv, e_tv = exact_max_gap(sigma, M, return_error=True)
    except ValueError:
        return  # refused: never a wrong number
    a = np.linspace(0.02, 0.98, 25)
    f, err = tradeoff_exact(a, sigma, M)
    assert np.all(1 - a - f <= tv + e_tv + err)
    assert np.max(1 - a - f + err) >= tv - e_tv - 0.05  # the grid gets near the maximum
    pld = RandomAllocationPLD(sigma, M, 1)
    prev = (1.0, 1.0)
    for eps in (0.0, 0.05, 0.5, 2.0, 6.0):
        lo, hi = pld.delta(eps)
        assert 0 <= lo <= hi <= 1
        # the true delta is non-increasing: each bracket's lower end stays below the previous upper end
        assert lo <= prev[1] + 1e-12
        prev = (lo, hi)
    lo0, hi0 = pld.delta(0.0)
    assert lo0 - 1e-12 <= tv <= hi0 + 1e-12


@pytest.fixture(scope="module")
def law_05_1000():
    return TiltedFourierLaw(0.5, 1000.0)


def test_tilted_trimmed_series_within_its_bound(law_05_1000):
    # point evaluations sum only n < n_keep: the terms left out, summed by numpy with exact phases,
    # stay within the certified e^{lam u} _trim_unit, and kept + left out = the full kernel sum
    from dpbounds._kernels import fourier_series_re
    law = law_05_1000
    n_keep = law._ck[0].size + 1
    assert n_keep < 0.8 * law.n_eff and law._trim_unit > 0.0  # the trimming is active here
    x = np.array([-700.0, 0.0, 3000.0, 4.4e4, 0.5 * law.xhi])
    u = x - law.xlo
    amp = np.exp(law.lam * u)
    n = np.arange(n_keep, law.n_eff + 1, dtype=float)
    g_trim = law.wrapped_cdf_pair(x)
    sr = fourier_series_re(u / law.P, [law.c0[1:], law.c1[1:]])
    for k, (c, base) in enumerate(((law.c0, law.base0), (law.c1, law.base1))):
        left_out = np.array([2.0 * (_phase_exact(n, uu / law.P) @ c[n_keep:]).real for uu in u]) * amp / law.P
        assert np.all(np.abs(left_out) <= amp * law._trim_unit)
        g_full = (amp * (c[0].real + 2.0 * sr[k]) - base) / law.P
        assert np.all(np.abs(g_trim[k] + left_out - g_full) <= 2e-15 * amp)


def _delta_both_directions(law, eps):
    """The tilted delta bracket with both directions from the series (as before the add skip)."""
    M, ee = law.M, math.exp(eps)
    y, y2 = M * math.expm1(eps), M * math.expm1(-eps)
    assert law.xlo < y2 and y < law.xhi
    g0, g1 = law.wrapped_cdf_pair([y, y2])
    er = law.err(np.array([y, y2]))
    c_r, c_a = (1 - g1[0]) - ee * (1 - g0[0]), g0[1] - ee * g1[1]
    return (max(c_r - er[0] * (1 + ee), c_a - er[1] * (1 + ee), 0.0),
            min(max(c_r + er[0] * (1 + ee), c_a + er[1] * (1 + ee)), 1.0))


@pytest.mark.parametrize("eps", [0.05, 0.3, 0.6, 0.9, 1.1, 1.4])
def test_tilted_delta_add_skip_matches_both_directions(law_05_1000, eps):
    # where the add direction's Chernoff bound is below the remove direction's lower end its series
    # is skipped: the bracket's lower end is unchanged, and the upper end can only be the remove
    # direction's (the add one is below it)
    lo, hi = law_05_1000.delta(eps)
    lo2, hi2 = _delta_both_directions(law_05_1000, eps)
    assert lo == lo2
    assert hi == hi2 or (hi < hi2 and lo <= hi)


@pytest.mark.parametrize("d", [0.04, 1e-3, 1e-5, 2e-6, 1e-7])
def test_tilted_epsilon_search_start_only_proposes(law_05_1000, d):
    # the coarse table's start changes where the search evaluates, not what the ends certify:
    # each end checked with the law's delta, and the same bracket (to a few % of its width) from a
    # good start, from no start and from a misleading one
    from dpbounds.accountant._invert import invert
    law = law_05_1000
    st = law.eps_start(d)
    assert st is not None
    res = [invert(law.delta, d, st), invert(law.delta, d), invert(law.delta, d, (1.3 * st[0], 5.0 * st[1]))]
    for lo, hi in res:
        assert 0.0 < lo < hi < math.inf
        assert law.delta(hi)[1] <= d <= law.delta(lo)[0]
    w0 = res[1][1] - res[1][0]
    for lo, hi in res:
        assert abs((hi - lo) - w0) <= 0.03 * w0 and max(lo, res[1][0]) <= min(hi, res[1][1])


def test_tilted_delta_at_huge_eps_is_a_bracket():
    # the epsilon search may step to eps ~ 1e4 (where M expm1(eps) overflows): the bracket there
    # is the tail bound's, a valid one, not an overflow
    law = TiltedFourierLaw(0.4, 300.0)
    for eps in (650.0, 800.0, 2e4):
        lo, hi = law.delta(eps)
        assert 0.0 == lo <= hi <= law.delta(40.0)[1] and math.isfinite(hi)


# ---------------------------------------------------------------- both laws in one pass
# sigma 0.3, 1 and 20 in the fast suite, the others slow (each case ~0.4 s: two mpmath references)
@pytest.mark.parametrize("sigma", [0.3, pytest.param(0.5, marks=pytest.mark.slow), 1.0,
                                   pytest.param(2.0, marks=pytest.mark.slow), pytest.param(5.0, marks=pytest.mark.slow),
                                   20.0])
@pytest.mark.parametrize("dt,n0,cnt", [(2.0 * math.pi / 6158.36, 1, 3840), (2.0 ** -10, 5_000, 700),
                                       (2.0 ** -3, 1, 1500)])
def test_cf_pair_grid_matches_single_kernels(sigma, dt, n0, cnt):
    # the pair kernel sums the size-biased law on the H0 nodes (shifted by s, another trapezoid
    # offset and range) and may put small t on the shifted contour where the H0 kernel uses the
    # real line: round-off-level differences only (measured <= 5e-15 relative)
    r0, r1 = lognormal_cf_m1_pair_grid(sigma, n0, cnt, dt)
    s0 = lognormal_cf_m1_tilted_grid(sigma, n0, cnt, dt, 0.0, False)
    s1 = lognormal_cf_m1_tilted_grid(sigma, n0, cnt, dt, 0.0, True)
    rel0 = np.abs(r0 - s0) / np.abs(s0)
    rel1 = np.abs(r1 - s1) / np.abs(s1)
    assert np.all(rel0 <= 5e-14) and np.all(rel1 <= 5e-14)
    # where the two differ most, the pair kernel against mpmath: within 2e-14 relative, or (where
    # |chi| is tiny and both sit at their absolute floor ~1e-15 (1 + t)) twice the single kernel's error
    for rel, r, s, sb in ((rel0, r0, s0, False), (rel1, r1, s1, True)):
        i = int(np.argmax(rel))
        ref = _cf_tilted_mpmath(sigma, (n0 + i) * dt, 0.0, sb)
        assert abs(r[i] - ref) <= max(2e-14 * abs(ref), 2.0 * abs(s[i] - ref)), (i, r[i], s[i], ref)


def test_cf_pair_grid_edges():
    r0, r1 = lognormal_cf_m1_pair_grid(1.0, 0, 0, 0.1)
    assert r0.size == 0 and r1.size == 0
    with pytest.raises(ValueError, match="count"):
        lognormal_cf_m1_pair_grid(1.0, 0, -1, 0.1)
    r0, r1 = lognormal_cf_m1_pair_grid(1.0, 0, 3, 0.1)
    assert r0[0] == 0 and r1[0] == 0  # t = 0
    for bad in ((0.1, 0, 0.1), (float("nan"), 0, 0.1), (1.0, -1, 0.1), (1.0, 0, 0.0), (1.0, 0, float("inf"))):
        r0, r1 = lognormal_cf_m1_pair_grid(bad[0], bad[1], 4, bad[2])
        assert np.all(np.isnan(r0)) and np.all(np.isnan(r1))


def test_epsilon_query_law_reaches_only_where_it_needs():
    # an epsilon(delta) query builds the tilted series only out to where the upper tail is
    # ~delta / 10 (half the coefficients per decade): the same bracket, within both brackets
    from dpbounds.accountant import clear_cache
    from dpbounds.accountant._invert import invert
    from dpbounds.accountant._laws.select import law_for, tilted_reach

    clear_cache()
    for d in (1e-5, 1e-3):
        cheap = law_for(0.5, 1000, "curve", reach=tilted_reach(d))
        full = law_for(0.5, 1000, "curve")
        assert isinstance(cheap, TiltedFourierLaw) and isinstance(full, TiltedFourierLaw)
        assert cheap.n_eff < full.n_eff
        lo_c, hi_c = RandomAllocationPLD(0.5, 1000).epsilon(d)
        lo_f, hi_f = invert(full.delta, d, full.eps_start(d))
        assert lo_c <= hi_f and lo_f <= hi_c          # both certified: they overlap
        assert hi_c - lo_c <= 1e-6 * hi_c             # and far inside the tolerance
