"""Theorem 3.1 of the random-allocation paper as a result object, plus the lognormal
moments it is built from.

The paper: "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation:
Tight Upper and Lower Bounds"; the formulas are written out in docs/theorem31.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpbounds import _ufuncs  # type: ignore[attr-defined, unused-ignore]
from dpbounds._errors import STATUS_BITS, DPBoundsError, status_reasons
from dpbounds._kernels import (  # type: ignore[attr-defined, unused-ignore]
    delta_bound,
    min_dataset_size,
    rounds_closed_form,
    rounds_required,
)
from dpbounds._validation import (
    broadcast,
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
    (tests/test_lognormal.py; measured: docs/contract.md).
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
