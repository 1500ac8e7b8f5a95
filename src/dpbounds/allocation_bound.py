"""Theorem 3.1 of the random-allocation paper: the validated functions and the result object.

* :func:`delta_bound`, :func:`rounds_required`, :func:`rounds_closed_form` and
  :func:`min_dataset_size` -- the bound, the rounds it needs and the smallest dataset;
* :func:`theorem31` and :class:`Theorem31Result` -- delta_min with its six terms, validity and
  the reason it fails; :func:`delta_bound_terms`;
* :func:`lognormal_moments` -- the moments of the per-round likelihood ratio it is built from.

The paper: "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation:
Tight Upper and Lower Bounds"; the formulas are written out in docs/theorem31.md.

The four functions of the first item are called in training loops, one Python number at a
time.  Each is decorated with ``_kernels.scalar_fast_path``: a compiled entry
(``src/dpbounds/_kernels_theorem31.pxi``) answers a call with Python numbers inside the domain
directly from C and passes every other call to the function written here, so a scalar call
costs no Python frame.  Both compute the same numbers with the same C functions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbounds import (
    _errors,
    _kernels,  # type: ignore[attr-defined, unused-ignore]
    _ufuncs,  # type: ignore[attr-defined, unused-ignore]
)
from dpbounds._errors import STATUS_BITS, DPBoundsError, status_reasons
from dpbounds._validation import (
    Constraint,
    as_float_array,
    broadcast,
    check_args,
    check_choice,
    check_finite_positive,
    check_open_unit,
    check_rounds,
    scalar_or_array,
)

__all__ = [
    "BERRY_ESSEEN_CONSTANT",
    "LognormalMoments",
    "Theorem31Result",
    "delta_bound",
    "delta_bound_terms",
    "lognormal_moments",
    "min_dataset_size",
    "rounds_closed_form",
    "rounds_required",
    "theorem31",
]

#: Berry-Esseen constant for i.i.d. summands (Shevtsova 2011) used by Theorem 3.1 (read from the C core).
BERRY_ESSEEN_CONSTANT: float = float(_ufuncs.BERRY_ESSEEN_CONSTANT)

_COEFFICIENTS = ("exact", "simplified")
_DELTA_BELOW_MIN = next(b.bit for b in STATUS_BITS if b.name == "DELTA_BELOW_MIN")
_BAD_INPUT = next(b.bit for b in STATUS_BITS if b.name == "BAD_INPUT")

# the order in which the messages of the four functions list the choices
_COEFFICIENT_CHOICES = ("simplified", "exact")
_VALIDITY_AT = ("delta_min", "target")
_ON_INVALID = ("nan", "raise")

_SIGMA_ROUNDS = {"sigma": Constraint.FINITE_POSITIVE, "rounds": Constraint.INTEGER_GE_3}
_SIGMA_DELTA = {"sigma": Constraint.FINITE_POSITIVE, "delta": Constraint.OPEN_UNIT}
_SIGMA_DELTA_EPOCHS = dict(_SIGMA_DELTA, epochs=Constraint.INTEGER_GE_1)
_DATASET = {"sigma": Constraint.FINITE_POSITIVE, "rounds": Constraint.INTEGER_GE_1,
            "clip_norm": Constraint.FINITE_POSITIVE, "noise_ratio": Constraint.FINITE_POSITIVE}


def _python_number(x: Any) -> bool:
    """A Python float (numpy.float64 included) or an int within 2**62: what the compiled fast
    path reads directly.  With two of them, delta_bound's message names the reasons of the one
    point; any other argument is read as an array (the same numbers)."""
    return isinstance(x, float) or (type(x) is int and -(1 << 62) < x < (1 << 62))


@overload
def delta_bound(sigma: float, rounds: float, coefficient: Literal["exact", "simplified"] = ..., *,
                on_invalid: Literal["nan", "raise"] = ...) -> float: ...
@overload
def delta_bound(sigma: ArrayLike, rounds: ArrayLike, coefficient: Literal["exact", "simplified"] = ..., *,
                on_invalid: Literal["nan", "raise"] = ...) -> float | NDArray[np.float64]: ...
@_kernels.scalar_fast_path
def delta_bound(sigma: Any, rounds: Any, coefficient: str = "exact", *, on_invalid: str = "nan") -> Any:
    """The six-term delta_min of Theorem 3.1, returned only where the theorem applies.

    For one epoch of ``rounds`` = M rounds of DP-SGD with random allocation and noise
    multiplier sigma, Theorem 3.1 gives f(a) >= 1 - a - delta for every
    delta >= delta_min(sigma, M), provided condition (2) holds (evaluated at delta_min),
    M >= 3 and sigma >= sqrt(3/ln M).  See docs/theorem31.md and the paper "Trade-off
    Functions for DP-SGD with Subsampling based on Random Allocation: Tight Upper and
    Lower Bounds".

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    rounds : int or array_like
        Rounds per epoch M, an integer >= 3.
    coefficient : {"exact", "simplified"}
        ``"exact"`` (default): the Berry-Esseen coefficient with the exact third absolute
        moment, rho^3/(w - 1)^2 (section 3.1 of the paper): the smaller bound, equally
        valid.  ``"simplified"``: the theorem as stated, (w^3 + 4)/(w - 1)^2 (eq. (22));
        use it to reproduce the paper's tables.
    on_invalid : {"nan", "raise"}
        What to return where the theorem does not apply: NaN (default), or raise
        :class:`dpbounds.DPBoundsError` with the reason.  Never the unqualified number.

    Returns
    -------
    float or ndarray
        delta_min, or NaN where Theorem 3.1 does not apply.

    Raises
    ------
    DPBoundsError
        If sigma is not finite and positive, rounds is not an integer >= 3, the shapes do
        not broadcast, or (``on_invalid="raise"``) the theorem does not apply.

    Notes
    -----
    Accuracy: relative error <= 1e-14 against a 50-digit mpmath evaluation of the same
    formula for sigma in [0.07, 1e4] and M in [3, 1e15] (tests/special/test_theorem31.py).  Use
    :func:`dpbounds.theorem31` for the terms, the validity status and its reason.  For
    dask/xarray inputs call the raw ufunc ``dpbounds.ufuncs.delta_bound_exact`` (NaN for
    invalid or bad input).

    Examples
    --------
    >>> from dpbounds import delta_bound
    >>> round(delta_bound(1.0, 1140369, coefficient="simplified"), 6)
    0.01
    """
    check_choice("coefficient", coefficient, _COEFFICIENT_CHOICES)
    check_choice("on_invalid", on_invalid, _ON_INVALID)
    checked = getattr(_ufuncs, f"_delta_bound_checked_{coefficient}")
    if _python_number(sigma) and _python_number(rounds):
        value, st = checked(float(sigma), float(rounds))
        st = int(st)
        if st == 0:
            return float(value)
        if st & _BAD_INPUT:
            check_args(_SIGMA_ROUNDS, sigma=sigma, rounds=rounds)
        if on_invalid == "nan":
            return math.nan
        raise DPBoundsError("Theorem 3.1 does not apply: " + "; ".join(status_reasons(st)))
    # as_float_array refuses what is not real numbers (complex, None, strings) naming the parameter
    sa, ra = as_float_array("sigma", sigma), as_float_array("rounds", rounds)
    try:
        out, status = checked(sa, ra)
    except ValueError:
        # shapes that do not broadcast: the checks name the parameters
        check_args(_SIGMA_ROUNDS, sigma=sigma, rounds=rounds)
        raise
    status = np.asarray(status)
    if status.size == 0:
        # an empty broadcast has no status to read: check the arguments themselves, as every
        # other validated function does (a NaN rounds next to an empty sigma is still refused)
        check_args(_SIGMA_ROUNDS, sigma=sigma, rounds=rounds)
    elif status.any():
        if (status & _BAD_INPUT).any():      # bad arguments: the constraint checks produce the message
            check_args(_SIGMA_ROUNDS, sigma=sigma, rounds=rounds)
        if on_invalid == "raise":
            raise DPBoundsError("Theorem 3.1 does not apply at " + _errors.describe_status(status).replace(
                " elements", " (sigma, rounds) points", 1))
    return scalar_or_array(out)


@overload
def rounds_closed_form(sigma: float, delta: float, coefficient: Literal["exact", "simplified"] = ...) -> float: ...
@overload
def rounds_closed_form(sigma: ArrayLike, delta: ArrayLike,
                       coefficient: Literal["exact", "simplified"] = ...) -> float | NDArray[np.float64]: ...
@_kernels.scalar_fast_path
def rounds_closed_form(sigma: Any, delta: Any, coefficient: str = "exact") -> Any:
    """The closed-form number of rounds (eq. (4) of the paper) at which the two leading
    terms of delta_min reach delta,

        M = 1 + ( [2 B coef(sigma) sqrt(w - 1) + sqrt((w - 1)/(2 pi))] / delta )^2.

    An approximation of :func:`rounds_required` (within 0.2% on Table 1), not a certified
    value: it ignores T3..T6 and the validity condition.

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    delta : float or array_like
        Target delta in (0, 1).
    coefficient : {"exact", "simplified"}
        See :func:`delta_bound`.

    Returns
    -------
    float or ndarray
        M (real-valued), ``inf`` where it exceeds the double range.

    Notes
    -----
    Relative error <= 1e-14 against mpmath (tests/special/test_rounds.py).
    """
    check_choice("coefficient", coefficient, _COEFFICIENT_CHOICES)
    sa, da = check_args(_SIGMA_DELTA, sigma=sigma, delta=delta)
    return scalar_or_array(getattr(_ufuncs, f"rounds_closed_form_{coefficient}")(sa, da))


@overload
def rounds_required(sigma: float, delta: float, coefficient: Literal["exact", "simplified"] = ...,
                    validity_at: Literal["delta_min", "target"] = ..., *, epochs: int = ...) -> float: ...
@overload
def rounds_required(sigma: ArrayLike, delta: ArrayLike, coefficient: Literal["exact", "simplified"] = ...,
                    validity_at: Literal["delta_min", "target"] = ..., *,
                    epochs: ArrayLike = ...) -> float | NDArray[np.float64]: ...
@_kernels.scalar_fast_path
def rounds_required(sigma: Any, delta: Any, coefficient: str = "exact", validity_at: str = "delta_min", *,
                    epochs: Any = 1) -> Any:
    """M_exact: the smallest integer number of rounds M for which Theorem 3.1 certifies
    f(a) >= 1 - a - delta (per epoch).

    M_exact = min{ integer M >= 3 : delta_min(sigma, M) <= delta, condition (2) holds and
    sigma >= sqrt(3/ln M) }.  All three conditions are monotone in M; the search
    (closed-form start, exponential bracket, integer bisection, in C) uses the same
    delta_min evaluation as :func:`delta_bound`, so the result is exactly minimal: at
    M_exact - 1 some condition fails.

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    delta : float or array_like
        Target delta in (0, 1).  With ``epochs`` = E > 1 this is the total over E epochs:
        the per-epoch target is 1 - (1 - delta)^(1/E), because f^{xE}(a) >= (1 - delta_epoch)^E - a
        (composition of (0, delta) guarantees; see docs/epochs.md).
    coefficient : {"exact", "simplified"}
        See :func:`delta_bound`; ``"simplified"`` reproduces the paper's Table 1.
    validity_at : {"delta_min", "target"}
        Which delta enters condition (2): delta_min(sigma, M) (default, the logically
        weakest requirement) or the target delta (conservative).  The two readings agree
        on Table 1.
    epochs : int, optional
        Number of epochs E >= 1 (default 1).

    Returns
    -------
    float or ndarray
        Integer-valued M_exact, or ``inf`` when no M <= 2**53 qualifies (with
        ``validity_at="target"``: when delta >= 1/2 - Phi(-kappa), condition (2) can never
        hold, e.g. delta = 0.01 and sigma >= 4.6).

    Examples
    --------
    >>> from dpbounds import rounds_required
    >>> rounds_required(1.0, 0.01, coefficient="simplified")   # Table 1 of the paper
    1140369.0
    >>> rounds_required(2.0, 0.01)
    59097.0
    """
    check_choice("coefficient", coefficient, _COEFFICIENT_CHOICES)
    check_choice("validity_at", validity_at, _VALIDITY_AT)
    sa, da, ea = check_args(_SIGMA_DELTA_EPOCHS, sigma=sigma, delta=delta, epochs=epochs)
    da = _ufuncs.per_epoch_delta(da, ea)
    name = f"rounds_required_{coefficient}" + ("_at_target" if validity_at == "target" else "")
    m = getattr(_ufuncs, name)(sa, da)
    if (da == 0.0).any():
        # the per-epoch target underflowed (delta = 5e-324 over 2 epochs): below the smallest
        # double, no M <= 2**53 reaches it -- the documented inf, not NaN
        m = np.where(da == 0.0, np.inf, m)
    return scalar_or_array(m)


@_kernels.scalar_fast_path
def min_dataset_size(sigma: Any, rounds: Any, clip_norm: Any = 1.0, noise_ratio: Any = 0.1) -> Any:
    """Smallest dataset size N for which the per-round noise clip_norm * sigma * M / N of the
    averaged gradient stays at most ``noise_ratio`` (section 5 of the paper, Table 1's
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
    arrs = check_args(_DATASET, sigma=sigma, rounds=rounds, clip_norm=clip_norm, noise_ratio=noise_ratio)
    return scalar_or_array(_ufuncs.min_dataset_size(*arrs))


class LognormalMoments(NamedTuple):
    """Moments of Y = exp(X/sigma - 1/(2 sigma^2)), X ~ N(0, 1) (mean 1)."""

    variance: Any
    mu3: Any
    mu4: Any
    rho3: Any
    skewness: Any
    excess_kurtosis: Any


def lognormal_moments(sigma: Any) -> LognormalMoments:
    """Central moments of the per-round likelihood ratio Y (docs/theorem31.md).

    With w = e^{1/sigma^2}: variance w - 1, mu3 = (w + 2)(w - 1)^2,
    mu4 = (w^4 + 2w^3 + 3w^2 - 3)(w - 1)^2, the exact third absolute central moment
    rho3 = E|Y - 1|^3 (Proposition D.2's closed form, or its odd series in 1/sigma
    where the closed form cancels), skewness (w + 2) sqrt(w - 1) and excess
    kurtosis w^4 + 2w^3 + 3w^2 - 6 (evaluated as a polynomial in w - 1, so no
    cancellation for large sigma).

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.

    Returns
    -------
    LognormalMoments
        Named tuple of floats or arrays.  Values whose true magnitude exceeds the
        double range are ``inf`` (mu4 for sigma < 0.0915, mu3 and rho3 for
        sigma < 0.0685).

    Notes
    -----
    Relative error <= 1e-14 against mpmath for sigma in [0.07, 1e4]
    (tests/special/test_lognormal.py; measured: docs/contract.md).
    """
    s = check_finite_positive("sigma", sigma)
    e = _ufuncs.lognormal_variance(s)
    with np.errstate(over="ignore", invalid="ignore"):
        skew = (e + 3.0) * np.sqrt(e)
        kurt = e * (16.0 + e * (15.0 + e * (6.0 + e)))
    return LognormalMoments(
        scalar_or_array(e),
        scalar_or_array(_ufuncs.lognormal_mu3(s)),
        scalar_or_array(_ufuncs.lognormal_mu4(s)),
        scalar_or_array(_ufuncs.lognormal_rho3(s)),
        scalar_or_array(skew),
        scalar_or_array(kurt),
    )


def delta_bound_terms(sigma: Any, rounds: Any, coefficient: str = "exact") -> tuple[Any, ...]:
    """The six terms T1..T6 of delta_min(sigma, M) (Theorem 3.1).

    T1 = 2 B coef mu (Berry-Esseen, twice), T2 = mu/sqrt(2 pi),
    T3 = [1/(4 sqrt(2 pi)) + (1 + w/(1 - 1/w))/(2 sqrt(2 e pi))] mu^2,
    T4 = mu^3/(4 sqrt(2 e pi)), T5 = mu^4/(32 sqrt(2 e pi)),
    T6 = 4.52/(2.88 sqrt(ln M) - 2.41/sqrt(ln M)) M^{-25/24},  mu = sqrt((w-1)/(M-1)).

    The terms are returned whether or not the theorem applies; use :func:`theorem31`
    to know.  Parameters as :func:`delta_bound`.  Each term has relative error
    <= 1e-14 against mpmath.
    """
    coefficient = check_choice("coefficient", coefficient, _COEFFICIENTS)
    s, m = broadcast(sigma=check_finite_positive("sigma", sigma), rounds=check_rounds("rounds", rounds))
    return tuple(scalar_or_array(t) for t in getattr(_ufuncs, f"delta_terms_{coefficient}")(s, m))


def _reason(code: int) -> str:
    return "; ".join(status_reasons(code))


@dataclass(frozen=True)
class Theorem31Result:
    """Outcome of :func:`theorem31`.

    Attributes
    ----------
    sigma, rounds, delta : float or ndarray
        The inputs (delta is NaN when no target was given).
    delta_min : float or ndarray
        Six-term delta_min(sigma, M) (computed even where invalid, for inspection).
    terms : tuple
        T1..T6.
    status : int or ndarray of int
        0 where the theorem certifies f(a) >= 1 - a - delta_min (or the target
        delta); otherwise a bitmask of the package's status table
        (``dpbounds.ufuncs.STATUS_BITS``): 1 bad input, 2 rounds < 3,
        4 sigma < sqrt(3/ln M), 8 condition (2) fails, 16 target delta < delta_min.
    coefficient, validity_at : str
        The reading used.
    """

    sigma: Any
    rounds: Any
    delta: Any
    delta_min: Any
    terms: tuple[Any, ...]
    status: Any
    coefficient: str
    validity_at: str

    @property
    def valid(self) -> Any:
        """True where Theorem 3.1 applies."""
        v = np.asarray(self.status) == 0
        return bool(v) if v.ndim == 0 else v

    @property
    def certified_delta(self) -> Any:
        """The delta that is certified (target delta or delta_min), NaN where invalid."""
        d = np.where(np.isnan(self.delta), self.delta_min, self.delta)
        return scalar_or_array(np.where(np.asarray(self.status) == 0, d, np.nan))

    @property
    def reason(self) -> str:
        """Human-readable reason the theorem does not apply ('' if valid); arrays: first invalid point."""
        st = np.asarray(self.status)
        if st.ndim == 0:
            return _reason(int(st))
        bad = np.flatnonzero(st)
        if bad.size == 0:
            return ""
        i = np.unravel_index(int(bad[0]), st.shape)
        return f"{bad.size} of {st.size} points invalid; first at index {tuple(int(k) for k in i)}: {_reason(int(st[i]))}"

    def reasons(self) -> NDArray[np.str_]:
        """Reason per point (array of str)."""
        st = np.asarray(self.status)
        out: NDArray[np.str_] = np.vectorize(_reason, otypes=[str])(st)
        return out

    def __bool__(self) -> bool:
        if np.ndim(self.status) != 0:
            raise DPBoundsError("truth value of an array result is ambiguous; use .valid")
        return bool(self.valid)


def theorem31(
    sigma: Any,
    rounds: Any,
    delta: Any = None,
    coefficient: str = "exact",
    validity_at: str = "delta_min",
) -> Theorem31Result:
    """Evaluate Theorem 3.1 for random allocation: delta_min, its six terms and validity.

    One epoch of M rounds with noise multiplier sigma is f-DP with
    f(a) >= 1 - a - delta for every delta >= delta_min(sigma, M), provided
    condition (2)  B coef mu + delta <= 1/2 - Phi(-kappa)  (kappa = (w - 1)/2),
    M >= 3 and sigma >= sqrt(3/ln M) hold (docs/theorem31.md).

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    rounds : int or array_like
        Rounds per epoch M, integer >= 3.
    delta : float or array_like, optional
        Target delta in (0, 1).  If given, the result is valid only where
        delta >= delta_min as well.
    coefficient : {"exact", "simplified"}
        See :func:`dpbounds.delta_bound`; ``"simplified"`` is the theorem as printed.
    validity_at : {"delta_min", "target"}
        Which delta enters condition (2).  ``"target"`` requires ``delta``.

    Returns
    -------
    Theorem31Result

    Examples
    --------
    >>> from dpbounds import theorem31
    >>> r = theorem31(1.0, 1_140_369, delta=0.01, coefficient="simplified")
    >>> r.valid, round(r.delta_min, 5)
    (True, 0.01)
    >>> theorem31(1.0, 300).reason
    'condition (2) fails: B*coef*mu + delta > 1/2 - Phi(-kappa)'
    """
    coefficient = check_choice("coefficient", coefficient, _COEFFICIENTS)
    validity_at = check_choice("validity_at", validity_at, ("delta_min", "target"))
    s = check_finite_positive("sigma", sigma)
    m = check_rounds("rounds", rounds)
    if delta is None:
        if validity_at == "target":
            raise DPBoundsError("validity_at='target' needs a target delta")
        d = np.full((), np.nan)
    else:
        d = check_open_unit("delta", delta)
    s, m, d = broadcast(sigma=s, rounds=m, delta=d)
    terms = getattr(_ufuncs, f"delta_terms_{coefficient}")(s, m)
    dmin = np.asarray(getattr(_ufuncs, f"delta_min_{coefficient}")(s, m))
    status = np.asarray(getattr(_ufuncs, f"theorem31_status_{coefficient}")(
        s, m, d if validity_at == "target" else np.nan))
    if delta is not None and validity_at == "delta_min":
        status = status | np.where(d < dmin, _DELTA_BELOW_MIN, 0)
    return Theorem31Result(
        sigma=scalar_or_array(s),
        rounds=scalar_or_array(m),
        delta=scalar_or_array(d),
        delta_min=scalar_or_array(dmin),
        terms=tuple(scalar_or_array(t) for t in terms),
        status=int(status) if status.ndim == 0 else status,
        coefficient=coefficient,
        validity_at=validity_at,
    )
