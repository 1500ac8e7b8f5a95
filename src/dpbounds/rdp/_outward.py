"""RDP -> (eps, delta) conversion objectives rounded towards the safe side.

A privacy bound that rounds to nearest can come out below the bound it stands for: at the
order 9e15 the conversion term log(1/delta)/(alpha - 1) ~ 8e-14 is below half an ulp of an
RDP value of 9e5, so ``rdp + term`` rounds to ``rdp`` and the (eps, delta) pair it reports does
not hold.  Here every objective is evaluated together with a rigorous bound on its rounding
error, and the result is raised past that bound with exact floating-point steps:

* the sums whose rounding decides the result (``rdp + c``, ``rdp - eps``, ``(rdp - eps) +
  log(1 - 1/alpha)``) are error-free transformations (TwoSum), so their error is known
  exactly, not bounded;
* every other operation contributes its textbook bound: ``u = 2^-53`` per correctly rounded
  operation, ``_F`` per elementary function of numpy (``log``, ``log1p``, ``expm1``, ``exp``;
  2 ulp, measured on this build by tests/test_rdp_outward.py), ``_TINY`` absolute per
  subnormal result, first-order bounds widened by 1 %;
* the final value is the smallest double above (computed value + error bound)
  (:func:`_raise`, exact).

Guarantee (tests/test_rdp_outward.py, mpmath at 50 digits): the epsilon objective is never
below the exact real-arithmetic value and at most 8 ulp of its largest term above it; the
log-delta objective likewise (it ranks the orders), and :func:`delta_at` gives the delta of the
chosen order, never below the exact one (0 only where that is 0), its log at most 8 ulp of its
largest term above.  The branch decisions are made only when certain: the improved
conversion's total-variation shortcut (eps = 0 when delta^2 >= 1 - e^{-rdp}) is taken only
where the inequality holds with margin, so at its threshold the conversion formula (an upper
bound of the exact value there) answers instead.

The formulas and edge cases are those of the raw kernels ``rdp_eps_objective_*`` and
``rdp_logdelta_objective_*`` (csrc/dpb_rdp_convert.h), which round to nearest.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

#: unit roundoff of binary64
_U = 2.0 ** -53
#: relative error bound assumed of numpy's float64 log, log1p, expm1 and exp: 2 ulp (an ulp is
#: at most 2u relative); measured <= 1.05u on this build against mpmath by
#: tests/test_rdp_outward.py, which fails if a build exceeds it.
_F = 4.0 * _U
#: absolute slack for the subnormal range, where relative bounds fail (a few subnormal ulps)
_TINY = 8.0 * 2.0 ** -1074
#: widening of first-order error bounds: the neglected second-order terms are O(u^2) relative
_WIDEN = 1.01
_DBL_MAX = float(np.finfo(np.float64).max)


def _two_sum(a: Array, b: Array) -> tuple[Array, Array]:
    """s = fl(a + b) and the exact error e: a + b = s + e (Knuth's TwoSum; finite inputs)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _raise(v: Array, bound: Array) -> Array:
    """The smallest double >= v + bound for a nonnegative error bound (exact: TwoSum, then one step)."""
    # fl(v + bound) may round down; its exact error says whether it did
    s, e = _two_sum(v, bound)
    up = np.where(e > 0, np.nextafter(s, np.inf), s)
    # TwoSum needs finite operands; an infinite v stays itself
    return np.where(np.isfinite(v) & np.isfinite(bound), up, v + bound)


def _log_1m_inv(am1: Array) -> tuple[Array, Array]:
    """log(1 - 1/a) = -log1p(1/(a - 1)) and its error bound.

    This form has no cancellation near a = 1 (``log1p(-1/a)`` amplifies the rounding of 1/a
    by a/(a - 1) there): y = 1/(a-1) carries relative error <= 2u (a - 1 is exact below 2^53,
    the division rounds once), and log1p(y(1 + t)) - log1p(y) <= |t| y/(1 + y).
    """
    y = 1.0 / am1
    v = -np.log1p(y)
    err = _F * np.abs(v) + 2.0 * _U * (y / (1.0 + y))
    return v, err


def eps_objective(alpha: ArrayLike, rdp: ArrayLike, delta: ArrayLike, conversion: str) -> Array:
    """The epsilon of one order (``rdp_eps_objective_<conversion>``), never below its exact value.

    At most (1 ulp of the result + twice the error bound of the terms added to ``rdp``) above
    the exact value: a few ulp of the largest term, see tests/test_rdp_outward.py.
    """
    a, r, d = (np.asarray(x, dtype=np.float64) for x in np.broadcast_arrays(alpha, rdp, delta))
    with np.errstate(all="ignore"):
        am1 = a - 1.0
        ld = np.log(d)
        if conversion == "classic":
            c = -ld / am1
            # log: _F; a - 1: u (exact below 2^53); the division: u
            ec = np.abs(c) * (_F + 2.0 * _U)
        else:
            l1, el1 = _log_1m_inv(am1)
            la = np.log(a)
            dd = ld + la
            edd = _F * (np.abs(ld) + np.abs(la)) + _U * np.abs(dd)
            q = dd / am1
            eq = edd / am1 + 2.0 * _U * np.abs(q)
            c = l1 - q
            ec = el1 + eq + _U * np.abs(c)
        ec = _WIDEN * ec + _TINY
        s, e = _two_sum(r, c)
        # the exact value lies within s + e +- ec; fl(e + ec) is widened by 4u to cover its own rounding
        g = (e + ec) * (1.0 + 4.0 * _U)
        out = np.where(g > 0, _raise(s, np.maximum(g, 0.0)), s)
        if conversion == "improved":
            out = np.maximum(out, 0.0)
        finite = (a > 1.0) & np.isfinite(a) & np.isfinite(r)
        out = np.where(finite, out, np.where(a == np.inf, r, np.inf))
        if conversion == "improved":
            # total-variation shortcut (delta >= TV): only where delta^2 >= 1 - e^{-rdp} is certain
            lhs = d * d * (1.0 - 2.0 * _U) - _TINY
            rhs = -np.expm1(-r) * (1.0 + 2.0 * _F) + _TINY
            out = np.where((lhs >= rhs) & np.isfinite(r), 0.0, out)
        nan = np.isnan(a) | np.isnan(r) | np.isnan(d)
        return np.where(nan, np.nan, out)


def _tv_up(r: Array) -> Array:
    """sqrt(1 - e^{-rdp}), the total-variation bound, rounded up (the final delta of that branch).

    Computed in the linear domain: through its logarithm the rounding of log(y) (a few ulp of
    |log y|, up to 700) would cost up to 1e-13 relative.
    """
    y = -np.expm1(-r)
    # >= the exact 1 - e^{-rdp} (expm1: _F; the product: u); 1 - e^{-rdp} <= rdp keeps tiny
    # (subnormal) RDP values exact
    y_up = np.minimum(np.minimum(y * (1.0 + 2.0 * _F) + _TINY, r), 1.0)
    y_up = np.where(r == 0, 0.0, y_up)  # rdp = 0: TV = 0 exactly
    root = np.sqrt(y_up)  # correctly rounded: one step up covers it
    return np.where(root == 0, 0.0, np.minimum(np.nextafter(root, np.inf), 1.0))


def _log_tv_up(r: Array) -> Array:
    """An upper bound of 0.5 log(1 - e^{-rdp}), the log of the total-variation bound sqrt(1 - e^{-KL})."""
    lg = np.log(_tv_up(r))
    # log(0) = -inf is exact (rdp = 0)
    return np.where(lg == -np.inf, lg, _raise(lg, _WIDEN * _F * np.abs(lg)))


def logdelta_objective(alpha: ArrayLike, rdp: ArrayLike, eps: ArrayLike, conversion: str) -> Array:
    """log delta of one order (``rdp_logdelta_objective_<conversion>``), never below its exact value.

    At most (1 ulp + twice the error bound) above: a few ulp of the largest term of
    ``(alpha - 1)(rdp - eps + log(1 - 1/alpha)) - log(alpha)`` (or of the total-variation
    bound's log where that decides).
    """
    with np.errstate(all="ignore"):
        out = _logdelta_conversion(alpha, rdp, eps, conversion)
        if conversion == "improved":
            r = np.asarray(rdp, dtype=np.float64)
            out = np.where(np.isnan(out), out, np.minimum(out, _log_tv_up(r)))
        return out


def delta_at(alpha: ArrayLike, rdp: ArrayLike, eps: ArrayLike, conversion: str) -> Array:
    """delta (not its log) of one order, never below its exact value, 0 only where that is 0.

    The conversion's part through :func:`exp_up`; the improved conversion's total-variation
    bound sqrt(1 - e^{-rdp}) directly (a few ulp), not through its logarithm.
    """
    with np.errstate(all="ignore"):
        out = exp_up(_logdelta_conversion(alpha, rdp, eps, conversion))
        if conversion == "improved":
            r = np.asarray(rdp, dtype=np.float64)
            out = np.where(np.isnan(out), out, np.minimum(out, _tv_up(r)))
        return out


def _logdelta_conversion(alpha: ArrayLike, rdp: ArrayLike, eps: ArrayLike, conversion: str) -> Array:
    """The conversion's log delta at one order without the total-variation bound, rounded up."""
    a, r, ep = (np.asarray(x, dtype=np.float64) for x in np.broadcast_arrays(alpha, rdp, eps))
    with np.errstate(all="ignore"):
        am1 = a - 1.0
        fin = (a > 1.0) & np.isfinite(a) & np.isfinite(r) & np.isfinite(ep)
        # the edges below would make TwoSum produce NaN: feed it harmless values there
        rs, es, as_ = np.where(fin, r, 0.0), np.where(fin, ep, 0.0), np.where(fin, am1, 1.0)
        t, et = _two_sum(rs, -es)
        if conversion == "classic":
            p = as_ * t
            # (a-1)(t + et) - fl((a-1)' t): the lost et, a - 1 (u above 2^53) and the product (u)
            el = as_ * np.abs(et) * (1.0 + 2.0 * _U) + 2.0 * _U * np.abs(p)
            lv = p
        else:
            l1, el1 = _log_1m_inv(as_)
            t2, et2 = _two_sum(t, np.where(fin, l1, 0.0))
            p = as_ * t2
            ep_ = as_ * (np.abs(et + et2) + el1) * (1.0 + 2.0 * _U) + 2.0 * _U * np.abs(p)
            la = np.log(np.where(fin, a, 2.0))
            lv = p - la
            el = ep_ + _F * np.abs(la) + _U * np.abs(lv)
        lv_up = _raise(lv, _WIDEN * el + _TINY)
        # an overflowed product stands for a finite value beyond the doubles: -inf would claim
        # delta = 0, so the most negative double (delta rounds up to the smallest subnormal) answers.
        # Its error bound overflows as well, and -inf + inf is NaN: that NaN is this case, not +inf
        # (which answered delta = 1 at rdp = 9e307, eps one ulp above it, order 1.8e308)
        lv_up = np.where(np.isnan(lv_up) & (lv == -np.inf), -_DBL_MAX, lv_up)
        lv_up = np.where(np.isnan(lv_up), np.inf, np.maximum(lv_up, -_DBL_MAX))
        # edges, as the raw kernel: order inf gives +-inf, rdp inf gives 0, order 1 (KL) gives
        # +inf, eps inf gives -inf (all exact)
        edge = np.where(a == np.inf, np.where(r > ep, np.inf, -np.inf),
                        np.where(r == np.inf, 0.0, np.where(a == 1.0, np.inf, -np.inf)))
        out = np.minimum(np.where(fin, lv_up, edge), 0.0)
        nan = np.isnan(a) | np.isnan(r) | np.isnan(ep)
        return np.where(nan, np.nan, out)


def exp_up(x: ArrayLike) -> Array:
    """exp(x) rounded so that it is never below the exact exponential (0 only for x = -inf), capped at 1 for x <= 0."""
    xx = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        y = np.exp(xx)
        # exp: _F relative before the rounding to a subnormal, which adds half a subnormal ulp;
        # an exact value below the smallest subnormal answers that subnormal
        up = _raise(y, _WIDEN * _F * y + 2.0 ** -1074)
        out = np.where(xx == -np.inf, 0.0, up)
        return np.where(xx <= 0.0, np.minimum(out, 1.0), out)
