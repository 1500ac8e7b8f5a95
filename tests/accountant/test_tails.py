"""Tables of the tail bounds (dpbounds.accountant._laws.tails) against mpmath quadrature."""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from dpbounds.accountant._laws import tails as _tails


@pytest.mark.parametrize("sigma", [0.5, pytest.param(2.0, marks=pytest.mark.slow)])  # ~1 s each
def test_upper_mgf_table_vs_mpmath(sigma: float) -> None:
    # D2(b, lam) = E[e^{lam min(Y, b)}] - 1 - lam, Y = exp(X / sigma - 1 / (2 sigma^2)), X ~ N(0, 1):
    # the part below b by Gauss-Legendre quadrature in mpmath on [-13, x_b] (the Gaussian mass
    # below -13 is < 1e-38), the part above b in closed form
    mp.mp.dps = 30
    lam, _, b, Qb, D2, _ = _tails._mgf_tables(sigma, False)
    s = mp.mpf(1) / sigma
    checked = 0
    for ib in (0, 8, b.size - 1):
        B = mp.mpf(b[ib])
        xb = (mp.log(B) + s * s / 2) / s  # Y <= b  <=>  X <= xb
        assert Qb[ib] == pytest.approx(float(mp.ncdf(-xb)), rel=1e-12)
        pts = mp.linspace(-13, xb, 60)
        for il in range(0, lam.size, 12):
            L = mp.mpf(lam[il])
            if not lam[il] * b[ib] <= 30.0:
                assert D2[ib, il] == np.inf
                continue
            below = mp.quad(lambda x: mp.npdf(x) * (mp.expm1(L * mp.exp(s * x - s * s / 2))
                                                    - L * mp.exp(s * x - s * s / 2)),
                            pts, method="gauss-legendre")
            ref = below + mp.ncdf(-xb) * mp.expm1(L * B) - L * mp.ncdf(s - xb)
            assert abs(D2[ib, il] - float(ref)) <= 1e-9 * abs(float(ref)), (ib, il, D2[ib, il], ref)
            checked += 1
    assert checked >= 10


@pytest.mark.parametrize("sigma", [1.6, 2.0])
def test_far_tables_where_no_extra_lam_is_needed(sigma: float) -> None:
    # b_max ~ 1e7-1e9 (sigma ~ 1.5-2): 30 / b_max is inside the default lam table, no extension
    # (the extension's point count was negative there: logspace raised)
    lam, _, b, _, _, _ = _tails._mgf_tables(sigma, True)
    lam0, _, b0, _, _, _ = _tails._mgf_tables(sigma, False)
    assert np.array_equal(lam, lam0) and b.size > b0.size and set(b0.tolist()) <= set(b.tolist())
    x = np.array([30.0, 300.0, 3e3, 3e4])
    far, near = _tails.upper_tail_h1(sigma, 100.0, x, far=True), _tails.upper_tail_h1(sigma, 100.0, x)
    # the far table holds every (b, lam) pair of the default one: its minimum is never larger
    assert np.all(far <= near) and np.all(far > 0.0)


def _upper_h0_whole_table(sigma: float, n: float, x: np.ndarray, far: bool) -> np.ndarray:
    # the bound's definition: the smallest of the Chernoff bounds of every (b, lam) pair of the table
    lam, _, b, Qb, _, _ = _tails._mgf_tables(sigma, far)
    expo = _tails._upper_exponent(float(sigma), float(n), far)
    e = np.min(-lam[None, None, :] * x[:, None, None] + expo[None, :, :], axis=2)
    with np.errstate(over="ignore"):
        tot = n * Qb[None, :] + np.exp(np.minimum(e, 0.0))
    return np.minimum(1.0, np.min(tot, axis=1) * 1.01)


@pytest.mark.parametrize("sigma", [0.2, 0.5, 1.0, 2.0, 20.0])
@pytest.mark.parametrize("far", [False, True])
def test_upper_tail_minimiser_search_is_the_table_minimum(sigma: float, far: bool) -> None:
    # upper_tail_h0 looks up the minimising lam through the chord slopes (convexity) instead of
    # scanning the table: the same numbers, over 12 decades of x and n = 1 ... 1e9
    rng = np.random.default_rng(int(sigma * 10) + far)
    x = np.concatenate([np.exp(rng.uniform(math.log(1e-3), math.log(1e12), 300)), [1e-300, 1e300]])
    for n in (1.0, 9.0, 99.0, 1e4, 1e9):
        got = _tails.upper_tail_h0(sigma, n, x, far)
        assert np.array_equal(got, _upper_h0_whole_table(sigma, n, x, far)), (n, far)


