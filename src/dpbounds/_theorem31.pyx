# cython: language_level=3
"""Validated entry points for Theorem 3.1, with a scalar fast path.

A call with Python floats/ints goes straight to C (no numpy round trip), which
keeps ``delta_bound(1.0, 1e6)`` within a few times the cost of ``math.exp``;
anything else is validated as whole arrays and dispatched to the ufuncs in
:mod:`dpbounds._ufuncs`.
"""
cimport cython
from libc.math cimport NAN, INFINITY, floor, isnan, isinf
from dpbounds._csrc cimport *

import numpy as np
from dpbounds import _ufuncs
from dpbounds._validation import (
    broadcast, check_choice, check_finite_positive, check_open_unit, check_rounds, scalar_or_array,
)

_COEFFICIENTS = ("simplified", "exact")
_VALIDITY_AT = ("delta_min", "target")


cdef inline int _kind(object coefficient) except -1:
    if coefficient == "simplified":
        return DPB_COEF_SIMPLIFIED
    if coefficient == "exact":
        return DPB_COEF_EXACT
    check_choice("coefficient", coefficient, _COEFFICIENTS)
    return -1


cdef inline bint _as_double(object o, double *out):
    """Fast unboxing of Python floats (incl. numpy.float64) and small ints; False otherwise."""
    if isinstance(o, float):
        out[0] = <double>o
        return True
    if type(o) is int and -(1 << 62) < o < (1 << 62):
        out[0] = <double>o
        return True
    return False


cdef inline bint _bad_sigma(double s) noexcept nogil:
    return not (s > 0.0) or isinf(s)


cdef inline bint _bad_rounds(double m) noexcept nogil:
    return not (m >= 3.0) or isinf(m) or m != floor(m)


cdef inline bint _bad_delta(double d) noexcept nogil:
    return not (d > 0.0 and d < 1.0)


# One-entry cache of the sigma-only constants per coefficient: training loops call
# with a fixed sigma, and prepare (exp, expm1, erf) is most of a scalar call.
# Only touched with the GIL held, between no Python calls, so it is never torn.
cdef dpb_t31_sigma _cache[2]
cdef double _cache_sigma[2]
_cache_sigma[0] = NAN
_cache_sigma[1] = NAN


cdef inline const dpb_t31_sigma *_prepared(double s, int kind) noexcept:
    if s != _cache_sigma[kind]:
        dpb_t31_prepare(s, kind, &_cache[kind])
        _cache_sigma[kind] = s
    return &_cache[kind]


def _raise_sigma(s):
    raise ValueError(f"sigma must be finite and > 0, got {s!r}")


def _raise_rounds(m):
    raise ValueError(f"rounds must be an integer >= 3, got {m!r}")


def _raise_delta(d):
    raise ValueError(f"delta must be in the open interval (0, 1), got {d!r}")


