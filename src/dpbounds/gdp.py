"""Gaussian differential privacy and (epsilon, delta): the two conversions (docs/tradeoff.md).

A mechanism is mu-GDP when its trade-off function is at least ``G_mu``
(:func:`dpbounds.gaussian_tradeoff`).  Then it is (epsilon, delta)-DP for every pair on one
curve: :func:`gdp_delta` gives delta at epsilon, :func:`gdp_epsilon` epsilon at delta.  Both are
compiled ufuncs (:mod:`dpbounds.ufuncs`); the functions here validate their arguments
(``DPBoundsError`` naming the parameter), broadcast, and return a Python float for scalar input.
The mu of a training run: :mod:`dpbounds.gdp_mu`.
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from dpbounds._dispatch import call

__all__ = ["gdp_delta", "gdp_epsilon"]


def gdp_delta(eps: ArrayLike, mu: ArrayLike) -> Any:
    """``delta(eps)`` implied by mu-GDP: ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``.

    Parameters
    ----------
    eps : array_like
        Real (``+inf`` gives 0).
    mu : array_like
        ``>= 0``.

    Returns
    -------
    float or ndarray
        Evaluated as ``n(u) (R(u) - R(v))`` with the Mills ratio ``R = Phi/n``,
        ``u = mu/2 - eps/mu``, ``v = u - mu`` (using ``e^eps n(v) = n(u)``): no overflow of
        ``e^eps``, no underflow of the two Phi's, right down to subnormal delta.  Relative
        error <= 1e-13 against mpmath for mu >= 0.1 and delta >= 1e-300 (the
        conditioning ``|u|/mu`` of the difference enters for smaller mu).  For mu <= 0.01
        and 0 <= eps <= 1/2 the difference is never formed: with ``z = eps/mu`` the
        result is ``n(z - mu/2) mu q(z) (1 + c)``, ``q = 1 - z Rt(z)`` from the continued
        fraction of the upper-tail Mills ratio and ``c`` a short Taylor correction, relative
        error <= 1e-13 down to mu = 2.2e-308.  See docs/tradeoff.md.
    """
    return call("gdp_delta", eps=eps, mu=mu)


def gdp_epsilon(delta: ArrayLike, mu: ArrayLike) -> Any:
    """Smallest ``eps >= 0`` with ``gdp_delta(eps, mu) <= delta`` (inverse of :func:`gdp_delta`).

    Safeguarded Halley iteration on ``log delta(eps)`` in C (~0.4 microseconds per point);
    for mu <= 0.01, Newton in ``z = eps/mu`` on the small-mu form of :func:`gdp_delta`
    (no difference of nearly equal Mills ratios, which would lose eps below mu ~ 1e-8).
    Relative error <= 1e-13 against an mpmath root for delta in [1e-300, delta(0)) and
    mu in [2.2e-308, 50] (measured 1.4e-14); a subnormal eps carries the spacing of the
    subnormals and is rounded up.  Not claimed beyond mu = 50: from mu ~ 1e40 on the relative
    error grows (2e-8 at mu = 3.8e92, below the truth).  ``delta >= delta(0) = erf(mu/(2 sqrt2))`` gives 0,
    ``delta = 0`` gives inf.
    """
    return call("gdp_epsilon", delta=delta, mu=mu)