_EPS = 2.0 ** -52


def _log_mgf_plus_lam(sigma: float, lam: float) -> tuple[mp.mpf, mp.mpf]:
    """(log E e^{-lam Y} + lam, log E e^{-lam Y}) by mpmath quadrature over the real line.

    The integrand e^{h(u)}, h(u) = -lam e^{s u + m} - u^2 / 2, is log-concave with h'' <= -1, so
    beyond 40 of its peak u* it is below e^{-800} of the peak: the quadrature on u* +- 40, split at
    the peak, is the whole real line's integral to the working precision.  The precision grows as
    lam shrinks (log E e^{-lam Y} + lam ~ lam^2 e^{s^2} / 2 is a difference of numbers near 1)."""
    dps = 30 + 2 * max(0, int(-math.log10(lam)) + 1)
    with mp.workdps(dps):
        s = mp.mpf(1) / sigma
        m = -s * s / 2
        L = mp.mpf(lam)
        u_pk = -mp.lambertw(L * s * s * mp.exp(m)).real / s  # h'(u) = -L s e^{s u + m} - u = 0
        h_pk = -L * mp.exp(s * u_pk + m) - u_pk * u_pk / 2
        val, err = mp.quad(lambda u: mp.exp(-L * mp.exp(s * u + m) - u * u / 2 - h_pk),
                           [u_pk - 40, u_pk - 10, u_pk, u_pk + 10, u_pk + 40], error=True)
        log_mgf = h_pk + mp.log(val) - mp.log(2 * mp.pi) / 2
        # the quadrature's own error estimate: far below a double's resolution of the result
        assert err < mp.mpf(10) ** -20 * val * abs(log_mgf + L), (sigma, lam, err)
        return log_mgf + L, log_mgf


@pytest.mark.parametrize("sigma", [pytest.param(0.3, marks=pytest.mark.slow), 0.5, 1.0, 2.0, 3.0,
                                   pytest.param(5.0, marks=pytest.mark.slow), 10.0, 30.0])  # 0.3, 5: ~1 s
def test_lower_log_mgf_is_an_upper_bound(sigma: float) -> None:
    # The lower-tail Chernoff bound is exp(lam x + n (log E e^{-lam Y} + lam)): the stored
    # exponent (n = 1) must not be below the true one beyond rounding, at every lam of the table
    # up to the largest (1e3), where the mass of e^{-lam Y} lies far in the left tail for sigma
    # >= 3 (the peak of the integrand reaches u ~ -19 near sigma = 19).  Rounding: 16 ulps of the
    # numbers the stored value is formed from (q on the series path, log E e^{-lam Y} and lam on
    # the log path, which cancel); the differences seen are up to 9 ulps, of either sign.
    lam, q, _, _, _, qlog = _tails._mgf_tables(sigma, False)
    expo = _tails._lower_exponent(float(sigma), 1.0)
    for il in [0, 15, 30, 45, 60, 66, 72, 78, 84, 87, lam.size - 1]:
        ref, log_mgf = _log_mgf_plus_lam(sigma, float(lam[il]))
        series = abs(q[il] - lam[il]) < 0.05
        scale = max(abs(q[il]), abs(float(ref))) if series else abs(float(log_mgf)) + lam[il]
        assert expo[il] >= float(ref) - 16 * _EPS * scale, (sigma, lam[il], expo[il], ref)
        # and a bound, not a loose one: the grid and the remainder bounds are sized so that
        # nothing beyond rounding is added
        assert expo[il] <= float(ref) + 16 * _EPS * scale, (sigma, lam[il], expo[il], ref)


