"""RDP -> (eps, delta) conversion objectives rounded towards the safe side.

A privacy bound that rounds to nearest can come out below the bound it stands for: at the
order 9e15 the conversion term log(1/delta)/(alpha - 1) ~ 8e-14 is below half an ulp of an
RDP value of 9e5, so ``rdp + term`` rounds to ``rdp`` and the (eps, delta) pair it reports does
not hold.  Every objective here is evaluated together with a rigorous bound on its rounding
error, and the result is raised past that bound with exact floating-point steps (the compiled
kernels of csrc/dpb_rdp_outward.h, numpy ufuncs that broadcast over their arguments):

* the sums whose rounding decides the result (``rdp + c``, ``rdp - eps``, ``(rdp - eps) +
  log(1 - 1/alpha)``) are error-free transformations (TwoSum), so their error is known
  exactly, not bounded;
* every other operation contributes its textbook bound: ``u = 2^-53`` per correctly rounded
  operation, :data:`_F` per elementary function of the C library (``log``, ``log1p``,
  ``expm1``, ``exp``; 2 ulp, measured on this build by tests/rdp/test_rdp_outward.py), a few
  subnormal ulps absolute per subnormal result, first-order bounds widened by 1 %;
* the final value is the smallest double above (computed value + error bound), exactly.

Guarantee (tests/rdp/test_rdp_outward.py, mpmath at 50 digits): the epsilon objective is never
below the exact real-arithmetic value and at most 8 ulp of its largest term above it; the
log-delta objective likewise (it ranks the orders), and :func:`delta_at` gives the delta of the
chosen order, never below the exact one (0 only where that is 0), its log at most 8 ulp of its
largest term above.  The branch decisions are made only when certain: the improved
conversion's total-variation shortcut (eps = 0 when delta^2 >= 1 - e^{-rdp}) is taken only
where the inequality holds with margin, so at its threshold the conversion formula (an upper
bound of the exact value there) answers instead.

The formulas and edge cases are those of the raw kernels ``rdp_eps_objective_*`` and
``rdp_logdelta_objective_*`` (csrc/dpb_rdp_convert.h), which round to nearest.  Arguments
outside the domain (alpha < 1, rdp < 0, delta outside (0, 1), eps < 0) give NaN.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbounds import _ufuncs  # type: ignore[attr-defined, unused-ignore]

Array = NDArray[np.float64]

#: unit roundoff of binary64
_U = 2.0 ** -53
#: relative error bound assumed of the C library's log, log1p, expm1 and exp (and numpy's): 2 ulp
#: (an ulp is at most 2u relative); tests/rdp/test_rdp_outward.py measures both against mpmath and
#: fails on a build that exceeds it.  The compiled kernels use the same constant (OUT_F).
_F = 4.0 * _U

_EPS = {"classic": _ufuncs._rdp_eps_up_classic, "improved": _ufuncs._rdp_eps_up_improved}
_LOGDELTA = {"classic": _ufuncs._rdp_logdelta_up_classic, "improved": _ufuncs._rdp_logdelta_up_improved}
_DELTA = {"classic": _ufuncs._rdp_delta_up_classic, "improved": _ufuncs._rdp_delta_up_improved}


def eps_objective(alpha: ArrayLike, rdp: ArrayLike, delta: ArrayLike, conversion: str) -> Array:
    """The epsilon of one order (``rdp_eps_objective_<conversion>``), never below its exact value.

    At most (1 ulp of the result + twice the error bound of the terms added to ``rdp``) above
    the exact value: a few ulp of the largest term, see tests/rdp/test_rdp_outward.py.
    """
    return np.asarray(_EPS[conversion](alpha, rdp, delta), dtype=np.float64)


def logdelta_objective(alpha: ArrayLike, rdp: ArrayLike, eps: ArrayLike, conversion: str) -> Array:
    """log delta of one order (``rdp_logdelta_objective_<conversion>``), never below its exact value.

    At most (1 ulp + twice the error bound) above: a few ulp of the largest term of
    ``(alpha - 1)(rdp - eps + log(1 - 1/alpha)) - log(alpha)`` (or of the total-variation
    bound's log where that decides).
    """
    return np.asarray(_LOGDELTA[conversion](alpha, rdp, eps), dtype=np.float64)


def delta_at(alpha: ArrayLike, rdp: ArrayLike, eps: ArrayLike, conversion: str) -> Array:
    """delta (not its log) of one order, never below its exact value, 0 only where that is 0.

    The conversion's part through :func:`exp_up`; the improved conversion's total-variation
    bound sqrt(1 - e^{-rdp}) directly (a few ulp), not through its logarithm.
    """
    return np.asarray(_DELTA[conversion](alpha, rdp, eps), dtype=np.float64)


def exp_up(x: ArrayLike) -> Array:
    """exp(x) rounded so that it is never below the exact exponential (0 only for x = -inf), capped at 1 for x <= 0."""
    return np.asarray(_ufuncs._rdp_exp_up(x), dtype=np.float64)
