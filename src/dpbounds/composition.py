"""Composition baselines for (epsilon, delta)-DP: the guarantees RDP accounting is compared against.

The mechanism-agnostic tools a user without a moments accountant would reach for, as the
comparisons of "Subsampled Rényi Differential Privacy and Analytical Moments Accountant"
(Section 4, Figure 2) use them:

* :func:`subsample` -- the standard subsampling lemma (sampling without replacement,
  replace-one neighbours): (eps, delta) -> (log(1 + gamma (e^eps - 1)), gamma delta);
* :func:`naive` -- basic composition, (k eps, k delta);
* :func:`advanced` -- the advanced ("strong") composition theorem of Dwork, Rothblum and Vadhan;
* :func:`optimal` and :func:`optimal_delta` -- the optimal composition theorem for k
  homogeneous (eps, delta)-DP mechanisms of Kairouz, Oh and Viswanath ("The Composition Theorem
  for Differential Privacy", 2015), evaluated exactly;
* :func:`subsampled_epsilon` -- the paper's baseline curves: a base mechanism (a Gaussian on
  its privacy profile, or a pure-DP mechanism), the subsampling lemma, then k-fold naive,
  advanced or optimal composition, with the base delta and the composition slack chosen per k
  to minimise the total epsilon within a total delta budget.

All functions validate their arguments (:class:`dpbounds.DPBoundsError` naming the parameter),
broadcast over arrays and return Python floats for scalar input.  See docs/composition.md.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpbounds import _ufuncs  # type: ignore[attr-defined, unused-ignore]
from dpbounds import _validation as V
from dpbounds._binomial import log_pmf
from dpbounds._errors import DPBoundsError

__all__ = ["subsample", "naive", "advanced", "optimal", "optimal_delta",
           "subsampled_epsilon", "SubsampledComposition"]

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


# --------------------------------------------------------------------------- optimal (KOV)
# The k-fold composition of (eps, delta)-DP mechanisms is dominated by that of Kairouz-Oh-
# Viswanath's extremal mechanism; its hockey-stick divergence at eps_g is
#     1 - (1 - delta)^k (1 - d_rr(eps_g)),
#     d_rr(eps_g) = sum_{j : (2j - k) eps > eps_g} P_j (1 - e^{eps_g - (2j - k) eps}),
# P_j = Bin(k, e^eps / (1 + e^eps)) at j: k-fold randomized response, whose privacy loss with j
# "truthful" answers is (2j - k) eps.  Every term is >= 0, so summing them in log space loses
# nothing to cancellation.  The terms beyond a window around max(t, mode) are bounded by a
# geometric series (the ratio P_{j+1}/P_j decreases in j); the window grows until that bound is
# below 1e-17 of the sum, so each evaluation costs O(sqrt(k)), not O(k).

#: Memory cap of the optimal composition: a window of the k-fold binomial holds at most this many
#: terms (32 MiB per float64 array, ~0.05 s per numpy pass, so Ctrl-C stays prompt).  The window
#: needs ~10 sqrt(k p (1 - p)) terms, p = e^eps / (1 + e^eps): k up to ~1e11 for any eps.
WINDOW_MAX = 1 << 22


class _RR:
    """k-fold randomized response with parameter eps: windows of log P_j and log Q_j = log P_{k-j}.

    Every sum the optimal composition needs is over j >= t >= floor(k/2), of P_j (unimodal,
    mode ~ k e^eps/(1+e^eps)) or of Q_j (decreasing there).  Each is taken over a window of
    O(sqrt(k)) terms; the terms left out on either side are bounded (P increases below its mode,
    the ratio P_{j+1}/P_j decreases in j) and the window widens until both bounds are below
    1e-17 of the window's sum.
    """

    def __init__(self, eps: float, k: int) -> None:
        self.eps, self.k = eps, k
        self.log_p = -float(np.logaddexp(0.0, -eps))
        self.log_q = -float(np.logaddexp(0.0, eps))
        self.np_, self.nq = k * math.exp(self.log_p), k * math.exp(self.log_q)
        self.mode = math.floor((k + 1) * math.exp(self.log_p))
        self.width = math.ceil(10.0 * math.sqrt(k * math.exp(self.log_p + self.log_q)) + 20.0)

    def _lpmf(self, j: FArr) -> FArr:
        return log_pmf(j, self.k, self.log_p, self.log_q, self.np_, self.nq)

    def window(self, t: int, of_q: bool) -> tuple[FArr, FArr]:
        """j (a window of j >= t) and log P_j (``of_q``: log Q_j) on it."""
        k, w = self.k, self.width
        if t > k:
            e = np.empty(0)
            return e, e
        ratio_factor = math.exp(-self.eps) if of_q else math.exp(self.eps)
        a = t if of_q else max(t, self.mode - w)  # Q_j decreases for j >= k/2
        b = (t if of_q else max(t, self.mode)) + w
        small = math.log(1e-17)
        while True:
            b = min(b, k)
            size = min(b + 1, k) + 1 - a
            if size > WINDOW_MAX:  # before allocating it
                raise DPBoundsError(
                    f"k={k} is too large for the optimal composition at epsilon={self.eps!r}: it needs a "
                    f"window of {size:,} binomial terms, above the cap of {WINDOW_MAX:,} (k up to ~1e11 "
                    "fits for any epsilon); use advanced composition or the RDP accountant")
            j = np.arange(a, min(b + 1, k) + 1, dtype=np.float64)  # one past b for the tail bound
            lv = self._lpmf(k - j) if of_q else self._lpmf(j)
            n = b - a + 1
            total = _logaddexp_fold(lv[:n])
            ok = True
            if b < k:
                r = (k - (b + 1.0)) / (b + 2.0) * ratio_factor
                ok = r < 1.0 and (lv[n] - math.log1p(-r) <= total + small or lv[n] < -745.0)
            if ok and a > t:  # P_j <= P_a for t <= j < a (below the mode)
                ok = math.log(a - t) + lv[0] <= total + small or lv[0] < -745.0
            if ok:
                return j[:n], lv[:n]
            w *= 2
            a, b = (a if of_q else max(t, a - w)), b + w

    def delta_at(self, eps_g: float) -> float:
        """d_rr(eps_g) for eps_g >= 0, each term P_j (1 - e^{eps_g - (2j-k) eps}) >= 0."""
        k, e = self.k, self.eps
        j, lp = self.window(math.floor((k + eps_g / e) / 2.0), False)
        hi, lo = _two_prod(2.0 * j - k, e)
        with np.errstate(divide="ignore"):
            f = np.log(np.maximum(-np.expm1((eps_g - hi) - lo), 0.0))
        return _sum_exp(lp + f)

    def delta_at_break(self, s: int) -> float:
        """d_rr at the breakpoint eps_g = (2s - k) eps: terms j > s with factor 1 - e^{-2(j-s) eps}."""
        j, lp = self.window(s + 1, False)
        return _sum_exp(lp + np.log(-np.expm1(-2.0 * (j - s) * self.eps)))

    def log_q_tail(self, t: int) -> float:
        """log sum_{j >= t} Q_j."""
        lq = self.window(t, True)[1]
        return _logaddexp_fold(lq) if lq.size else -math.inf


_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)


def _two_prod(a: Any, b: float) -> tuple[Any, Any]:
    """hi + lo = a * b exactly (Dekker): near a breakpoint eps_g - (2j - k) eps cancels, and the
    rounding of the product would otherwise be the whole error (for |a b| < 1e300)."""
    hi = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ah, bh = ca - (ca - a), cb - (cb - b)
    al, bl = a - ah, b - bh
    return hi, ((ah * bh - hi) + ah * bl + al * bh) + al * bl


_FOLD_CHUNK = 1 << 16


def _logaddexp_fold(v: FArr) -> float:
    """``np.logaddexp.reduce(v)`` bit for bit (the reduction is a left fold, so carrying the
    accumulator across chunks repeats it exactly), in chunks of 2**16 terms: one reduce over a
    window of 2**22 terms is a single ~0.13 s numpy call that Ctrl-C cannot interrupt."""
    acc = np.logaddexp.reduce(v[:_FOLD_CHUNK])
    for i in range(_FOLD_CHUNK, v.size, _FOLD_CHUNK):
        acc = np.logaddexp.reduce(v[i:i + _FOLD_CHUNK], initial=acc)
    return float(acc)


def _sum_exp(logs: FArr) -> float:
    m = float(np.max(logs)) if logs.size else -math.inf
    if m == -math.inf:
        return 0.0
    return float(math.exp(m) * np.sum(np.exp(logs - m)))


def _log_survive(delta: float, k: float) -> float:
    """k log(1 - delta) (= -inf for delta = 1)."""
    return -math.inf if delta >= 1.0 else k * math.log1p(-delta)


def _optimal_delta_1(e: float, d: float, k: int, eg: float) -> float:
    hi, lo = _two_prod(float(k), e)
    if e == 0.0 or eg - hi >= lo:  # eps_g >= k eps, exactly
        rr = 0.0
    else:
        rr = _RR(e, k).delta_at(eg)
    ls = _log_survive(d, k)
    if rr >= 1.0 or ls == -math.inf:
        return 1.0
    return -math.expm1(ls + math.log1p(-rr))


def _optimal_1(e: float, d: float, k: int, target: float) -> float:
    ls = _log_survive(d, k)
    if ls == -math.inf:
        return math.inf if target < 1.0 else 0.0
    # tau = 1 - (1 - target) / (1 - delta)^k; where (1 - delta)^k underflows next to 1 - target
    # (x > 709) tau is hugely negative: no eps reaches the target (was an OverflowError at k = 2^70)
    x = math.log1p(-target) - ls if target < 1.0 else -math.inf
    tau = (-math.expm1(x) if x < 709.0 else -math.inf) if target < 1.0 else 1.0
    if tau < 0.0:
        return math.inf  # the mechanisms' own delta already exceeds the target
    if e == 0.0:
        return 0.0
    if tau == 0.0:
        return k * e
    rr = _RR(e, k)
    if rr.delta_at(0.0) <= tau:
        return 0.0
    lo, hi = k // 2, k  # d_rr at breakpoint lo (<= 0) > tau >= 0 = d_rr at breakpoint k
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if rr.delta_at_break(mid) <= tau:
            hi = mid
        else:
            lo = mid
    # on [(2lo - k) eps, (2hi - k) eps] the sum runs over j >= hi and is linear in e^{eps_g}:
    # d_rr = D(lo) - e^{(2lo - k) eps} expm1(x) sum_{j >= hi} Q_j, x = eps_g - (2lo - k) eps.
    a = (2.0 * lo - k) * e
    excess = rr.delta_at_break(lo) - tau
    y = math.exp(math.log(excess) - a - rr.log_q_tail(hi)) if excess > 0.0 else 0.0
    return min(max(a + math.log1p(y), 0.0), (2.0 * hi - k) * e)


def _elementwise(f: Callable[[float, float, int, float], float], *arrays: FArr) -> Any:
    e, d, k, x = arrays
    out = np.empty(e.shape)
    for idx in np.ndindex(e.shape):
        out[idx] = f(float(e[idx]), float(d[idx]), int(k[idx]), float(x[idx]))
    return V.scalar_or_array(out)


def optimal_delta(epsilon: Any, delta: Any, k: Any, epsilon_total: Any) -> Any:
    """Exact delta of the optimal k-fold composition of (eps, delta)-DP mechanisms at ``epsilon_total``.

    The optimal composition theorem of Kairouz, Oh and Viswanath ("The Composition Theorem for
    Differential Privacy", 2015): every adaptive composition of k (eps, delta)-DP mechanisms is
    (eps_g, delta_g)-DP with ``delta_g = 1 - (1 - delta)^k (1 - d(eps_g))``, where ``d`` is the
    hockey-stick divergence of k-fold randomized response with parameter eps, and no smaller
    delta_g holds for all such mechanisms.  Evaluated for every real ``epsilon_total``, not only
    at the theorem's breakpoints (k - 2i) eps.

    Parameters
    ----------
    epsilon : array_like
        Per-mechanism eps, finite and >= 0.
    delta : array_like
        Per-mechanism delta in [0, 1].
    k : array_like
        Number of compositions, an integer >= 1 (the memory cap of :func:`optimal` applies).
    epsilon_total : array_like
        eps_g >= 0 (``inf`` gives ``1 - (1 - delta)^k``).

    Returns
    -------
    float or ndarray
        delta_g.  Relative error <= 1e-12 against an mpmath evaluation of the sum (k up to 1e4,
        tests/test_composition.py), and equal to a brute-force enumeration of the composed
        extremal mechanism for small k.  Cost O(sqrt(k)) per element: the binomial terms are
        summed in log space over a window whose omitted tail is certified < 1e-17 of the sum.

    Examples
    --------
    >>> from dpbounds import composition
    >>> d = composition.optimal_delta(0.1, 0.0, 100, 2.0)
    >>> f"{d:.4e}"
    '2.0140e-02'
    """
    e, d, kk, eg = V.check_args({"epsilon": C.FINITE_NONNEGATIVE, "delta": C.CLOSED_UNIT,
                                 "k": C.INTEGER_GE_1, "epsilon_total": C.NONNEGATIVE},
                                epsilon=epsilon, delta=delta, k=k, epsilon_total=epsilon_total)
    return _elementwise(_optimal_delta_1, e, d, kk, eg)


def optimal(epsilon: Any, delta: Any, k: Any, target_delta: Any) -> Any:
    """Smallest total eps of the optimal k-fold composition of (eps, delta)-DP mechanisms.

    The inverse of :func:`optimal_delta` in ``epsilon_total``: the exact optimal composition of
    Kairouz, Oh and Viswanath ("The Composition Theorem for Differential Privacy", 2015) for
    homogeneous mechanisms, never larger than :func:`naive` or :func:`advanced` at the same total
    delta.

    Parameters
    ----------
    epsilon : array_like
        Per-mechanism eps, finite and >= 0.
    delta : array_like
        Per-mechanism delta in [0, 1].
    k : array_like
        Number of compositions, an integer >= 1 (600,000 takes ~50 ms).  Memory cap: the
        sum runs over a window of ~10 sqrt(k p (1 - p)) binomial terms, p = e^eps / (1 + e^eps),
        at most ``WINDOW_MAX`` = 2**22 (k up to ~1e11 for any eps); a larger k raises
        :class:`~dpbounds.DPBoundsError` naming k before allocating.
    target_delta : array_like
        Total delta in [0, 1].

    Returns
    -------
    float or ndarray
        The smallest eps_g with ``optimal_delta(epsilon, delta, k, eps_g) <= target_delta``;
        ``inf`` when ``target_delta < 1 - (1 - delta)^k`` (no eps reaches it).  The delta as a
        function of eps_g is piecewise linear in e^{eps_g} between the breakpoints
        (2j - k) eps; a bisection over the O(log k) breakpoints finds the piece and the root
        on it is solved in closed form.  Relative error <= 1e-10 against an mpmath root
        (tests/test_composition.py).

    Examples
    --------
    >>> from dpbounds import composition
    >>> round(composition.optimal(0.1, 0.0, 100, 1e-5), 4)
    4.3068
    """
    e, d, kk, t = V.check_args({"epsilon": C.FINITE_NONNEGATIVE, "delta": C.CLOSED_UNIT,
                                "k": C.INTEGER_GE_1, "target_delta": C.CLOSED_UNIT},
                               epsilon=epsilon, delta=delta, k=k, target_delta=target_delta)
    return _elementwise(_optimal_1, e, d, kk, t)


# --------------------------------------------------------------------------- the paper's curves

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
        dense scan (tests/test_composition.py).  The subsampling lemma and the composition
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
