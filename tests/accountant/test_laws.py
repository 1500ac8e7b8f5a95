"""The single-epoch law interface, each law against the others where two or three serve the same (sigma, M).

At (sigma, M) = (1, 10) and (0.8, 20) the Fourier series, the tilted series and the log-domain
grid all converge: three independent representations of the same law (characteristic function
on a real window, on a shifted contour, and the density of log S by convolutions).  Every method
of :class:`SingleEpochLaw` must agree between them within the error bars each one reports.
"""
import itertools
import math

import numpy as np
import pytest

from dpbounds.accountant._laws.fourier import FourierLaw
from dpbounds.accountant._laws.interface import SingleEpochLaw
from dpbounds.accountant._laws.logdomain import LogDomainLaw
from dpbounds.accountant._laws.tilted import TiltedFourierLaw

POINTS = [(1.0, 10), (0.8, 20)]
_BUILT: dict = {}


def _laws(sigma, M):
    if (sigma, M) not in _BUILT:
        _BUILT[(sigma, M)] = {
            "fourier": FourierLaw(sigma, float(M)),
            "tilted": TiltedFourierLaw(sigma, float(M)),
            "log-domain": LogDomainLaw(sigma, M),
        }
    return _BUILT[(sigma, M)]


@pytest.mark.parametrize("sigma, M", POINTS)
def test_every_law_implements_the_interface(sigma, M):
    for law in _laws(sigma, M).values():
        assert isinstance(law, SingleEpochLaw)
        assert law.converged and law.method and law.certified and law.estimated
        assert law.sigma == sigma and law.M == M


