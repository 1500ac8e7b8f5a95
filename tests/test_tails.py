"""Tables of the tail bounds (dpbounds.accountant._tails) against mpmath quadrature."""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from dpbounds.accountant import _tails


@pytest.mark.parametrize("sigma", [0.5, 2.0])
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