def _lower_tail_exact(sigma: float, n: int, c: float) -> mp.mpf:
    """P[Y_1 + ... + Y_n <= c] for n = 1 (closed form) and n = 2 (mpmath quadrature over Y_1)."""
    s = mp.mpf(1) / sigma
    m = -s * s / 2
    c_ = mp.mpf(c)
    u_c = (mp.log(c_) - m) / s  # Y <= c  <=>  u <= u_c
    if n == 1:
        return mp.ncdf(u_c)

    def f(u: mp.mpf) -> mp.mpf:
        r = c_ - mp.exp(s * u + m)
        return mp.ncdf((mp.log(r) - m) / s) * mp.npdf(u) if r > 0 else mp.mpf(0)

    u_half = (mp.log(c_ / 2) - m) / s  # the integrand peaks near Y_1 = Y_2 = c / 2
    return mp.quad(f, [u_c - 40, u_half - 5, u_half, (u_half + u_c) / 2, u_c])


@pytest.mark.parametrize("sigma", [3.0, 5.0, 10.0])
def test_lower_tail_bound_above_exact_deep_probability(sigma: float) -> None:
    # Deep lower tails, where the minimising lam of the Chernoff bound is 30 ... 1e3 (the table's
    # largest) or beyond it: at c = n y(u*_lam), u*_lam the peak of e^{-lam Y} phi(u).  The bound
    # there was below the exact probability at sigma = 5 and 10 (by e^{-3} ... e^{-93}) while the
    # transform stopped at u = -12.
    mp.mp.dps = 30
    s = 1.0 / sigma
    m = -0.5 * s * s
    checked = 0
    for lam in (30.0, 300.0, 1000.0, 3000.0):
        u_pk = -float(mp.lambertw(lam * s * s * math.exp(m)).real) / s
        y_pk = math.exp(s * u_pk + m)
        for n in (1, 2):
            c = n * y_pk
            bound = float(_tails.lower_tail_h0(sigma, float(n), [c - n])[0])
            exact = _lower_tail_exact(sigma, n, c)
            assert 0.0 < float(exact) <= bound < 1.0, (sigma, lam, n, bound, exact)
            checked += 1
    assert checked == 8


@pytest.mark.parametrize("sigma", [0.5, pytest.param(5.0, marks=pytest.mark.slow)])  # ~2 s each
def test_upper_mgf_table_is_an_upper_bound(sigma: float) -> None:
    # One-sided at rounding level, where the node series meets expm1 (lam y ~ 1e-3): a series for
    # e^z - 1 - z stopped after z^4 / 4! would be 1.7e-11 low there (at sigma = 5, b = 44.7,
    # lam = 1e-3, 4.7e-12 below the integral), which this catches.  Rounding: the node sums run over
    # ~10^4 positive terms in sequence, N eps ~ 1e-12 relative.
    mp.mp.dps = 30
    lam, _, b, _, D2, _ = _tails._mgf_tables(sigma, False)
    s = mp.mpf(1) / sigma
    checked = 0
    for ib in (0, 8):
        B = mp.mpf(b[ib])
        xb = (mp.log(B) + s * s / 2) / s
        pts = mp.linspace(-40, xb, 80)  # the Gaussian mass below -40 is < 1e-349
        for il in np.nonzero((lam * b[ib] >= 1e-4) & (lam * b[ib] <= 30.0))[0][::3]:
            L = mp.mpf(lam[il])
            below = mp.quad(lambda x: mp.npdf(x) * (mp.expm1(L * mp.exp(s * x - s * s / 2))
                                                    - L * mp.exp(s * x - s * s / 2)),
                            pts, method="gauss-legendre")
            ref = below + mp.ncdf(-xb) * mp.expm1(L * B) - L * mp.ncdf(s - xb)
            assert D2[ib, il] >= float(ref) - 1e-12 * abs(float(ref)), (ib, il, D2[ib, il], ref)
            checked += 1
    assert checked >= 8


