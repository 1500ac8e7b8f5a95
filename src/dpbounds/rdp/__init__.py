"""Renyi-DP accounting.

Base mechanisms (:func:`gaussian`, :func:`laplace`, :func:`randomized_response`),
subsampling without replacement (:func:`subsampled_gaussian_wor`, :func:`subsampled_wor`:
Theorem 9, the improved Pearson-Vajda bound, the lower bound and Corollary-10
interpolation of "Subsampled Rényi Differential Privacy and Analytical Moments
Accountant", Wang, Balle and Kasiviswanathan 2019, "WBK19" below), the
Poisson-subsampled Gaussian (:func:`poisson_gaussian`, exact or library-compatible at
fractional orders), conversions (:func:`epsilon`, :func:`delta`),
the analytical moments accountant (:class:`RDPAccountant`), and optimal Gaussian noise for
hybrid clipping with coordinate-wise and twice sampling (:func:`hybrid_noise`,
:func:`hypercube_noise`, :func:`coordinatewise_poisson`, :func:`twice_sampling`,
:func:`poisson_general`; "Geometry of Sensitivity: Twice Sampling and Hybrid Clipping in
Differential Privacy with Optimal Gaussian Noise and Application to Deep Learning").
The formulas, their sources and how each is checked: docs/rdp.md.

Neighbouring relations: the without-replacement bounds are for REPLACE-ONE
neighbours, so their ``sigma`` is noise std / replace-one sensitivity -- 2C for a sum of
gradients clipped to norm C.  Poisson subsampling is for ADD/REMOVE neighbours (sigma =
noise std / C).  Values under the two relations are not comparable as such.

All functions validate their arguments (``ValueError`` naming the parameter), broadcast
over arrays, and return a Python float for scalar input.  The raw kernels, which return
NaN instead of raising, are the ``rdp_*`` ufuncs of :mod:`dpbounds.ufuncs`.

Reading order: this file (the validated functions over the ``rdp_*`` ufuncs), then

* ``_outward`` -- the RDP -> (eps, delta) conversion objectives, rounded towards the safe side;
* ``_mechanisms`` -- the mechanism objects an accountant composes (their RDP at any order);
* ``_accountant`` -- :class:`RDPAccountant`, on the accountant protocol of
  :mod:`dpbounds.accountant` (which is why this package sits in the accountants' layer,
  docs/architecture.md);
* ``_hybrid_clipping`` -- hybrid clipping and twice sampling (self-contained).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from dpbounds import (
    _kernels,  # type: ignore[attr-defined, unused-ignore]
    _ufuncs,  # type: ignore[attr-defined, unused-ignore]
)
from dpbounds import _validation as V
from dpbounds._dispatch import call
from dpbounds._errors import DPBoundsError
from dpbounds.rdp._accountant import DEFAULT_ORDERS, RDPAccountant
from dpbounds.rdp._hybrid_clipping import (
    coordinatewise_limit,
    coordinatewise_poisson,
    hybrid_noise,
    hypercube_noise,
    poisson_general,
    twice_sampling,
)
from dpbounds.rdp._mechanisms import (
    _BOUNDS,
    _QUAD_MAX_NODES,
    ALPHA_MAX,
    Custom,
    Gaussian,
    Laplace,
    Mechanism,
    PoissonGaussian,
    RandomizedResponse,
    SubsampledGaussianWOR,
    SubsampledWOR,
    _quad_nodes,
    check_work,
    poisson_work,
    short_number,
    wor_work,
)
from dpbounds.rdp._outward import delta_at, eps_objective, logdelta_objective

__all__ = [
    "gaussian", "laplace", "randomized_response",
    "subsampled_gaussian_wor", "subsampled_wor", "poisson_gaussian",
    "epsilon", "delta",
    "RDPAccountant", "DEFAULT_ORDERS",
    "Mechanism", "Gaussian", "Laplace", "RandomizedResponse", "PoissonGaussian",
    "SubsampledGaussianWOR", "SubsampledWOR", "Custom",
    "hybrid_noise", "hypercube_noise", "coordinatewise_poisson", "coordinatewise_limit",
    "twice_sampling", "poisson_general",
]

Array = NDArray[np.float64]


_ORDER = V.Constraint.ORDER


def gaussian(alpha: Any, sigma: Any) -> Any:
    """RDP of the Gaussian mechanism, ``eps(alpha) = alpha / (2 sigma^2)``.

    Parameters
    ----------
    alpha : array_like
        Renyi order(s), >= 1 (``inf`` gives ``inf``).
    sigma : array_like
        Noise standard deviation / L2 sensitivity, finite > 0.

    Returns
    -------
    float or ndarray
        eps(alpha); accurate to 2 ulp.
    """
    return call("rdp_gaussian", alpha=alpha, sigma=sigma)


def laplace(alpha: Any, b: Any) -> Any:
    """RDP of the Laplace mechanism with scale ``b`` (L1 sensitivity 1).

    ``eps(a) = log(a/(2a-1) e^{(a-1)/b} + (a-1)/(2a-1) e^{-a/b})/(a-1)``; ``a = 1`` gives
    ``1/b + e^{-1/b} - 1``, ``a = inf`` gives ``1/b``.  Relative error <= 1e-14 (vs mpmath,
    tests/rdp/test_rdp_kernels.py), with no cancellation for large ``b``.
    """
    return call("rdp_laplace", alpha=alpha, b=b)


def randomized_response(alpha: Any, p: Any) -> Any:
    """RDP of binary randomized response, truthful with probability ``p`` in (0, 1).

    ``a = 1``: ``(2p-1) log(p/(1-p))``; ``a = inf``: ``|log(p/(1-p))|``.  Relative error
    <= 1e-14 including ``p`` near 1/2.
    """
    return call("rdp_randomized_response", alpha=alpha, p=p)


def subsampled_gaussian_wor(alpha: Any, sigma: Any, gamma: Any, bound: str = "improved") -> Any:
    """RDP of the Gaussian mechanism on a subsample drawn without replacement (WBK19).

    Parameters
    ----------
    alpha : array_like
        Order(s) >= 1, real (fractional orders by Corollary-10 CGF interpolation for the
        upper bounds; orders in [1, 2] use eps'(2)), ``inf`` allowed; <= 1e6.
    sigma : array_like
        Noise std / REPLACE-ONE L2 sensitivity (2C for a clipped sum with clip norm C).
    gamma : array_like
        Sampling ratio m/n in [0, 1].
    bound : {"improved", "theorem9", "lower"}
        ``"improved"``: Theorem 27 (Pearson-Vajda differences; valid for the Gaussian),
        evaluated at every order -- no silent fallback (autodp falls back to Theorem 9
        above alpha = 100, dp-accounting above 256).  ``"theorem9"``: the general bound.
        ``"lower"``: the exact divergence of a realisable pair (a LOWER bound, for
        optimality checks only; exact at real orders).

    Returns
    -------
    float or ndarray
        lower <= improved <= theorem9 <= alpha/(2 sigma^2).  Accuracy vs mpmath: relative
        error <= 1e-12 (integer orders; tests/rdp/test_rdp_kernels.py).  Bounds of "Subsampled Renyi
        Differential Privacy and Analytical Moments Accountant" (Theorem 9) and their refinements.

    Notes
    -----
    The Pearson-Vajda moments D^l of the Gaussian are computed by quadrature of the positive
    integrand E[(L-1)^l], so they have no cancellation; orders beyond a certified cutoff, where
    the Pearson-Vajda term provably loses the min, skip it.  Cost: O(alpha^2) once per sigma
    for the improved bound, O(alpha) per order otherwise, bounded as sigma -> 0 (at sigma <= 0.5
    the certificate covers every order, so no quadrature runs); sigma on the slowest axis shares
    the table across gammas and orders.
    """
    b = V.check_choice("bound", bound, tuple(_BOUNDS))
    a, s, g = V.check_args({"alpha": _ORDER, "sigma": V.Constraint.FINITE_POSITIVE,
                            "gamma": V.Constraint.CLOSED_UNIT}, alpha=alpha, sigma=sigma, gamma=gamma)
    if np.any(a[np.isfinite(a)] > ALPHA_MAX):
        raise DPBoundsError(f"alpha must be <= {short_number(ALPHA_MAX)} (or inf)")
    # the orders as given (a is broadcast with sigma and gamma): each is repeated n / a0.size times
    a0 = np.asarray(alpha, dtype=np.float64)
    n = a.size
    check_work("alpha", wor_work(a0) * (n / max(a0.size, 1)), f"{n:,} order evaluations")
    return V.scalar_or_array(_kernels.wor_gaussian(a, s, g, _BOUNDS[b]))


def subsampled_wor(alpha: Any, base_rdp: Callable[[Any], Any] | Mechanism | Any, gamma: Any,
                   bound: str = "theorem9", eps_inf: float | None = None) -> Any:
    """WBK19 Theorem 9 (or the improved bound) for ANY base mechanism, subsampled without replacement.

    Parameters
    ----------
    alpha : array_like
        Order(s) >= 1 (fractional by Corollary-10 interpolation; inf allowed).
    base_rdp : callable, Mechanism or array_like
        The base mechanism's replace-one RDP: a vectorised callable ``f(alpha_array)``, a
        :class:`Mechanism`, or an array whose entry ``j`` is eps(j) at integer order ``j``
        (entries 0 and 1 are ignored; it must reach ``ceil(max alpha)``, +1 for "improved").
    gamma : array_like
        Sampling ratio in [0, 1].
    bound : {"theorem9", "improved", "lower"}
        "improved" is valid only for mechanisms meeting WBK19's condition (Gaussian, Laplace).
        "lower": the divergence of the realisable pair ((1 - gamma) Q + gamma P, Q) for the
        base's worst-case pair (P, Q) -- a LOWER bound, for optimality checks only, defined at
        integer orders >= 2 only (interpolating it would not be a lower bound); it takes no
        clamp.
    eps_inf : float, optional
        The base pure-DP epsilon (default: ``base_rdp(inf)`` for callables, inf for arrays --
        always valid, only less tight).

    Returns
    -------
    float or ndarray
        Clamped by the base eps(alpha) (callables) and by log(1 + gamma(e^{eps_inf} - 1)).
        Relative error <= 1e-12 vs mpmath (tests/rdp/test_rdp_kernels.py).
    """
    V.check_choice("bound", bound, tuple(_BOUNDS))
    a, g = V.check_args({"alpha": _ORDER, "gamma": V.Constraint.CLOSED_UNIT}, alpha=alpha, gamma=gamma)
    if bound == "lower":
        V.check("alpha", a, V.Constraint.INTEGER_GE_2.holds(a), "an integer >= 2 for the lower bound")
    fin = np.isfinite(a)
    amax = float(np.max(a[fin])) if fin.any() else 2.0
    need = int(math.ceil(max(amax, 2.0))) + 1 + (1 if bound == "improved" else 0)
    f: Callable[[Any], Any] | None
    if isinstance(base_rdp, Mechanism):
        f = base_rdp.rdp
    elif callable(base_rdp):
        f = base_rdp
    else:
        f = None
    if f is not None:
        table = np.zeros(need)
        table[2:] = np.asarray(f(np.arange(2, need, dtype=np.float64)), dtype=np.float64)
        if eps_inf is None:
            try:
                with np.errstate(all="ignore"):
                    eps_inf = float(np.asarray(f(np.array([np.inf])), dtype=np.float64).ravel()[0])
            except Exception:  # noqa: BLE001
                eps_inf = math.inf
    else:
        table = np.array(base_rdp, dtype=np.float64).ravel()
        if table.size < need:
            raise DPBoundsError(f"base_rdp must give eps at integer orders up to {need - 1}, got {table.size} entries")
        table = table[:need].copy()
        table[:2] = 0.0
        if eps_inf is None:
            eps_inf = math.inf
    with np.errstate(invalid="ignore"):
        V.check("base_rdp", table, table >= 0, ">= 0 at every integer order")
    ei = float(eps_inf) if eps_inf == eps_inf else math.inf
    if not ei >= 0:
        raise DPBoundsError(f"eps_inf must be >= 0, got {eps_inf!r}")
    gu, inv = np.unique(g.ravel(), return_inverse=True)
    curves = np.asarray(_kernels.wor_table(table, ei, gu, _BOUNDS[bound]))
    if bound == "lower":   # integer orders: the kernel's values as they are
        return V.scalar_or_array(curves[inv, a.ravel().astype(np.intp)].reshape(a.shape))
    af = np.where(fin, a, 2.0).ravel()
    lo = np.clip(np.floor(af), 2, None).astype(np.intp)
    hi = np.clip(np.ceil(af), 2, None).astype(np.intp)
    out = np.asarray(_ufuncs.rdp_interp(af, curves[inv, lo], curves[inv, hi]))
    if f is not None:
        base = np.asarray(f(af), dtype=np.float64)
        out = np.minimum(out, base)
    gflat = g.ravel()
    with np.errstate(all="ignore"):
        at_inf = np.where(gflat == 0, 0.0,
                          np.log1p(gflat * np.expm1(ei)) if math.isfinite(ei) else np.inf)
    out = np.where(fin.ravel(), out, at_inf)
    out = np.where(gflat == 0, 0.0, out)
    return V.scalar_or_array(out.reshape(a.shape))


def poisson_gaussian(alpha: Any, sigma: Any, q: Any, mode: str = "exact") -> Any:
    """RDP of the Poisson-subsampled Gaussian (rate q, add/remove neighbours; Mironov-Talwar-Zhang).

    Parameters
    ----------
    alpha : array_like
        Order(s) >= 1, real (``1`` = KL), inf allowed, <= 1e6.
    sigma : array_like
        Noise std / add-remove L2 sensitivity C.
    q : array_like
        Sampling rate in [0, 1].
    mode : {"exact", "compat"}
        Integer orders: both give the exact closed sum.  Fractional orders: "exact" is the
        true divergence (quadrature of a nonnegative integrand, relative error <= 1e-12 vs
        mpmath for q down to 1e-9); "compat" reproduces the |C(a,i)| series of TF-Privacy /
        dp-accounting / Opacus (conservative: +4% at alpha = 1.5, sigma = 1, q = 0.01),
        evaluated without their truncation (dp-accounting itself is up to ~1e-6 off it).

    Raises
    ------
    DPBoundsError
        If an argument is outside its domain, or a fractional order (or alpha = 1) would cost
        more than 1e6 quadrature nodes (about 0.15 s): the count grows like alpha/sigma^2,
        e.g. sigma = 0.01 allows fractional alpha up to ~21, sigma = 1e-6 none.  Integer
        orders cost O(alpha) and are never refused.  The raw ufuncs give NaN there.  This
        includes every fractional order at a subnormal or tiny sigma (below ~1e-154 the RDP
        exceeds the largest double anyway: it is at least alpha / (2 sigma^2) + alpha log(q) /
        (alpha - 1), and integer orders give ``inf`` there).

    Notes
    -----
    Accurate for rates down to 1e-9 and below (log1p throughout; autodp is 34% off at
    q = 1e-7).
    """
    m = V.check_choice("mode", mode, ("exact", "compat"))
    a, s, qq = V.check_args({"alpha": _ORDER, "sigma": V.Constraint.FINITE_POSITIVE,
                             "q": V.Constraint.CLOSED_UNIT}, alpha=alpha, sigma=sigma, q=q)
    if np.any(a[np.isfinite(a)] > ALPHA_MAX):
        raise DPBoundsError(f"alpha must be <= {short_number(ALPHA_MAX)} (or inf)")
    a, s, qq = np.broadcast_arrays(a, s, qq)
    costly = (np.isfinite(a) & ((a != np.floor(a)) | (a == 1.0)) & (qq > 0) & (qq < 1) & (s <= 1e100)
              & (_quad_nodes(a, s) > _QUAD_MAX_NODES))
    if np.any(costly):
        i = np.flatnonzero(costly.ravel())[0]
        raise DPBoundsError(
            f"sigma must be larger for the fractional order alpha = {float(a.ravel()[i])!r} (got sigma = {float(s.ravel()[i])!r}): "
            f"the quadrature would need {float(_quad_nodes(a.ravel()[i], s.ravel()[i])):.3g} nodes "
            f"(cap {_QUAD_MAX_NODES:.0e}, cost ~ alpha/sigma^2); use integer orders")
    check_work("alpha", poisson_work(a, s, qq, m == "compat"), f"{a.size:,} order evaluations")
    f = getattr(_ufuncs, f"rdp_poisson_gaussian_{m}")
    return V.scalar_or_array(f(a, s, qq))


def _curve(rdp_values: Any, orders: Any) -> tuple[Array, Array]:
    o = V.check_constraint("orders", orders, _ORDER).ravel()
    r = V.as_float_array("rdp_values", rdp_values)
    if r.ndim == 0 or r.shape[-1] != o.size:
        raise DPBoundsError(f"rdp_values must have last axis of length len(orders) = {o.size}, got shape {r.shape}")
    V.check("rdp_values", r, V.Constraint.NONNEGATIVE.holds(r), V.Constraint.NONNEGATIVE.text)
    return r, o


def epsilon(rdp_values: Any, orders: Any, delta: Any, conversion: str = "improved",
            return_order: bool = False) -> Any:
    """eps such that an RDP curve implies (eps, delta)-DP: the minimum over the given orders.

    Parameters
    ----------
    rdp_values : array_like, shape (..., n)
        RDP values at ``orders`` (last axis).
    orders : array_like, shape (n,)
        Orders >= 1 (inf allowed).
    delta : array_like
        In (0, 1); broadcast against ``rdp_values[..., 0]``.
    conversion : {"improved", "classic"}
        "classic": min_a eps(a) + log(1/delta)/(a-1) (Mironov 2017).  "improved": Balle et al.
        2020 Thm 21 with the TV shortcut; never larger than "classic".
    return_order : bool
        Also return the minimising order.

    Returns
    -------
    float or ndarray
        Rounded towards the safe side: never below the exact (real-arithmetic) minimum of the
        conversion over the given orders, and at most 8 ulp of the objective's largest
        term above it (measured against mpmath: docs/contract.md).  At the total-variation
        shortcut's threshold (``delta^2`` within ~1e-15 relative of ``1 - e^{-eps(alpha)}``)
        the shortcut is taken only where it certainly applies.

    Examples
    --------
    >>> from dpbounds import rdp
    >>> orders = [2.0, 4.0, 8.0, 16.0, 32.0]
    >>> curve = rdp.gaussian(orders, 5.0) * 100        # 100 Gaussian steps, sigma = 5
    >>> round(rdp.epsilon(curve, orders, 1e-5), 6)
    11.087862
    """
    c = V.check_choice("conversion", conversion, ("improved", "classic"))
    r, o = _curve(rdp_values, orders)
    d = V.check_open_unit("delta", delta)
    v = eps_objective(o, r, np.asarray(d)[..., None], c)
    i = np.argmin(v, axis=-1)
    best = np.take_along_axis(v, i[..., None], axis=-1)[..., 0]
    if return_order:
        return V.scalar_or_array(best), V.scalar_or_array(o[i])
    return V.scalar_or_array(best)


def delta(rdp_values: Any, orders: Any, epsilon: Any, conversion: str = "improved",
          return_order: bool = False) -> Any:
    """delta such that an RDP curve implies (epsilon, delta)-DP: the minimum over the given orders.

    "classic": min_a exp((a-1)(eps(a) - epsilon)); "improved": min_a exp((a-1)(eps(a) - epsilon
    + log(1 - 1/a)) - log a), also <= sqrt(1 - e^{-eps(a)}).  Clipped to <= 1.

    Rounded towards the safe side: never below the exact (real-arithmetic) value, and 0 only
    where the exact value is 0 (an order inf, or a zero curve); beyond 4 ulp of delta, its
    logarithm is at most 8 ulp of the largest term of log delta (or of 1) above the exact one
    (measured against mpmath: docs/contract.md), so delta itself is within a relative ~1e-12
    for delta >= 1e-300.

    Examples
    --------
    >>> from dpbounds import rdp
    >>> orders = [2.0, 4.0, 8.0, 16.0, 32.0]
    >>> curve = rdp.gaussian(orders, 5.0) * 100        # 100 Gaussian steps, sigma = 5
    >>> print(f"{rdp.delta(curve, orders, 12.0):.4e}")
    6.4802e-07
    """
    c = V.check_choice("conversion", conversion, ("improved", "classic"))
    r, o = _curve(rdp_values, orders)
    e = V.check_constraint("epsilon", epsilon, V.Constraint.NONNEGATIVE)
    ee = np.asarray(e)[..., None]
    v = logdelta_objective(o, r, ee, c)
    i = np.argmin(v, axis=-1)
    # the minimising order's delta, evaluated in the linear domain (rounded up as its log was)
    rr, ee = np.broadcast_arrays(r, ee)
    best = delta_at(o[i], np.take_along_axis(rr, i[..., None], axis=-1)[..., 0],
                    np.take_along_axis(ee, i[..., None], axis=-1)[..., 0], c)
    if return_order:
        return V.scalar_or_array(best), V.scalar_or_array(o[i])
    return V.scalar_or_array(best)
