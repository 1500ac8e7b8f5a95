"""Gaussian-DP quantities the accountant uses, from their one home in C (private).

``gdp_delta`` / ``gdp_epsilon`` are the compiled kernels behind :func:`dpbounds.gdp.gdp_delta`
and :func:`dpbounds.gdp.gdp_epsilon`.  The asymptotic mu of random allocation has one
definition in the package, :func:`dpbounds.gdp_mu.gdp_mu_random_allocation`:
sqrt(E (e^{1/sigma^2} - 1) / (M - 1)), the mu_M of Theorem 4.2 of "Trade-off Functions for
DP-SGD with Subsampling based on Random Allocation: Tight Upper and Lower Bounds" composed over
E epochs (E may be fractional: steps / M).  :func:`gdp_mu_random_allocation` here is that function for
Python floats; the accountant uses it for ``method="gdp_asymptotic"`` and as the first guess of
its lattice spacing.
"""
from __future__ import annotations

from dpbounds import _ufuncs  # type: ignore[attr-defined, unused-ignore]
from dpbounds._ufuncs import gdp_delta, gdp_epsilon  # type: ignore[import-not-found, unused-ignore]

__all__ = ["gdp_delta", "gdp_epsilon", "gdp_mu_random_allocation"]


def gdp_mu_random_allocation(sigma: float, M: float, E: float) -> float:
    """sqrt(E (e^{1/sigma^2} - 1) / (M - 1)), the ufunc of that name at one point (an approximation, not a bound)."""
    return float(_ufuncs.gdp_mu_random_allocation(sigma, M, E))
