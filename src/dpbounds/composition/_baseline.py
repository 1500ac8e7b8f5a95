"""The baseline curves of "Subsampled Rényi Differential Privacy and Analytical Moments Accountant".

A subsampled base mechanism composed k times by the general theorems (:mod:`._theorems`,
:mod:`._optimal`), with the base delta and the composition's slack chosen per k.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpbounds import _ufuncs  # type: ignore[attr-defined, unused-ignore]
from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds.composition._optimal import _optimal_1
from dpbounds.composition._theorems import _advanced_eps, _subsample_eps

__all__ = ["subsampled_epsilon", "SubsampledComposition"]

FArr = NDArray[np.float64]
C = V.Constraint


class SubsampledComposition(NamedTuple):
    """Result of :func:`subsampled_epsilon` with ``full_output=True`` (arrays shaped like ``k``).

    Attributes
    ----------
    epsilon : ndarray
        Total eps after k compositions of the subsampled mechanism.
    base_epsilon, base_delta : ndarray
        The base mechanism's (eps0, delta0) chosen on its privacy profile (before subsampling).
    delta_slack : ndarray
        The part of the delta budget left to the composition theorem: ``delta'`` of advanced
        composition, ``delta_budget - k gamma delta0`` for optimal, 0 for naive.
    """

    epsilon: Any
    base_epsilon: Any
    base_delta: Any
    delta_slack: Any


_LOGIT = np.arange(-36.0, 36.0 + 1e-9, 0.5)  # u = base share of the budget, 2e-16 .. 1 - 2e-16
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _gaussian_eps0(d0: FArr, sigma: float, profile: str) -> FArr:
    d0 = np.minimum(d0, 1.0)
    if profile == "exact":
        return np.asarray(_ufuncs.gdp_epsilon(d0, 1.0 / sigma), dtype=np.float64)
    with np.errstate(divide="ignore"):
        lg = -np.log(d0)
    return np.asarray(np.where(d0 >= 1.0, 0.0, np.sqrt(2.0 * lg) / sigma + 0.5 / sigma ** 2), dtype=np.float64)


def _minimise(obj: Callable[[FArr], FArr], n: int, grid: FArr, iters: int) -> tuple[FArr, FArr]:
    """Per-row minimum of obj over logit-shares x: a grid, then golden section around the best point.

    ``obj`` maps an (n, m) array of x to (n, m) objective values.  Any x gives a valid bound, so
    the search can only tighten the result; the best value seen is returned.
    """
    vals = obj(np.broadcast_to(grid, (n, grid.size)).copy())
    i = np.argmin(vals, axis=1)
    best_x = grid[i].copy()
    best = vals[np.arange(n), i].copy()
    step = grid[1] - grid[0]
    a, b = best_x - step, best_x + step
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = obj(c[:, None])[:, 0], obj(d[:, None])[:, 0]
    for _ in range(iters):
        left = fc < fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        nc, nd = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
        newx = np.where(left, nc, nd)
        fnew = obj(newx[:, None])[:, 0]
        c, d, fc, fd = (np.where(left, nc, d), np.where(left, c, nd),
                        np.where(left, fnew, fd), np.where(left, fc, fnew))
        better = fnew < best
        best = np.where(better, fnew, best)
        best_x = np.where(better, newx, best_x)
    return best, best_x


def subsampled_epsilon(k: Any, *, gamma: float, delta: float = 1e-8, method: str = "advanced",
                       sigma: float | None = None, pure_epsilon: float | None = None,
                       gaussian_profile: str = "exact", full_output: bool = False) -> Any:
    """Total eps of k compositions of a subsampled mechanism by the subsampling lemma and a composition theorem.

    The baselines of Figure 2 of "Subsampled Rényi Differential Privacy and Analytical Moments
    Accountant": the base mechanism is (eps0, delta0)-DP; :func:`subsample` makes each round
    (log(1 + gamma (e^eps0 - 1)), gamma delta0)-DP; k rounds are composed by ``method``.  For a
    Gaussian base, every point (eps0(delta0), delta0) of its privacy profile is a valid choice;
    delta0 and the composition's slack are chosen per k to minimise the total eps subject to
    total delta <= ``delta``.

    Parameters
    ----------
    k : array_like
        Numbers of compositions, integers >= 1.
    gamma : float
        Sampling ratio in (0, 1].
    delta : float
        Total delta budget in (0, 1) (the paper uses 1e-8).
    method : {"advanced", "naive", "optimal"}
        :func:`advanced` (Dwork-Rothblum-Vadhan; the paper's "strong composition"),
        :func:`naive`, or the exact :func:`optimal` composition (Kairouz-Oh-Viswanath).
    sigma : float, optional
        Base Gaussian mechanism: noise std / replace-one L2 sensitivity.
    pure_epsilon : float, optional
        Instead of ``sigma``: a pure eps-DP base mechanism (delta0 = 0), e.g. ``1/b`` for the
        Laplace mechanism with scale b, ``log(p/(1-p))`` for randomized response.
    gaussian_profile : {"exact", "rdp"}
        The Gaussian's eps0(delta0): ``"exact"``, its exact privacy profile (the analytic
        Gaussian mechanism, :func:`dpbounds.gdp_epsilon` with mu = 1/sigma), or ``"rdp"``,
        ``sqrt(2 log(1/delta0))/sigma + 1/(2 sigma^2)`` from its Rényi curve (the
        conversion the paper's baselines use; larger, so the baselines are weaker).
    full_output : bool
        Return a :class:`SubsampledComposition` with the chosen (eps0, delta0, slack).

    Returns
    -------
    float, ndarray or SubsampledComposition
        Total eps (``inf`` where no choice meets the budget).  Every reported value is a valid
        guarantee for the chosen (eps0, delta0, slack) (the search can only make it tighter):
        the split of the budget is minimised on a grid of 145 logit-spaced shares refined by
        60 golden-section steps (30 for "optimal"); the minimum is within 1e-9 relative of a
        dense scan (tests/accountant/test_composition.py).  The subsampling lemma and the composition
        formulas are evaluated as in :func:`subsample`, :func:`advanced`, :func:`optimal`.

    Examples
    --------
    >>> from dpbounds import composition
    >>> eps = composition.subsampled_epsilon([1, 1000, 100000], gamma=1e-3, sigma=5.0)
    >>> [round(float(x), 4) for x in eps]
    [0.0069, 0.3622, 5.0739]
    """
    m = V.check_choice("method", method, ("advanced", "naive", "optimal"))
    prof = V.check_choice("gaussian_profile", gaussian_profile, ("exact", "rdp"))
    kk = V.check_constraint("k", k, C.INTEGER_GE_1)
    g = V.check_scalar("gamma", gamma, C.HALF_OPEN_UNIT)
    budget = V.check_scalar("delta", delta, C.OPEN_UNIT)
    if (sigma is None) == (pure_epsilon is None):
        raise DPBoundsError("give exactly one of sigma (a Gaussian base) or pure_epsilon (a pure-DP base)")
    kf = kk.ravel()
    n = kf.size
    if pure_epsilon is not None:
        e0 = V.check_scalar("pure_epsilon", pure_epsilon, C.FINITE_NONNEGATIVE)
        ep = float(_subsample_eps(np.asarray(e0), np.asarray(g)))
        if m == "naive":
            eps = kf * ep
            slack = np.zeros(n)
        elif m == "advanced":
            eps = _advanced_eps(np.full(n, ep), kf, np.full(n, budget))
            slack = np.full(n, budget)
        else:
            eps = np.array([_optimal_1(ep, 0.0, int(x), budget) for x in kf])
            slack = np.full(n, budget)
        res = SubsampledComposition(eps, np.full(n, e0), np.zeros(n), slack)
    else:
        s = V.check_scalar("sigma", sigma, C.FINITE_POSITIVE)

        def eps_round(d0: FArr) -> FArr:
            return _subsample_eps(_gaussian_eps0(d0, s, prof), np.asarray(g))

        if m == "naive":
            d0 = np.minimum(budget / (kf * g), 1.0)
            eps = kf * eps_round(d0)
            res = SubsampledComposition(eps, _gaussian_eps0(d0, s, prof), d0, np.zeros(n))
        else:
            def share(x: FArr) -> FArr:
                return 0.5 * (1.0 + np.tanh(0.5 * x))  # logistic, no overflow

            if m == "advanced":
                def obj(x: FArr) -> FArr:
                    u = share(x)
                    kc = kf[:, None]
                    return _advanced_eps(eps_round(u * budget / (kc * g)), kc, (1.0 - u) * budget)

                eps, bx = _minimise(obj, n, _LOGIT, 60)
            else:
                rows = []
                for kv in kf:
                    ki = int(kv)

                    def obj1(x: FArr, ki: int = ki) -> FArr:
                        u = share(x)
                        d0 = u * budget / (ki * g)
                        ep = eps_round(d0)
                        return np.array([[_optimal_1(float(a), float(b), ki, budget)
                                          for a, b in zip(ep_row, g * np.minimum(d0_row, 1.0))]
                                         for ep_row, d0_row in zip(np.atleast_2d(ep), np.atleast_2d(d0))])

                    rows.append(_minimise(obj1, 1, _LOGIT[::4], 30))
                eps = np.array([r[0][0] for r in rows])
                bx = np.array([r[1][0] for r in rows])
            d0 = np.minimum(share(bx) * budget / (kf * g), 1.0)
            res = SubsampledComposition(eps, _gaussian_eps0(d0, s, prof), d0,
                                        (1.0 - share(bx)) * budget)
    shape = kk.shape
    out = SubsampledComposition(*(V.scalar_or_array(np.asarray(a, dtype=np.float64).reshape(shape))
                                  for a in res))
    return out if full_output else out.epsilon
