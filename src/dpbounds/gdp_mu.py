"""The mu of Gaussian DP of subsampled Gaussian training: central-limit asymptotics (docs/tradeoff.md).

Random allocation (:func:`gdp_mu_random_allocation`, Theorem 4.2 of "Trade-off Functions for
DP-SGD with Subsampling based on Random Allocation: Tight Upper and Lower Bounds") and Poisson
subsampling (:func:`gdp_mu_poisson`, Bu et al.; :func:`gdp_mu_poisson_drs`, Dong, Roth and
Su).  Each is the limit of a central-limit theorem: ASYMPTOTIC, not a bound.  Turn a mu into
(epsilon, delta) with :mod:`dpbounds.gdp`; the exact accountants (:mod:`dpbounds.accountant`)
give certified numbers.
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from dpbounds._dispatch import call

__all__ = ["gdp_mu_random_allocation", "gdp_mu_poisson", "gdp_mu_poisson_drs"]


def gdp_mu_random_allocation(sigma: ArrayLike, rounds: ArrayLike, epochs: ArrayLike = 1) -> Any:
    """Gaussian parameter of random allocation, ``sqrt(E (e^{1/sigma^2} - 1)/(M - 1))``.

    Theorem 4.2: one epoch of M rounds is asymptotically ``G_{mu_M}``-DP with
    ``mu_M = sqrt((w-1)/(M-1))`` (plus a vanishing gamma'_M and an o(1/M) delta), and E
    epochs compose to ``mu_M sqrt(E)``; with ``E = c^2 M`` the limit is
    ``c sqrt(e^{1/sigma^2} - 1)``, the same as Poisson subsampling with rate 1/M over
    EM steps (:func:`gdp_mu_poisson`).  ASYMPTOTIC, not a bound.
    """
    return call("gdp_mu_random_allocation", sigma=sigma, rounds=rounds, epochs=epochs)


def gdp_mu_poisson(sigma: ArrayLike, sample_rate: ArrayLike, steps: ArrayLike) -> Any:
    """Bu et al. (2019) CLT mu of Poisson-subsampled Gaussian: ``p sqrt(T (e^{1/sigma^2} - 1))``.

    Asymptotic (p sqrt(T) -> const), not a bound.  See docs/tradeoff.md.
    """
    return call("gdp_mu_poisson", sigma=sigma, sample_rate=sample_rate, steps=steps)


def gdp_mu_poisson_drs(sigma: ArrayLike, sample_rate: ArrayLike, steps: ArrayLike) -> Any:
    """Dong-Roth-Su Cor. 5.4 mu: ``p sqrt(2T (e^{1/sigma^2} Phi(3/(2 sigma)) + 3 Phi(-1/(2 sigma)) - 2))``.

    Its ratio to :func:`gdp_mu_poisson` tends to sqrt 2 as sigma -> 0 and to 1 as
    sigma -> inf.  Computed without cancellation for large sigma (relative error
    <= 1e-14, tested).  Asymptotic, not a bound.  See docs/tradeoff.md.
    """
    return call("gdp_mu_poisson_drs", sigma=sigma, sample_rate=sample_rate, steps=steps)
