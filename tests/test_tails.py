"""Tables of the tail bounds (dpbounds.accountant._tails) against mpmath quadrature."""
from __future__ import annotations

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
