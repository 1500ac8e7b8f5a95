"""The general composition theorems: the subsampling lemma, naive and advanced composition."""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V

__all__ = ["subsample", "naive", "advanced"]

FArr = NDArray[np.float64]
C = V.Constraint


def _subsample_eps(e: FArr, g: FArr) -> FArr:
    # log1p(g expm1(e)) is accurate to a few ulp wherever expm1(e) is finite; above e = 709 it
    # overflows, and there e + log(g + (1 - g) e^-e) has no cancellation (e dominates).
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        small = np.log1p(g * np.expm1(np.minimum(e, 700.0)))
        large = e + np.log(g + (1.0 - g) * np.exp(-e))
    out = np.where(e <= 700.0, small, large)
    return np.asarray(np.where(g == 0, 0.0, out), dtype=np.float64)


def subsample(epsilon: Any, delta: Any, gamma: Any) -> tuple[Any, Any]:
    """The subsampling lemma: an (eps, delta)-DP mechanism run on a subsample.

    Sampling a fraction ``gamma`` without replacement (replace-one neighbours) turns an
    (eps, delta)-DP mechanism into an (eps', delta')-DP one with
    ``eps' = log(1 + gamma (e^eps - 1))`` and ``delta' = gamma delta`` (Lemma 3 of "Subsampled
    Rényi Differential Privacy and Analytical Moments Accountant").

    Parameters
    ----------
    epsilon : array_like
        Base eps >= 0 (``inf`` allowed).
    delta : array_like
        Base delta in [0, 1].
    gamma : array_like
        Sampling ratio m/n in [0, 1].

    Returns
    -------
    (eps', delta') : tuple of float or ndarray
        Relative error <= 4 ulp against mpmath for eps <= 700 (``log1p(gamma expm1(eps))``, no
        cancellation for small gamma or eps); above, ``eps + log(gamma + (1 - gamma) e^-eps)``.
        ``gamma = 0`` gives (0, 0).

    Examples
    --------
    >>> from dpbounds import composition
    >>> eps, delta = composition.subsample(1.0, 1e-6, 0.01)
    >>> round(eps, 6), delta
    (0.017037, 1e-08)
    """
    e, d, g = V.check_args({"epsilon": C.NONNEGATIVE, "delta": C.CLOSED_UNIT, "gamma": C.CLOSED_UNIT},
                           epsilon=epsilon, delta=delta, gamma=gamma)
    return V.scalar_or_array(_subsample_eps(e, g)), V.scalar_or_array(g * d)


def naive(epsilon: Any, delta: Any, k: Any) -> tuple[Any, Any]:
    """Basic composition: k (eps, delta)-DP mechanisms are (k eps, k delta)-DP.

    Parameters
    ----------
    epsilon : array_like
        Per-mechanism eps >= 0.
    delta : array_like
        Per-mechanism delta in [0, 1].
    k : array_like
        Number of compositions, an integer >= 1.

    Returns
    -------
    (eps, delta) : tuple of float or ndarray
        ``k eps`` and ``min(k delta, 1)`` (a delta of 1 is no guarantee), correctly rounded
        products.

    Examples
    --------
    >>> from dpbounds import composition
    >>> composition.naive(0.1, 1e-7, 10)
    (1.0, 1e-06)
    """
    e, d, kk = V.check_args({"epsilon": C.NONNEGATIVE, "delta": C.CLOSED_UNIT, "k": C.INTEGER_GE_1},
                            epsilon=epsilon, delta=delta, k=k)
    return V.scalar_or_array(kk * e), V.scalar_or_array(np.minimum(kk * d, 1.0))


def _advanced_eps(e: FArr, k: FArr, slack: FArr) -> FArr:
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.sqrt(2.0 * k * -np.log(slack)) * e + k * e * np.expm1(e)
    return np.asarray(np.where(e == 0, 0.0, out), dtype=np.float64)


def advanced(epsilon: Any, delta: Any, k: Any, delta_slack: Any) -> tuple[Any, Any]:
    """Advanced composition (Dwork, Rothblum and Vadhan, "Boosting and Differential Privacy", 2010).

    k adaptively composed (eps, delta)-DP mechanisms are (eps~, delta~)-DP with
    ``eps~ = sqrt(2 k log(1/delta')) eps + k eps (e^eps - 1)`` and ``delta~ = k delta + delta'``
    for any slack ``delta' > 0``.

    Parameters
    ----------
    epsilon : array_like
        Per-mechanism eps >= 0.
    delta : array_like
        Per-mechanism delta in [0, 1].
    k : array_like
        Number of compositions, an integer >= 1.
    delta_slack : array_like
        delta' in (0, 1).

    Returns
    -------
    (eps~, delta~) : tuple of float or ndarray
        Relative error <= 4 ulp against mpmath (``expm1``, no cancellation at small eps);
        ``delta~`` is clipped to 1.  Not always better than :func:`naive` (for large eps it is
        worse); :func:`optimal` is never worse than either.

    Examples
    --------
    >>> from dpbounds import composition
    >>> eps, delta = composition.advanced(0.01, 1e-8, 1000, 1e-6)
    >>> round(eps, 4), round(delta, 12)
    (1.7628, 1.1e-05)
    """
    e, d, kk, s = V.check_args({"epsilon": C.NONNEGATIVE, "delta": C.CLOSED_UNIT, "k": C.INTEGER_GE_1,
                                "delta_slack": C.OPEN_UNIT},
                               epsilon=epsilon, delta=delta, k=k, delta_slack=delta_slack)
    return V.scalar_or_array(_advanced_eps(e, kk, s)), V.scalar_or_array(np.minimum(kk * d + s, 1.0))