@pytest.mark.parametrize("sigma, M", POINTS)
def test_tradeoff_agrees_between_laws(sigma, M):
    # a in the bulk, where every law serves the threshold (the tilted series stops at xhi)
    a = np.array([1e-4, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
    res = {k: law.tradeoff(a) for k, law in _laws(sigma, M).items()}
    for (k1, (f1, e1)), (k2, (f2, e2)) in itertools.combinations(res.items(), 2):
        assert np.all(np.isfinite(e1)) and np.all(np.isfinite(e2))
        assert np.all(np.abs(f1 - f2) <= e1 + e2 + 1e-15), (k1, k2, np.abs(f1 - f2), e1 + e2)
    # and they are non-trivially accurate: every error bar below 1e-8
    for k, (_, e) in res.items():
        assert np.max(e) < 1e-8, k


@pytest.mark.parametrize("sigma, M", POINTS)
def test_delta_brackets_overlap_and_tv_agrees(sigma, M):
    laws = _laws(sigma, M)
    for eps in (0.0, 0.5, 1.0, 2.0, 4.0):
        br = {k: law.delta(eps) for k, law in laws.items()}
        for (k1, (lo1, hi1)), (k2, (lo2, hi2)) in itertools.combinations(br.items(), 2):
            assert lo1 <= hi2 and lo2 <= hi1, (eps, k1, k2, br)
        for lo, hi in br.values():
            assert 0.0 <= lo <= hi <= 1.0 and hi - lo < 1e-8
    tvs = {k: law.tv() for k, law in laws.items()}
    for (k1, (v1, e1)), (k2, (v2, e2)) in itertools.combinations(tvs.items(), 2):
        assert abs(v1 - v2) <= e1 + e2 + 1e-15, (k1, k2)
    for k, (v, _) in tvs.items():  # TV = delta(0)
        lo, hi = laws[k].delta(0.0)
        assert lo - 1e-15 <= v <= hi + 1e-15


@pytest.mark.parametrize("sigma, M", [(1.0, 10), pytest.param(0.8, 20, marks=pytest.mark.slow)])  # (0.8, 20): ~1.3 s
def test_curve_points_are_under_and_over_the_other_laws_curves(sigma, M):
    laws = _laws(sigma, M)
    # the reference curve is the Fourier law with its error bar
    for k, law in laws.items():
        a_lo, a_hi, f_lo, f_hi = law.curve_points()
        assert np.all(a_lo <= a_hi) and np.all(f_lo <= f_hi)
        keep = (a_lo > 1e-6) & (a_hi < 1 - 1e-6)
        idx = np.nonzero(keep)[0][:: max(1, keep.sum() // 200)]  # ~200 points along the curve
        f_at_lo, e_lo = laws["fourier"].tradeoff(a_lo[idx])
        f_at_hi, e_hi = laws["fourier"].tradeoff(a_hi[idx])
        assert np.all(f_lo[idx] <= f_at_lo + e_lo + 1e-15), k   # under the curve at a_lo
        assert np.all(f_hi[idx] >= f_at_hi - e_hi - 1e-15), k   # over the curve at a_hi


@pytest.mark.parametrize("sigma, M", POINTS)
def test_lattice_pmfs_agree_between_the_laws_that_provide_them(sigma, M):
    laws = _laws(sigma, M)
    assert not laws["tilted"].supports_lattice
    with pytest.raises(NotImplementedError, match="loss lattices"):
        laws["tilted"].lattice_pmfs(1e-3)
    dl = 1e-3
    for direction in ("remove", "add"):
        means = {}
        for k in ("fourier", "log-domain"):
            jmin, pu, inf_up, jdn, pd, miss = laws[k].lattice_pmfs(dl)[direction]
            assert abs(pu.sum() + inf_up - 1.0) < 1e-9 and abs(pd.sum() + miss - 1.0) < 1e-6
            mu_up = float(np.sum((jmin + np.arange(pu.size)) * pu)) * dl
            mu_dn = float(np.sum((jdn + np.arange(pd.size)) * pd)) * dl
            assert mu_dn <= mu_up  # rounding down never exceeds rounding up
            means[k] = (mu_dn, mu_up)
        # the two laws' [down, up] mean-loss intervals overlap (both contain the true mean loss)
        (a1, b1), (a2, b2) = means.values()
        assert a1 <= b2 + 1e-9 and a2 <= b1 + 1e-9, means


@pytest.mark.parametrize("sigma", [0.3, 0.8, 1.0, 3.0, 20.0])
def test_characteristic_function_below_its_total_variation_bound(sigma):
    # the Fourier law starts its cut-off scan below t_skip on |chi(t)| <= 2 f_max / t (the density
    # of Y is unimodal and vanishes at both ends): the kernel's modulus obeys it at large t
    from dpbounds._kernels import lognormal_cf_m1

    s = 1.0 / sigma
    f_max = math.exp(s * s) / (s * math.sqrt(2.0 * math.pi))
    t = np.logspace(-2, 6, 400)
    mod = np.abs(1.0 + lognormal_cf_m1(sigma, t))
    assert np.all(mod <= np.minimum(1.0, 2.0 * f_max / t) * (1 + 1e-12) + 1e-15)


@pytest.mark.parametrize("sigma, M", [(0.5, 2.0), (0.8, 10.0), (1.0, 100.0), (2.0, 1e4), (5.0, 1e6)])
def test_cut_off_scan_starts_where_nothing_above_it_can_matter(sigma, M):
    # the scan from t_skip down finds the same t_max as the full scan of the old code
    from dpbounds._kernels import lognormal_cf_m1
    from dpbounds.accountant._laws.fourier import _clog1p

    tg = np.logspace(-8, 6, 281) / math.sqrt(math.expm1(1.0 / sigma ** 2))
    with np.errstate(divide="ignore"):
        lg = M * _clog1p(lognormal_cf_m1(sigma, tg)).real
    above = np.nonzero(lg >= math.log(1e-20))[0]
    full = float(tg[min(above[-1] + 1, tg.size - 1)]) if above.size else float(tg[0])
    assert FourierLaw(sigma, M, abort_above=1e-11).t_max == full