def delta_bound(sigma, rounds, coefficient="simplified", *, on_invalid="nan"):
    """delta_bound(sigma, rounds, coefficient="simplified", *, on_invalid="nan")

    The six-term delta_min of Theorem 3.1, returned only where the theorem applies.

    For one epoch of ``rounds`` = M rounds of DP-SGD with random allocation and
    noise multiplier sigma, Theorem 3.1 gives f(a) >= 1 - a - delta for every
    delta >= delta_min(sigma, M), provided condition (2) holds (evaluated at
    delta_min), M >= 3 and sigma >= sqrt(3/ln M).  SPEC Part A sections 4-6.

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    rounds : int or array_like
        Rounds per epoch M, an integer >= 3.
    coefficient : {"simplified", "exact"}
        ``"simplified"``: the theorem as stated, coefficient (w^3 + 4)/(w - 1)^2
        (eq. (22)).  ``"exact"``: the exact third absolute moment rho^3/(w - 1)^2
        (section 3.1), a smaller and equally valid bound.
    on_invalid : {"nan", "raise"}
        What to return where the theorem does not apply: NaN (default), or raise
        ``ValueError`` with the reason.  Never the unqualified number.

    Returns
    -------
    float or ndarray
        delta_min, or NaN where Theorem 3.1 does not apply.

    Raises
    ------
    ValueError
        If sigma is not finite and positive, rounds is not an integer >= 3, the
        shapes do not broadcast, or (``on_invalid="raise"``) the theorem does not apply.

    Notes
    -----
    Accuracy: relative error <= 1e-14 against a 50-digit mpmath evaluation of the
    same formula for sigma in [0.07, 1e4] and M in [3, 1e15] (tests/test_theorem31.py).
    Use :func:`dpbounds.theorem31` for the terms, the validity status and its reason.
    For dask/xarray inputs call the raw ufunc ``dpbounds.ufuncs.delta_bound_simplified``
    (NaN for invalid or bad input).

    Examples
    --------
    >>> from dpbounds import delta_bound
    >>> round(delta_bound(1.0, 1140369), 6)
    0.01
    """
    cdef double s = 0.0, m = 0.0, r
    cdef int kind = _kind(coefficient)
    if _as_double(sigma, &s) and _as_double(rounds, &m):
        if _bad_sigma(s):
            _raise_sigma(sigma)
        if _bad_rounds(m):
            _raise_rounds(rounds)
        if dpb_t31_status(_prepared(s, kind), m, NAN, &r) == 0:
            return r
        if on_invalid == "nan":
            return NAN
        check_choice("on_invalid", on_invalid, ("nan", "raise"))
        from dpbounds.theorem31 import theorem31
        raise ValueError("Theorem 3.1 does not apply: " + theorem31(s, m, coefficient=coefficient).reason)
    check_choice("on_invalid", on_invalid, ("nan", "raise"))
    try:
        sa = np.asarray(sigma, dtype=np.float64)
        ma = np.asarray(rounds, dtype=np.float64)
        checked = _ufuncs._delta_bound_checked_exact if kind == DPB_COEF_EXACT else _ufuncs._delta_bound_checked_simplified
        out, status = checked(sa, ma)
    except (TypeError, ValueError):
        # non-numeric input or shapes that do not broadcast: the checks name the parameter
        broadcast(sigma=check_finite_positive("sigma", sigma), rounds=check_rounds("rounds", rounds))
        raise
    status = np.asarray(status)
    if status.any():
        if (status & 3).any():      # bad arguments: let the checks produce the message
            check_finite_positive("sigma", sa)
            check_rounds("rounds", ma)
        if on_invalid == "raise":
            n = int(np.count_nonzero(status))
            raise ValueError(f"Theorem 3.1 does not apply at {n} of {status.size} (sigma, rounds) points")
    return scalar_or_array(out)


def rounds_closed_form(sigma, delta, coefficient="simplified"):
    """rounds_closed_form(sigma, delta, coefficient="simplified")

    Eq. (4): the real-valued number of rounds at which the two leading terms of
    delta_min reach delta,

        M = 1 + ( [2 B coef(sigma) sqrt(w - 1) + sqrt((w - 1)/(2 pi))] / delta )^2.

    An approximation of :func:`rounds_required` (within 0.2% on Table 1), not a
    certified value: it ignores T3..T6 and the validity condition.

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    delta : float or array_like
        Target delta in (0, 1).
    coefficient : {"simplified", "exact"}
        See :func:`delta_bound`.

    Returns
    -------
    float or ndarray
        M (real-valued), ``inf`` where it exceeds the double range.

    Notes
    -----
    Relative error <= 1e-14 against mpmath (tests/test_rounds.py).  SPEC Part A section 7.
    """
    cdef double s = 0.0, d = 0.0
    cdef int kind = _kind(coefficient)
    if _as_double(sigma, &s) and _as_double(delta, &d):
        if _bad_sigma(s):
            _raise_sigma(sigma)
        if _bad_delta(d):
            _raise_delta(delta)
        return dpb_rounds_closed_form(s, d, kind)
    sa, da = broadcast(sigma=check_finite_positive("sigma", sigma), delta=check_open_unit("delta", delta))
    return scalar_or_array(_ufuncs.rounds_closed_form(sa, da, kind))