@pytest.mark.parametrize("sigma", [0.5, 1.0, pytest.param(3.0, marks=pytest.mark.slow)])  # ~1 s each
def test_size_biased_mgf_table_vs_mpmath(sigma: float) -> None:
    # K(b, lam) - 1 = E[Y e^{lam min(Y, b)}] - 1 (the joint H1 bound's transform): the part below b
    # by mpmath Gauss-Legendre on [-40, x_b] of Y expm1(lam Y) (no cancellation), the rest closed:
    # K - 1 = J + E[Y 1{Y > b}] expm1(lam b).  Stored values: within 1e-12 relative, never below the
    # reference by more than rounding (they feed an upper bound), +inf where lam b > 30 (no entry).
    # Above it by up to 1e-10: the series rows (lam b < 1e-3) bound the terms from (lam Y)^4 on
    # with Y <= b, (lam b)^3 / 24 relative at most; rounding: ~10^4 positive terms, ~1e-12.
    mp.mp.dps = 30
    lam, _, b, _, _, _, Tb, Km1 = _tails._all_tables(sigma, False)
    s = mp.mpf(1) / sigma
    checked = 0
    for ib in (0, 6, 12, b.size - 1):
        B = mp.mpf(b[ib])
        xb = (mp.log(B) + s * s / 2) / s
        assert Tb[ib] == pytest.approx(float(mp.ncdf(s - xb)), rel=1e-12)
        pts = mp.linspace(-40, xb, 80)
        for il in list(range(0, lam.size, 9)) + [int(np.searchsorted(lam * b[ib], 1e-3)) + d for d in (-1, 0)]:
            L = mp.mpf(lam[il])
            if not lam[il] * b[ib] <= 30.0:
                assert Km1[ib, il] == np.inf
                continue
            below = mp.quad(lambda x: mp.npdf(x) * mp.exp(s * x - s * s / 2) * mp.expm1(L * mp.exp(s * x - s * s / 2)),
                            pts, method="gauss-legendre")
            ref = float(below + mp.ncdf(s - xb) * mp.expm1(L * B))
            assert Km1[ib, il] >= ref * (1 - 1e-12), (ib, il, Km1[ib, il], ref)
            assert Km1[ib, il] <= ref * (1 + 1e-10), (ib, il, Km1[ib, il], ref)
            checked += 1
    assert checked >= 20


def _h1_tail_exact_m2(sigma: float, x: float) -> mp.mpf:
    """P1[S - 2 > x] for M = 2: S = V + Y, V size-biased (log V ~ N(s + m, s^2)), by mpmath over Y."""
    s = mp.mpf(1) / sigma
    m = -s * s / 2
    c = mp.mpf(x) + 2

    def f(u: mp.mpf) -> mp.mpf:  # P[V > c - Y] phi(u), Y = e^{s u + m}
        r = c - mp.exp(s * u + m)
        return mp.ncdf(s - (mp.log(r) - m) / s) * mp.npdf(u) if r > 0 else mp.npdf(u)

    u_c = (mp.log(c) - m) / s
    return mp.quad(f, [-40, u_c - 8, u_c - 2, u_c - 0.5, u_c, u_c + 40])


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_joint_h1_bound_above_exact_two_summands(sigma: float) -> None:
    # M = 2: the exact tail by quadrature, from 1e-3 down to ~1e-30
    mp.mp.dps = 30
    xs = np.exp(np.linspace(math.log(3.0), math.log(2e3 if sigma > 0.6 else 30.0), 9))
    got = _tails.upper_tail_h1_joint(sigma, 2.0, xs)
    win = _tails.upper_tail_h1_window(sigma, 2.0, xs, 1e-13)
    old = _tails.upper_tail_h1(sigma, 2.0, xs)
    for x, g, w, o in zip(xs, got, win, old):
        exact = float(_h1_tail_exact_m2(sigma, float(x)))
        assert exact <= g and exact <= w, (sigma, x, g, w, exact)
        # the window's bound: between the better of the two and the joint one, and meets the level
        # where the better one does
        assert min(g, o) <= w <= g and (w <= 1e-13) == (min(g, o) <= 1e-13), (sigma, x, g, w, o)
    assert np.any(got < 1.0)


def test_joint_h1_bound_above_the_fourier_law_tail() -> None:
    # M = 100, sigma = 1: a second method, the certified wrapped CDF of a Fourier law whose window
    # ends far beyond the points (1 - G1(x) within the law's window error of the true tail)
    from dpbounds.accountant._laws.fourier import FourierLaw

    law = FourierLaw(1.0, 100.0, tail=1e-16)
    xs = np.array([30.0, 60.0, 100.0, 200.0, 400.0, 800.0])
    g1 = law.wrapped_cdf(xs, 1)
    err = law.window_error
    bound = _tails.upper_tail_h1_joint(1.0, 100.0, xs)
    assert np.all(1.0 - g1 - err <= bound), (1.0 - g1, bound)
    # and tighter than the split bound where the single large jump dominates
    far = np.array([3000.0, 4000.0, 5000.0])
    assert np.all(_tails.upper_tail_h1_joint(1.0, 100.0, far) < _tails.upper_tail_h1(1.0, 100.0, far))
    assert _tails.upper_tail_h1_joint(1.0, 100.0, [3200.0])[0] <= 1e-13


