"""The single-epoch trade-off curve, its largest gap, and the Theorem 3.1 gap ratio."""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds.accountant._laws.select import law_for, require_converged
from dpbounds.accountant._params import check_sigma_rounds

__all__ = ["tradeoff_exact", "exact_max_gap", "gap_ratio"]

FArr = NDArray[np.float64]


def tradeoff_exact(a: Any, sigma: float, rounds: float) -> tuple[Any, Any]:
    """Exact trade-off curve f_M(a) = T(P0, P1)(a) of one epoch, with an error bound.

    Parameters
    ----------
    a : array_like, in [0, 1]
        Type-I error levels.
    sigma : float in [0.3, 20]
    rounds : int in [2, 1e9]

    Returns
    -------
    f, err : float or ndarray
        f_M(a) and a bound on |f - f_M(a)|: reject H0 iff S > M + x_a with P0[S - M > x_a] = a,
        f = P1[S - M <= x_a].  Which representation of the law of S serves (sigma, M) is
        decided by :func:`dpbounds.accountant.law_for`; its error is:

        * Fourier series (sigma >= ~0.8, or large M): the bound adds the certified window
          tails/aliasing and the estimated series truncation/round-off; about 1e-13.
        * Log-domain law (small sigma, small/moderate M, including M = 2 at sigma = 0.3): an
          error *estimate* (fine vs half-resolution grid); measured <= 1e-9 for every a in
          [1e-6, 1 - 1e-6] at sigma = 0.3 with M in {2, 5, 14, 1e4}, 0.4 with M in {2, 5},
          0.5 with M = 2 (about 1e-13 at M = 2, growing with M); checked against mpmath at
          M = 2 (agreement within the estimate, which is ~20x the actual error).  For a beyond
          the grid's tail mass (a < ~1e-40) an interval [f(a_min) - err, 1 - a] is returned as
          midpoint +- half-width.
        * Tilted series (small sigma, M beyond the log-domain budget): about 1e-13 in the bulk;
          <= 1e-9 for a >= 0.01 when the threshold is well inside the served range; for a so
          small that the threshold lies beyond it, the interval [P1[x <= xhi] - err, 1 - a] as
          midpoint +- half-width.  Where no series converges the bound is NaN and ``f`` an
          approximation.

    Notes
    -----
    Cost: about 0.05-1 ms per point of ``a`` for the Fourier series, 1-6 ms for the log-domain
    law and 10-20 ms for the tilted series (after the law is built, once per (sigma, M)), so a
    long grid takes minutes.  The points are evaluated in blocks of about 0.2 s each, so Ctrl-C
    (KeyboardInterrupt) stops the call within about that time; the values do not depend on the
    blocks (each point is computed on its own).
    """
    s, m = check_sigma_rounds(sigma, rounds)
    av = V.check_closed_unit("a", a)
    law = law_for(s, m, "curve")
    f, err = _in_blocks(law.tradeoff, np.atleast_1d(av).ravel())
    return (V.scalar_or_array(np.clip(f, 0.0, 1.0).reshape(np.shape(av))),
            V.scalar_or_array(np.asarray(err).reshape(np.shape(av))))


#: Seconds of work between two looks for Ctrl-C in :func:`tradeoff_exact`.
_BLOCK_SECONDS = 0.2


def _in_blocks(fn: Callable[[FArr], tuple[FArr, FArr]], a: FArr) -> tuple[FArr, FArr]:
    """``fn(a)`` evaluated on consecutive blocks of ``a``, each sized from the previous one's time
    to take about :data:`_BLOCK_SECONDS`: the compiled code of one block holds the interpreter,
    and a pending KeyboardInterrupt is raised between blocks.  ``fn`` evaluates every point on
    its own, so the result is that of one call (bit-identical; tests/contract/test_input_contract.py)."""
    n = a.size
    f, err = np.empty(n), np.empty(n)
    i, size = 0, 32
    while i < n:
        j = min(n, i + size)
        t0 = time.perf_counter()
        f[i:j], err[i:j] = fn(a[i:j])
        dt = time.perf_counter() - t0
        i = j
        # at most 4x larger per block, so that a block of slower points still ends soon
        size = int(min(max(size * _BLOCK_SECONDS / max(dt, 1e-6), 8), 4 * size, 1 << 16))
    return f, err


def exact_max_gap(sigma: float, rounds: float, *, return_error: bool = False) -> Any:
    """TV(P0, P1) = E0[(1 - S/M)^+] = max_a (1 - a - f_M(a)) for one epoch.

    This is the smallest delta with f_M >= f_{0, delta}.  Fourier laws: P0[S <= M] - P1[S <= M]
    from the series at x = 0; log-domain law: the integral of the non-negative
    (1 - e^u / M)^+ q(u).  Relative error <= 1e-8 on sigma in [0.3, 20], M in [2, 1e9]
    (absolute error ~1e-13 for the Fourier laws, <= 2e-10 estimated for the log-domain law at
    sigma = 0.3, M <= 1e4; tests check against mpmath at M = 2, Monte Carlo, and between laws);
    ``return_error=True`` also returns the absolute error bound.  Raises ValueError where no law
    converges.
    """
    s, m = check_sigma_rounds(sigma, rounds)
    law = law_for(s, m, "tv")
    require_converged(law)
    tv, e = law.tv()
    return (tv, e) if return_error else tv


def gap_ratio(sigma: float, rounds: float, coefficient: str = "exact") -> float:
    """delta_min(sigma, M) of Theorem 3.1 divided by the true gap TV(P0, P1).

    The Berry-Esseen argument behind Theorem 3.1 predicts about 1 + 2 B coef sqrt(2 pi) for
    large M.  NaN where Theorem 3.1 does not apply (condition (2) at delta_min).
    """
    from dpbounds import _ufuncs as U

    V.check_choice("coefficient", coefficient, ("exact", "simplified"))
    s, m = check_sigma_rounds(sigma, rounds)
    f = U.delta_bound_exact if coefficient == "exact" else U.delta_bound_simplified
    dmin = float(f(s, m))
    return float(dmin / exact_max_gap(s, m))
