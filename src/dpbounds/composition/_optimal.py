"""The optimal composition of k homogeneous (eps, delta)-DP mechanisms (Kairouz, Oh and Viswanath)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds._binomial import log_pmf
from dpbounds._errors import DPBoundsError

__all__ = ["optimal", "optimal_delta", "WINDOW_MAX"]

FArr = NDArray[np.float64]
C = V.Constraint

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
    # (x > 709) tau is hugely negative: no eps reaches the target
    # (tests/contract/test_input_contract.py, the optimal composition at k = 2^70)
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
        tests/accountant/test_composition.py), and equal to a brute-force enumeration of the composed
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
        (tests/accountant/test_composition.py).

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