def test_h1_window_bound_skips_the_split_only_where_it_cannot_help() -> None:
    # the window's bound meets the level exactly where the better of the two bounds does (the split
    # bound is skipped where the joint one meets it, or where its computed lower bound is above it),
    # and is never above the joint one nor below the better one
    rng = np.random.default_rng(5)
    for sigma, M in ((0.8, 3.0), (1.0, 100.0), (2.0, 2.0), (2.0, 10.0), (3.0, 100.0)):
        xs = np.exp(rng.uniform(math.log(1.0), math.log(1e5), 40))
        for tail in (1e-13, 1e-8):
            win = _tails.upper_tail_h1_window(sigma, M, xs, tail)
            both = np.minimum(_tails.upper_tail_h1_joint(sigma, M, xs), _tails.upper_tail_h1(sigma, M, xs))
            joint = _tails.upper_tail_h1_joint(sigma, M, xs)
            assert np.array_equal(win <= tail, both <= tail), (sigma, M, tail)
            assert np.all((win <= joint) & (win >= both)), (sigma, M, tail)


def test_tail_table_kernels_against_mpmath_term_sums() -> None:
    # the C kernels behind the tables: lower e^{-z} - 1 + z elementwise; upper node sums of
    # w (e^z - 1 - z) and w y (e^z - 1) per level, the prefix below z = 1e-3 through moments, the
    # rest term by term, and term by term throughout where the nodes of a level do not ascend
    from dpbounds._kernels import tail_table_lower, tail_table_upper

    mp.mp.dps = 40
    rng = np.random.default_rng(11)
    lam = np.logspace(-9, 2, 23)
    y = np.sort(np.exp(rng.uniform(-12.0, 8.0, 101)))
    g = tail_table_lower(lam, y, _tails._NEG_EXP_COEFS)
    for i in range(0, lam.size, 3):
        for j in range(0, y.size, 7):
            z = mp.mpf(lam[i]) * mp.mpf(y[j])
            ref = mp.expm1(-z) + z
            assert abs(g[i, j] - float(ref)) <= 4e-15 * float(ref) + 1e-300, (i, j, g[i, j], ref)
    # two ascending levels and a shuffled one (odd node counts: the pairing's last single node)
    w = rng.uniform(0.1, 1.0, 301) * 1e-3
    yy = np.concatenate([np.sort(rng.uniform(0.0, 50.0, 101)), np.sort(rng.uniform(0.0, 3e3, 101)),
                         rng.permutation(np.sort(rng.uniform(0.0, 1e3, 99)))])
    seg = np.array([0, 101, 202, 301])
    b = np.array([50.0, 3e3, 1e3])
    S = np.full((3, lam.size), -7.0)
    J = np.full((3, lam.size), -7.0)
    tail_table_upper(lam, b, w, yy, seg, _tails._EXPM1_MINUS_X5, S, J)
    for i in range(3):
        for il in range(lam.size):
            lb = lam[il] * b[i]
            if not (1e-3 <= lb <= 30.0):
                assert S[i, il] == -7.0 and J[i, il] == -7.0  # left as it was
                continue
            L = mp.mpf(lam[il])
            s_ref = mp.fsum(mp.mpf(w[k]) * (mp.expm1(L * mp.mpf(yy[k])) - L * mp.mpf(yy[k]))
                            for k in range(seg[i], seg[i + 1]))
            j_ref = mp.fsum(mp.mpf(w[k]) * mp.mpf(yy[k]) * mp.expm1(L * mp.mpf(yy[k]))
                            for k in range(seg[i], seg[i + 1]))
            # S: the series for e^z - 1 - z below z = 1e-3 bounds the terms from z^5 on from above
            assert float(s_ref) * (1 - 1e-12) <= S[i, il] <= float(s_ref) * (1 + 1e-11), (i, il, S[i, il], s_ref)
            assert abs(J[i, il] - float(j_ref)) <= 1e-13 * float(j_ref), (i, il, J[i, il], j_ref)
