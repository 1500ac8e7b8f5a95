"""Trade-off curves (f-DP) and Gaussian differential privacy (docs/tradeoff.md).

A trade-off function f(a) gives the smallest type-II error of any test between the
neighbouring output distributions at type-I error a.  This module evaluates

* the Gaussian curve ``G_mu`` and ``f_{0,delta}`` and their compositions / tensor products;
* for random allocation of one example into one of M rounds with noise multiplier sigma:
  the CLT integral of "Trade-off Functions for DP-SGD with Subsampling based on Random
  Allocation: Tight Upper and Lower Bounds" (below: the paper; :func:`tradeoff_clt`, an
  APPROXIMATION), its Edgeworth refinement (:func:`tradeoff_edgeworth`, an APPROXIMATION)
  and the certified lower bound of Theorem 3.1 (:func:`tradeoff_lower_bound`, a BOUND, NaN
  where not valid);
* re-exported from their own modules: the Gaussian-DP conversions (:mod:`dpbounds.gdp`:
  :func:`gdp_delta`, :func:`gdp_epsilon`) and the asymptotic mu of random allocation next to
  Poisson subsampling (:mod:`dpbounds.gdp_mu`).

All kernels are compiled numpy ufuncs (:mod:`dpbounds.ufuncs`); the functions here
validate their arguments against the constraints the ufunc declares (``DPBoundsError``,
a ``ValueError``, naming the parameter), broadcast, and return a Python float for scalar
input.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbounds import _ufuncs  # type: ignore[attr-defined, unused-ignore]
from dpbounds._dispatch import call
from dpbounds._validation import (
    Constraint,
    check_choice,
    check_closed_unit,
    check_constraint,
    scalar_or_array,
)
from dpbounds.epochs import compose_delta
from dpbounds.gdp import gdp_delta, gdp_epsilon
from dpbounds.gdp_mu import gdp_mu_poisson, gdp_mu_poisson_drs, gdp_mu_random_allocation

__all__ = [
    "gaussian_tradeoff",
    "f0delta_tradeoff",
    "gaussian_f0delta_tradeoff",
    "tradeoff_clt",
    "tradeoff_clt_slope",
    "tradeoff_edgeworth",
    "edgeworth_status",
    "tradeoff_lower_bound",
    "gaussian_compose",
    "f0delta_compose",
    "multi_epoch_tradeoff",
    "gaussian_max_gap",
    "sep",
    "sep_gaussian",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu_random_allocation",
    "gdp_mu_poisson",
    "gdp_mu_poisson_drs",
]

_SQRT2 = float(np.sqrt(2.0))


def _out(res: Any) -> Any:
    return scalar_or_array(np.asarray(res, dtype=np.float64))


# ---------------------------------------------------------------- Gaussian / f_{0,delta}


def gaussian_tradeoff(a: ArrayLike, mu: ArrayLike) -> Any:
    """Gaussian trade-off function ``G_mu(a) = Phi(Phi^{-1}(1 - a) - mu)``.

    Parameters
    ----------
    a : array_like
        Type-I error, in [0, 1].
    mu : array_like
        Gaussian-DP parameter, ``mu >= 0`` (``inf`` allowed: ``G_inf = 0``).

    Returns
    -------
    float or ndarray
        ``G_mu(a)``.  ``Phi^{-1}(1 - a)`` is computed as ``-Phi^{-1}(a)`` so that
        ``a`` down to 1e-300 and up to ``1 - 1e-16`` lose nothing to cancellation;
        relative error <= 2e-13 against mpmath where ``G >= 1e-300`` (tests/tradeoff/test_tradeoff.py).
        ``G_0(a) = 1 - a`` exactly.  See docs/tradeoff.md.
    """
    return call("gaussian_tradeoff", a=a, mu=mu)


def f0delta_tradeoff(a: ArrayLike, delta: ArrayLike) -> Any:
    """``f_{0,delta}(a) = max(1 - a - delta, 0)``, the curve of (0, delta)-DP (docs/tradeoff.md).

    Parameters
    ----------
    a : array_like
        Type-I error in [0, 1].
    delta : array_like
        In [0, 1].
    """
    return call("f0delta_tradeoff", a=a, delta=delta)


def gaussian_f0delta_tradeoff(a: ArrayLike, mu: ArrayLike, delta: ArrayLike) -> Any:
    """Tensor product ``(G_mu (x) f_{0,delta})(a) = (1 - delta) G_mu(a/(1 - delta))``.

    Zero for ``a >= 1 - delta`` (derived in docs/tradeoff.md; the form of the paper's
    Theorem 4.2 bound).
    Accuracy: that of :func:`gaussian_tradeoff` plus 2 ulp.
    """
    return call("gaussian_f0delta_tradeoff", a=a, mu=mu, delta=delta)


def gaussian_compose(mu: ArrayLike, epochs: ArrayLike) -> Any:
    """``G_mu^{(x)E} = G_{mu sqrt(E)}``: the mu of E-fold composition."""
    mu = check_constraint("mu", mu, Constraint.NONNEGATIVE)
    epochs = check_constraint("epochs", epochs, Constraint.FINITE_NONNEGATIVE)
    return _out(mu * np.sqrt(epochs))


def f0delta_compose(delta: ArrayLike, epochs: ArrayLike) -> Any:
    """``f_{0,delta}^{(x)E} = f_{0, 1 - (1 - delta)^E}``; returns ``1 - (1 - delta)^E``.

    The same as :func:`dpbounds.compose_delta` (integer ``epochs`` >= 1), under the
    name of the trade-off composition it describes.
    """
    return compose_delta(delta, epochs)


def multi_epoch_tradeoff(a: ArrayLike, delta: ArrayLike, epochs: ArrayLike) -> Any:
    """Multi-epoch bound ``max((1 - delta)^E - a, 0)`` (the paper's Appendix H.4; docs/epochs.md).

    If a single epoch satisfies ``f >= f_{0,delta}`` then E epochs satisfy
    ``f^{(x)E}(a) >= (1 - delta)^E - a``: a BOUND under that hypothesis.
    """
    return call("multi_epoch_tradeoff", a=a, delta=delta, epochs=epochs)


def gaussian_max_gap(mu: ArrayLike, delta: ArrayLike = 0.0) -> Any:
    """``max_a (1 - a - (G_mu (x) f_{0,delta})(a)) = 1 - (1 - delta) 2 Phi(-mu/2)``.

    For ``delta = 0`` this is the total variation distance of G_mu, attained at
    ``a* = Phi(-mu/2)``.  Computed as ``erf(mu/(2 sqrt 2)) + delta erfc(mu/(2 sqrt 2))``
    (relative error <= 4 ulp, no cancellation for small mu).  See the paper's Appendix H.4
    and docs/tradeoff.md.
    """
    return call("gaussian_max_gap", mu=mu, delta=delta)


def _sep_scale(convention: str) -> float:
    convention = check_choice("convention", convention, ("euclidean", "text"))
    return _SQRT2 if convention == "euclidean" else 2.0


def sep_gaussian(mu: ArrayLike, delta: ArrayLike = 0.0, convention: str = "euclidean") -> Any:
    """Separation of ``G_mu (x) f_{0,delta}`` from the no-privacy curve ``1 - a``.

    ``sep(f) = max_a min_g ||(a, f(a)) - (g, 1 - g)||_2 = max_a (1 - a - f(a))/sqrt(2)``
    (``convention="euclidean"``, default).  ``convention="text"`` divides the gap by 2,
    mirroring the printed text of the paper's H.4 (which has almost certainly lost a
    square root; docs/tradeoff.md discusses both readings).
    """
    scale = _sep_scale(convention)
    return _out(np.asarray(gaussian_max_gap(mu, delta)) / scale)


def sep(
    f: Callable[[NDArray[np.float64]], ArrayLike] | Any,
    convention: str = "euclidean",
    grid: ArrayLike | None = None,
) -> float:
    """Separation ``max_a (1 - a - f(a))/sqrt(2)`` of a trade-off function.

    Defined in the paper's Section 4; see docs/tradeoff.md.

    Parameters
    ----------
    f : callable or TradeoffCurve
        Vectorised trade-off function of ``a``, or a :class:`dpbounds.curve.TradeoffCurve`
        (for which the maximum over its vertices is exact).
    convention : {"euclidean", "text"}
        Euclidean distance (divide the gap by sqrt 2, default) or the paper's printed
        "gap/2".
    grid : array_like, optional
        Points of [0, 1] at which a callable is evaluated (default: 20001 uniform points
        refined near 0 and 1); the result is the maximum over the grid, i.e. a lower
        estimate of the supremum.
    """
    scale = _sep_scale(convention)
    gap_method = getattr(f, "max_gap", None)
    if callable(gap_method) and grid is None:
        return float(gap_method()) / scale
    if grid is None:
        g = np.unique(np.concatenate([np.linspace(0, 1, 20001), np.logspace(-12, -4, 200),
                                      1 - np.logspace(-12, -4, 200)]))
    else:
        g = check_closed_unit("grid", grid)
    vals = np.asarray(f(g), dtype=np.float64)
    return float(np.nanmax(1.0 - g - vals)) / scale


# ---------------------------------------------------------------- random allocation curves

#: smallest sigma at which the CLT integral and its slope answer (``dpbounds.ufuncs.CLT_SIGMA_MIN``)
CLT_SIGMA_MIN = float(_ufuncs.CLT_SIGMA_MIN)


def tradeoff_clt(a: ArrayLike, sigma: ArrayLike, rounds: ArrayLike, truncated: bool = False) -> Any:
    """CLT trade-off integral of random allocation -- an APPROXIMATION, not a bound.

    ``f(a) = int Phi(x sqrt(M/(M-1)) - A(z)) n(z) dz`` with ``x = Phi^{-1}(1 - a)``,
    ``A(z) = (e^{z/sigma + 1/(2 sigma^2)} - 1)/sqrt((M-1)(e^{1/sigma^2} - 1))``
    (the paper's Appendix E.2/E.3; derivation in docs/tradeoff.md).

    Parameters
    ----------
    a : array_like
        Type-I error in [0, 1].
    sigma : array_like
        Noise multiplier, finite > 0.
    rounds : array_like
        Rounds per epoch M, integer >= 2.
    truncated : bool
        Integrate only up to the exact support limit ``z_max = sigma ln(M h) - 1/(2 sigma)``,
        ``h = 1 + x sqrt((w-1)/M)`` (0 where ``h <= 0``).  Default False (the full integral,
        the form used by the paper's bounds); the truncated value is smaller by at most
        ``Phi(-z_max)``.

    Returns
    -------
    float or ndarray
        Absolute error <= 1e-14 against an mpmath oracle over a in [1e-300, 1 - 1e-15],
        sigma in [0.3, 50], M in [3, 1e15] (measured <= 3.3e-16; also checked for sigma
        down to 0.03 and up to 1e4).  Composite 20-point Gauss-Legendre on panels cut where
        the Phi argument crosses fixed levels (around the integrand's switch point and
        through its doubly exponential tail), ~2.5 microseconds per point.

    Raises
    ------
    DPBoundsError
        If an argument is outside its domain, or sigma < ``CLT_SIGMA_MIN`` = 0.03: below it the
        quadrature loses accuracy (1.7e-10 at sigma = 0.01, 4e-6 at 0.001), so the value is
        refused (the raw ufuncs ``dpbounds.ufuncs.tradeoff_clt*`` give NaN there).

    Notes
    -----
    At moderate M this curve is a worse approximation of the true random-allocation
    curve than plain ``G_mu`` (Monte Carlo in docs/tradeoff.md); prefer :func:`tradeoff_edgeworth`.
    """
    return call("tradeoff_clt_truncated" if truncated else "tradeoff_clt", a=a, sigma=sigma, rounds=rounds)


def tradeoff_clt_slope(a: ArrayLike, sigma: ArrayLike, rounds: ArrayLike) -> Any:
    """Derivative ``f'(a)`` of the (untruncated) CLT curve (docs/tradeoff.md).

    ``f'(a) = -sqrt(M/(M-1))/n(x) int n(x sqrt(M/(M-1)) - A(z)) n(z) dz``, formed with
    the ratio ``n(.)/n(x)`` in the exponent so nothing under/overflows; relative error
    <= 1e-12 against mpmath (tested).  ``f'(0) = -inf``, ``f'(1) = 0``.  Useful to check
    convexity (f' non-decreasing) and for symmetrisation (the fixed point has f' = -1).
    Like :func:`tradeoff_clt`, refused (``DPBoundsError``) for sigma < ``CLT_SIGMA_MIN`` = 0.03,
    where the same quadrature loses accuracy (relative 3.4e-5 at sigma = 0.001); the raw ufunc
    ``dpbounds.ufuncs.tradeoff_clt_slope`` gives NaN there.

    Examples
    --------
    >>> from dpbounds import tradeoff_clt_slope
    >>> float(tradeoff_clt_slope(0.5, 1.0, 1000)) < 0
    True
    """
    return call("tradeoff_clt_slope", a=a, sigma=sigma, rounds=rounds)


def tradeoff_edgeworth(a: ArrayLike, sigma: ArrayLike, rounds: ArrayLike) -> Any:
    """Edgeworth-corrected trade-off integral -- an APPROXIMATION.

    ``f(a) = int Phi(p_{M-1}(p_M^{-1}(x) sqrt(M/(M-1)) - A(z))) n(z) dz`` with the
    Edgeworth polynomial ``p_n(y) = y - c_n(y^2-1) - d_n(y^3-3y) + c_n^2(4y^3-7y)``,
    ``c_n = gamma1/(6 sqrt n)``, ``d_n = gamma2/(24 n)`` (skewness and excess kurtosis of
    the lognormal likelihood ratio); the paper's Theorem 4.1 and Appendix H, derivation in
    docs/tradeoff.md.

    Returns
    -------
    float or ndarray
        NaN where the expansion cannot be inverted: ``p_n'(0) <= 0`` (no monotone branch
        through 0) or ``Phi^{-1}(1 - a)`` outside the range of ``p_M`` on its monotone
        branch (typically very small or very large a at small M);
        :func:`edgeworth_status` tells which.  Outside its monotone branch the outer
        ``p_{M-1}`` is frozen at the branch end.  Absolute error <= 1e-13 against an
        mpmath evaluation of the same formula.

    Notes
    -----
    The expansion is asymptotic in M: when ``gamma1/sqrt(M)`` is not small (e.g. sigma
    <= 0.5 with M ~ 1e3) the polynomial is far from the identity and the value is not a
    meaningful approximation even where it is defined; in particular it is not a trade-off
    function and can exceed ``1 - a`` near ``a = 1`` (1.35e-4 at ``a = 0.99989``, sigma = 0.422,
    M = 124423, where ``gamma1/(6 sqrt M)`` = 2.14).  Monte Carlo (docs/tradeoff.md and
    tests/tradeoff/test_tradeoff_mc.py) shows it tracks the true curve where G_mu and the CLT
    integral do not, e.g. at M = 100, sigma = 2.
    """
    return call("tradeoff_edgeworth", a=a, sigma=sigma, rounds=rounds)


def edgeworth_status(a: ArrayLike, sigma: ArrayLike, rounds: ArrayLike) -> Any:
    """Why :func:`tradeoff_edgeworth` is NaN: bitmask, 0 = defined.

    Bits of the package's one status table (``dpbounds.ufuncs.STATUS_BITS``): 1 = bad
    input; 32 = ``p_M'(0) <= 0`` or ``p_{M-1}'(0) <= 0``; 64 = ``Phi^{-1}(1 - a)`` outside
    the range of ``p_M`` on its monotone branch.
    """
    res = call("edgeworth_status", a=a, sigma=sigma, rounds=rounds)
    return int(res) if np.ndim(res) == 0 else res


def tradeoff_lower_bound(
    a: ArrayLike, sigma: ArrayLike, rounds: ArrayLike, coefficient: str = "exact"
) -> Any:
    """Theorem 3.1 lower bound ``max(1 - a - delta_min(sigma, M), 0)`` -- a BOUND.

    Parameters
    ----------
    a, sigma, rounds : array_like
        Type-I error in [0, 1]; sigma finite > 0; M integer >= 2.
    coefficient : {"exact", "simplified"}
        Berry-Esseen coefficient: the exact third absolute moment (section 3.1, valid for
        sigma >= sqrt(3/ln M), M >= 3) or the simplification (22) of the theorem as stated.

    Returns
    -------
    float or ndarray
        The bound where Theorem 3.1 is valid (M >= 3, sigma^2 ln M >= 3 and condition (2)
        evaluated at delta_min, the reading explained in docs/theorem31.md); NaN where it is
        not -- never silently.
    """
    coefficient = check_choice("coefficient", coefficient, ("exact", "simplified"))
    return call(f"tradeoff_lower_bound_{coefficient}", a=a, sigma=sigma, rounds=rounds)
