"""RandomAllocationAccountant.gdp_mu(): certified, and how tight, against a pointwise check.

Independent reference: the trade-off curve evaluated pointwise by ``tradeoff_exact`` (value and
error bound) at 4001 points a = Phi(z), z uniform in [-6.36, 6.36] (a in [1e-10, 1 - 1e-10], the
certificate's range).  G_mu <= f there needs mu >= Phi^{-1}(1 - a) - Phi^{-1}(f(a)) >=
Phi^{-1}(1 - a) - Phi^{-1}(f + err): the maximum of the latter over the points is a lower bound
on the smallest valid mu, which the certified value must not undercut; the relative gap measures
its tightness (the accuracy its docstring states).
"""
from __future__ import annotations

import numpy as np
import pytest

from dpbounds._ufuncs import ndtr, ndtri, ndtri_complement  # type: ignore[attr-defined]
from dpbounds.accountant import RandomAllocationAccountant
from dpbounds.accountant._curve import tradeoff_exact

# (sigma, M): the Fourier, log-domain and large-sigma regimes, cheap to evaluate pointwise
POINTS = [(0.7, 1000), (1.0, 100), (1.0, 1000), (2.0, 1000), (5.0, 10), (0.8, 10)]


def _pointwise_mu(sigma: float, M: int) -> float:
    a = ndtr(np.linspace(-6.36, 6.36, 4001))
    f, err = tradeoff_exact(a, sigma, M)
    ok = np.isfinite(f) & np.isfinite(err)
    assert ok.sum() > 3900
    return float(np.max(ndtri_complement(a[ok]) - ndtri(np.minimum(f[ok] + err[ok], 1.0))))


# the most expensive point's pointwise check (~1 s) runs in the slow tier
@pytest.mark.parametrize("sigma, M", [pytest.param(s, m, marks=pytest.mark.slow) if (s, m) == (0.8, 10) else (s, m)
                                      for s, m in POINTS])
def test_gdp_mu_certified_and_tight(sigma, M, record_accuracy) -> None:  # type: ignore[no-untyped-def]
    mu = RandomAllocationAccountant(sigma, M, 1).gdp_mu()
    lo = _pointwise_mu(sigma, M)
    assert mu >= lo * (1 - 1e-12), (sigma, M, mu, lo)  # never below what the curve needs
    gap = mu / lo - 1.0
    if mu >= 0.1:
        record_accuracy("dpbounds.RandomAllocationAccountant.gdp_mu", gap, "relative",
                        "mu >= 0.1: sigma in [0.7, 5], M in [10, 1000]; gap above the pointwise check")
        assert gap <= 0.01, (sigma, M, gap)
    else:
        assert mu >= 0.005
        assert gap <= 0.2, (sigma, M, gap)


def test_gdp_mu_composes_as_sqrt_epochs() -> None:
    mu1 = RandomAllocationAccountant(1.0, 100, 1).gdp_mu()
    assert RandomAllocationAccountant(1.0, 100, 9).gdp_mu() == pytest.approx(3 * mu1, rel=1e-15, abs=0)
