"""Gaussian-DP quantities the accountant uses, from their one home in C (private).

``gdp_delta`` / ``gdp_epsilon`` are the compiled kernels behind :func:`dpbounds.tradeoff.gdp_delta`
and :func:`dpbounds.tradeoff.gdp_epsilon`.  Two readings of the asymptotic mu of E epochs of
random allocation exist, and each caller names the one it uses:

* :func:`dpbounds.tradeoff.gdp_mu_random_allocation`: sqrt(E (e^{1/sigma^2} - 1) / (M - 1)), the
  Theorem 4.2 reading of "Trade-off Functions for DP-SGD with Subsampling based on Random
  Allocation: Tight Upper and Lower Bounds" (see the documentation);
* :func:`mu_poisson_limit` here: sqrt(E (e^{1/sigma^2} - 1) / M), the Poisson-subsampling CLT
  limit with sample rate 1/M over E M steps (``mu_poisson(sigma, 1/M, E M)``).  The accountant
  uses it for ``method="gdp_asymptotic"`` and as the first guess of its lattice spacing.
"""
from __future__ import annotations

from dpbounds._ufuncs import gdp_delta, gdp_epsilon, gdp_mu_poisson  # type: ignore[import-not-found, unused-ignore]

__all__ = ["gdp_delta", "gdp_epsilon", "mu_poisson_limit"]


def mu_poisson_limit(sigma: float, M: float, E: float) -> float:
    """sqrt(E (e^{1/sigma^2} - 1) / M) = mu_poisson(sigma, 1/M, E M) (an approximation, not a bound)."""
    return float(gdp_mu_poisson(sigma, 1.0 / M, E * M))
