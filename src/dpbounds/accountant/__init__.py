"""Tight numerical accountants: random allocation (exact), and their single-epoch laws.

One epoch of random allocation with noise multiplier ``sigma`` and ``M`` rounds is dominated
by the pair H0: x ~ N(0, I_M) vs H1: x ~ (1/M) sum_j N(e_j/sigma, I_M).  Its likelihood ratio
is S/M with S a sum of M i.i.d. lognormals; everything here is computed from the law of S
(H1 is its size-biased version).

Public names
------------
tradeoff_exact(a, sigma, rounds)            f_M(a) and an absolute error bound
exact_max_gap(sigma, rounds)                TV(P0, P1), the true delta of f >= f_{0, delta}
gap_ratio(sigma, rounds, coefficient)       delta_min (Theorem 3.1) / true gap
RandomAllocationPLD(sigma, rounds, epochs)  certified brackets of eps(delta), delta(eps)
PoissonPLD(noise_multiplier, sample_rate, steps)  the same for Poisson-subsampled Gaussian DP-SGD
RandomAllocationAccountant(noise_multiplier, rounds_per_epoch, epochs, method=...)
PoissonAccountant(noise_multiplier, sample_rate, steps)  exact PLD accountant for Poisson subsampling
PrivacyAccountant                           the protocol both follow (step, get_epsilon, history, ...)
PrivacyBracket                              the result of epsilon / delta queries
clear_cache(), cache_info()                 the one cache of single-epoch laws

Three representations of the single-epoch law share one interface
(:class:`~dpbounds.accountant._laws.interface.SingleEpochLaw`); which serves (sigma, M) is decided in one
place (:func:`law_for`):

1. the characteristic-function series of S - M on a window certified by tail bounds, wherever
   its window error is <= 1e-11 (sigma around 0.8 and up, or large M) -- the fast path;
2. small sigma with small or moderate M (estimated build time <= 5 s; 20 s for E > 1): the law
   of log S on a uniform grid, built by log-domain convolutions in C; it covers what no Fourier
   budget can (M = 2 at sigma = 0.3) and the far tails, and carries an error *estimate* from a
   half-resolution grid;
3. otherwise (small sigma with M beyond that) the exponentially tilted series psi(t + i lam);
   E > 1 uses the untilted series there, its outside mass placed along certified tail bounds.

What is certified.  The loss discretisation (rounding up / down), the window tails (rigorous
Chernoff / truncated-MGF bounds), aliasing and the trimmed composition tails are accounted for
exactly.  The Fourier-series truncation and floating-point round-off are covered by explicit
*estimates*, not proofs; so is the log-domain law's discretisation error.  Every result says
which (``PrivacyBracket.certified`` / ``.estimated``).

Reading order, bottom up.  Shared machinery: ``_params`` (the computable parameter domain),
``_cache`` (the one cache of laws), ``_invert`` (root finding), ``_lattice`` and ``_place``
(loss lattices, placing cells with known masses), ``_composition`` (FFT powers with the
E-independent parts cached), ``_envelope`` (a trade-off lower bound from a privacy profile),
``_gdp`` and ``_gdp_certificate`` (Gaussian-DP quantities and the certified mu).  Random
allocation: ``_laws`` (the single-epoch laws, with their own reading order), ``_curve``
(the single-epoch trade-off curve), ``_history`` (histories of epochs as brackets),
``_ra_pld`` and ``_ra_accountant``.  Poisson subsampling: ``_tilted_power`` (convolution
powers with a rigorous round-off bound), ``_poisson_step`` (one step on a loss lattice),
``_poisson_bounds`` (the bounds of one direction), ``_poisson_pld`` and ``_poisson_accountant``.  Last,
``_protocol``: the one accountant protocol both accountants follow.
"""
from __future__ import annotations

from dpbounds._result import PrivacyBracket
from dpbounds.accountant._cache import cache_info, clear_cache, set_cache_limit
from dpbounds.accountant._curve import exact_max_gap, gap_ratio, tradeoff_exact
from dpbounds.accountant._laws.select import law_for
from dpbounds.accountant._poisson_accountant import PoissonAccountant
from dpbounds.accountant._poisson_pld import PoissonPLD
from dpbounds.accountant._protocol import PrivacyAccountant
from dpbounds.accountant._ra_accountant import RandomAllocationAccountant
from dpbounds.accountant._ra_pld import RandomAllocationPLD

__all__ = [
    "tradeoff_exact",
    "exact_max_gap",
    "gap_ratio",
    "RandomAllocationPLD",
    "PoissonPLD",
    "RandomAllocationAccountant",
    "PoissonAccountant",
    "PrivacyAccountant",
    "PrivacyBracket",
    "clear_cache",
    "cache_info",
    "set_cache_limit",
    "law_for",
]