def rounds_required(sigma, delta, coefficient="simplified", validity_at="delta_min", *, epochs=1):
    """rounds_required(sigma, delta, coefficient="simplified", validity_at="delta_min", *, epochs=1)

    M_exact: the smallest integer number of rounds M for which Theorem 3.1
    certifies f(a) >= 1 - a - delta (per epoch).

    M_exact = min{ integer M >= 3 : delta_min(sigma, M) <= delta, condition (2)
    holds and sigma >= sqrt(3/ln M) }.  All three conditions are monotone in M;
    the search (closed-form start, exponential bracket, integer bisection, in C)
    uses the same delta_min evaluation as :func:`delta_bound`, so the result is
    exactly minimal: at M_exact - 1 some condition fails.

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    delta : float or array_like
        Target delta in (0, 1).  With ``epochs`` = E > 1 this is the total over E
        epochs: the per-epoch target is 1 - (1 - delta)^(1/E), because
        f^{xE}(a) >= (1 - delta_epoch)^E - a (SPEC Part A section 11).
    coefficient : {"simplified", "exact"}
        See :func:`delta_bound`.
    validity_at : {"delta_min", "target"}
        Which delta enters condition (2): delta_min(sigma, M) (default, the
        logically weakest requirement) or the target delta (conservative).
        SPEC Part A section 6 discusses both readings; they agree on Table 1.
    epochs : int, optional
        Number of epochs E >= 1 (default 1).

    Returns
    -------
    float or ndarray
        Integer-valued M_exact, or ``inf`` when no M <= 2**53 qualifies (with
        ``validity_at="target"``: when delta >= 1/2 - Phi(-kappa), condition (2)
        can never hold, e.g. delta = 0.01 and sigma >= 4.6).

    Examples
    --------
    >>> from dpbounds import rounds_required
    >>> rounds_required(1.0, 0.01)
    1140369.0
    >>> rounds_required(2.0, 0.01, coefficient="exact")
    59097.0
    """
    cdef double s = 0.0, d = 0.0, e = 0.0
    cdef int kind = _kind(coefficient)
    cdef int tgt
    if validity_at == "delta_min":
        tgt = 0
    else:
        check_choice("validity_at", validity_at, _VALIDITY_AT)
        tgt = 1
    if _as_double(sigma, &s) and _as_double(delta, &d) and _as_double(epochs, &e):
        if _bad_sigma(s):
            _raise_sigma(sigma)
        if _bad_delta(d):
            _raise_delta(delta)
        if not (e >= 1.0) or isinf(e) or e != floor(e):
            raise ValueError(f"epochs must be an integer >= 1, got {epochs!r}")
        if e != 1.0:
            d = dpb_per_epoch_delta(d, e)
        return dpb_rounds_required(s, d, kind, tgt)
    sa, da, ea = broadcast(
        sigma=check_finite_positive("sigma", sigma),
        delta=check_open_unit("delta", delta),
        epochs=check_rounds("epochs", epochs, minimum=1),
    )
    da = _ufuncs.per_epoch_delta(da, ea)
    return scalar_or_array(_ufuncs.rounds_required(sa, da, kind, tgt))


def min_dataset_size(sigma, rounds, clip_norm=1.0, noise_ratio=0.1):
    """min_dataset_size(sigma, rounds, clip_norm=1.0, noise_ratio=0.1)

    Smallest dataset size N for which the per-round noise clip_norm * sigma * M / N
    of the averaged gradient stays at most ``noise_ratio`` (section 5, Table 1's
    "Min N" with the paper's defaults C = 1 and ratio 0.1):

        N = clip_norm * sigma * rounds / noise_ratio      (real-valued).

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    rounds : int or array_like
        Rounds per epoch M (integer >= 1), typically :func:`rounds_required`.
    clip_norm, noise_ratio : float or array_like
        Clipping norm C > 0 and tolerated noise ratio > 0.
    """
    cdef double s = 0.0, m = 0.0, cn = 0.0, nr = 0.0
    if (_as_double(sigma, &s) and _as_double(rounds, &m) and _as_double(clip_norm, &cn)
            and _as_double(noise_ratio, &nr)):
        if _bad_sigma(s):
            _raise_sigma(sigma)
        if not (m >= 1.0) or isinf(m) or m != floor(m):
            raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
        if _bad_sigma(cn):
            raise ValueError(f"clip_norm must be finite and > 0, got {clip_norm!r}")
        if _bad_sigma(nr):
            raise ValueError(f"noise_ratio must be finite and > 0, got {noise_ratio!r}")
        return dpb_min_dataset_size(s, m, cn, nr)
    arrs = broadcast(
        sigma=check_finite_positive("sigma", sigma),
        rounds=check_rounds("rounds", rounds, minimum=1),
        clip_norm=check_finite_positive("clip_norm", clip_norm),
        noise_ratio=check_finite_positive("noise_ratio", noise_ratio),
    )
    return scalar_or_array(_ufuncs.min_dataset_size(*arrs))
