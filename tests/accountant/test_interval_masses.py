"""Interval masses of the Fourier law between loss-lattice points (FFT cells cut by interpolation
with a certified remainder) against the series evaluated directly at the lattice points."""
import math

import numpy as np
import pytest

from dpbounds.accountant import clear_cache
from dpbounds.accountant._laws.fourier import FourierLaw
from dpbounds.accountant._laws.select import fourier_law, law_for


@pytest.mark.parametrize("sigma, M, M_loss, dl", [
    (1.0, 100.0, 100.0, 2.6e-3),
    (1.0, 100.0, 100.0, 7e-5),        # many lattice points per cell
    (0.6841, 234.0, 234.0, 9e-3),     # heavy right tail, 65k coefficients
    (2.0, 100.0, 100.0, 1e-3),
    (1.0, 10.0, 100.0, 5e-4),         # a partial epoch: 10 rounds of an epoch of 100
    (0.8, 1e4, 1e4, 7e-5),
])
def test_interval_masses_match_the_series_at_the_lattice_points(sigma, M, M_loss, dl):
    clear_cache()
    law = law_for(sigma, M, "compose")
    assert isinstance(law, FourierLaw) and law.converged
    j, p0, p1, e, bottom = law.interval_masses(M_loss, dl)
    assert bottom == (0.0, 0.0, 0.0)
    assert np.all(np.diff(j) > 0) and np.all(p0 >= 0) and np.all(p1 >= 0) and np.all(e > 0)
    # (intervals without mass are left out)
    # the series' CDFs at the lattice points t_j (interval j is [t_j, t_{j+1}])
    x = M_loss * np.expm1(np.arange(j[0], j[-1] + 2) * dl)
    x_top = law.xlo + law.P
    inside = (x > law.xlo) & (x < x_top)
    g0, g1 = law.wrapped_cdf_pair(np.clip(x, law.xlo, x_top))
    g0 = np.where(x <= law.xlo, 0.0, np.where(x >= x_top, 1.0 + 0 * g0, g0))
    g1 = np.where(x <= law.xlo, 0.0, np.where(x >= x_top, 1.0 + 0 * g1, g1))
    # wrapped_cdf at x_top is the total mass of the period (the series' own normalisation)
    d0, d1 = np.diff(g0)[j - j[0]], np.diff(g1)[j - j[0]]
    # the direct values carry the series' own round-off bound at each point
    tol = e + 2.0 * (law.err_round + law.err_trunc)
    assert np.all(np.abs(d0 - p0) <= tol + 1e-300), np.max(np.abs(d0 - p0) - tol)
    assert np.all(np.abs(d1 - p1) <= tol + 1e-300), np.max(np.abs(d1 - p1) - tol)
    assert inside.sum() >= 2
    # and the masses are the whole window's
    assert abs(p0.sum() - 1.0) < 1e-9 and abs(p1.sum() - 1.0) < 1e-9


def test_interval_masses_error_is_small_and_the_remainder_negligible():
    clear_cache()
    law = fourier_law(1.0, 100.0)
    j, p0, p1, e, _ = law.interval_masses(100.0, 2.6e-3)
    # total error per epoch: the FFT cells' round-off estimate dominates (~1e-11), not the cuts
    assert float(np.sum(e)) < 1e-10
    # one more check of the cuts: a coarser lattice's intervals are unions of the finer ones'
    j2, q0, q1, e2, _ = law.interval_masses(100.0, 5.2e-3)
    agg0 = np.bincount((j - 2 * j2[0]) // 2, weights=p0)
    m = min(agg0.size, q0.size)
    assert np.all(np.abs(agg0[:m] - q0[:m]) <= 1e-13 + e2[:m] + np.bincount((j - 2 * j2[0]) // 2, weights=e)[:m])
    assert math.isfinite(float(np.sum(e2)))


@pytest.mark.parametrize("sigma, M", [(0.8, 100.0), (1.0, 100.0), (0.6841, 234.0)])
def test_cell_round_off_estimate_against_long_double(sigma, M):
    # the cells' l1 round-off estimate (2-norm FFT bound) against the same inverse FFT in long
    # double (numpy's pocketfft computes long double natively): the estimate must hold with room
    from dpbounds.accountant._laws.fourier import _cell_masses

    if np.finfo(np.longdouble).eps >= 1e-18:
        pytest.skip("long double is not extended precision on this platform")
    if np.fft.irfft(np.zeros(3, dtype=np.clongdouble)).dtype != np.longdouble:
        pytest.skip("this numpy's FFT computes long double inputs in double (numpy < 2.0)")
    law = law_for(sigma, M, "compose")
    edges, h, c0, c1, err = _cell_masses(law, law.P / 2 ** 17)
    N = edges.size
    k = min(law.n_eff, N // 2)
    n = np.arange(0, k + 1, dtype=np.longdouble)
    P, hh = np.longdouble(law.P), np.longdouble(law.P) / N
    t = n * (2 * np.pi) / P
    with np.errstate(all="ignore"):
        sinc = np.where(t > 0, np.sin(t * hh / 2) / (t * hh / 2), 1)
    frac = np.mod(n * ((np.longdouble(law.xlo) + hh / 2) / P), 1)
    rot = sinc * np.exp(-1j * 2 * np.pi * frac)
    for psi, c in ((law.psi0, c0), (law.psi1, c1)):
        coef = np.zeros(N // 2 + 1, dtype=np.clongdouble)
        coef[0] = 1
        coef[1:k + 1] = psi[:k]
        coef[:k + 1] = np.conj(coef[:k + 1] * rot)
        ref = np.fft.irfft(coef, n=N)
        assert ref.dtype == np.longdouble
        actual = float(np.sum(np.abs(c - ref)))
        assert actual <= err / 10, (actual, err)
