"""Which single-epoch law serves (sigma, M): the only place that knows the budgets (private).

The choice is a pure function of (sigma, M, purpose) -- never of what happens to be cached --
so every answer of the accountant is the same whatever was computed before it.

1. the Fourier series (:class:`FourierLaw`) wherever its window holds the tails to 1e-11
   (sigma around 0.8 and up, or large M): the fast path;
2. else the log-domain grid (:class:`LogDomainLaw`) where its estimated build time is within
   budget (5 s for single-epoch questions, 20 s for E > 1 compositions, which have no tilted
   alternative);
3. else, for single-epoch questions, the tilted series (:class:`TiltedFourierLaw`) if it
   converges and reaches x = 0; else the Fourier series with its honest (possibly NaN) error.
   For compositions the Fourier series, whose outside mass is then spread along certified tail
   bounds.

A partial epoch (k of the M steps run) is served by :func:`partial_law_for`: the law that
``law_for`` chooses for k rounds, wrapped in :class:`PartialEpochLaw`.
"""
from __future__ import annotations

import math
from typing import Literal

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds.accountant._cache import cached
from dpbounds.accountant._laws.fourier import FourierLaw
from dpbounds.accountant._laws.interface import SingleEpochLaw
from dpbounds.accountant._laws.logdomain import LogDomainLaw, compose_step, default_step, estimated_seconds
from dpbounds.accountant._laws.partial import PartialEpochLaw
from dpbounds.accountant._laws.tilted import TiltedFourierLaw

__all__ = ["law_for", "tilted_reach", "partial_law_for", "fourier_law", "require_converged", "LOGDOMAIN_BUDGET_S", "LOGDOMAIN_BUDGET_COMPOSE_S"]

Purpose = Literal["curve", "tv", "compose"]

LOGDOMAIN_BUDGET_S = 5.0           # largest estimated log-domain build time for one-epoch questions
LOGDOMAIN_BUDGET_COMPOSE_S = 20.0  # ... and for E > 1 (no tilted lattice exists)
_WINDOW_OK = 1e-11                 # the Fourier window must hold both laws' tails to this
# E > 1 lattices need far less than the single-epoch 1e-13: a log-domain grid up to 4x coarser
# (logdomain.compose_step; 16x cheaper to build, its fine-vs-coarse error estimate stays
# honest) serves them: (0.5, 1000, E = 10) 25 s -> 2 s at 0.08 % width


def _fourier_probe(sigma: float, M: float, tail: float) -> FourierLaw:
    # aborts (cheaply) when the window cannot hold the right tail
    return cached(("fourier-probe", sigma, M, tail),
                  lambda: FourierLaw(sigma, M, tail=tail, abort_above=_WINDOW_OK))


def fourier_law(sigma: float, M: float, tail: float = 1e-13) -> FourierLaw:
    """The Fourier-series law, converged or not (its error bars say which)."""
    def build() -> FourierLaw:
        probe = _fourier_probe(sigma, M, tail)
        return probe if not probe.aborted else FourierLaw(sigma, M, tail=tail)
    return cached(("fourier", sigma, M, tail), build)


def _fourier_if_ok(sigma: float, M: float, tail: float) -> FourierLaw | None:
    probe = _fourier_probe(sigma, M, tail)
    if probe.aborted or probe.truncated or probe.window_error > _WINDOW_OK:
        return None
    return probe


def _logdomain(sigma: float, M: float, budget: float, compose: bool = False) -> LogDomainLaw | None:
    h = (compose_step if compose else default_step)(sigma, int(M))
    if estimated_seconds(sigma, int(M), h) > budget:  # decided before any cache lookup
        return None
    return cached(("log-domain", sigma, int(M), h), lambda: LogDomainLaw(sigma, int(M), h=h))


def _tilted(sigma: float, M: float, reach: float = 1e-10) -> TiltedFourierLaw:
    if reach == 1e-10:
        return cached(("tilted", sigma, M), lambda: TiltedFourierLaw(sigma, M))
    return cached(("tilted", sigma, M, reach), lambda: TiltedFourierLaw(sigma, M, reach_tail=reach))


def tilted_reach(delta: float) -> float:
    """The tail level an epsilon(delta) query of one epoch needs the tilted series to reach:
    the power of ten at or below delta / 10 (at most 1e-10, the curve's own).  The threshold
    where delta(eps) = delta lies where the upper tail is still about delta, well inside."""
    return min(10.0 ** math.floor(math.log10(delta / 10.0)), 1.0) if delta > 1e-9 else 1e-10


def law_for(sigma: float, M: float, purpose: Purpose = "curve", *, reach: float = 1e-10) -> SingleEpochLaw:
    """The law that serves (sigma, M) for ``purpose``.

    ``"curve"``: trade-off curve and single-epoch delta (window tails 1e-13); ``"tv"``: TV / the
    largest gap (tails 1e-16); ``"compose"``: E > 1 lattices (needs ``supports_lattice``).
    ``reach``: where the tilted series (small sigma, large M) must reach, as an upper-tail level
    (default 1e-10, the curve's; an epsilon(delta) query needs only :func:`tilted_reach`).
    """
    # public: the parameters are checked here (the accountants pass checked floats, unchanged)
    sigma = V.check_scalar("sigma", sigma, V.Constraint.FINITE_POSITIVE)
    M = V.check_scalar("M", M, V.Constraint.INTEGER_GE_2)
    V.check_choice("purpose", purpose, ("curve", "tv", "compose"))
    tail = 1e-16 if purpose == "tv" else 1e-13
    law: SingleEpochLaw | None = _fourier_if_ok(sigma, M, tail)
    if law is not None:
        return law
    if purpose == "compose":
        law = _logdomain(sigma, M, LOGDOMAIN_BUDGET_COMPOSE_S, compose=True)
        return law if law is not None else fourier_law(sigma, M, tail)
    law = _logdomain(sigma, M, LOGDOMAIN_BUDGET_S)
    if law is not None:
        return law
    tilted = _tilted(sigma, M, max(float(reach), 1e-10))
    if tilted.converged:
        return tilted
    return fourier_law(sigma, M, tail)


def partial_law_for(sigma: float, M: float, k: float, purpose: Purpose = "curve") -> PartialEpochLaw:
    """The law of a partial epoch: k of the M steps of an epoch run (1 <= k <= M).

    Built from ``law_for(sigma, k, purpose)`` for k >= 2; k = M gives the full epoch (the same
    answers as ``law_for(sigma, M, purpose)``, bit for bit).  k = 1 (one lognormal, outside
    ``law_for``'s domain M >= 2) is served by the log-domain grid, which needs no convolution
    there: the Fourier series of a single lognormal misses its own error bar (1.5e-10 off the
    exact Gaussian CDF at sigma = 2, against a 6e-13 truncation estimate).
    """
    kf, Mf = float(k), float(M)
    if not (math.isfinite(Mf) and Mf >= 1 and Mf == math.floor(Mf)):
        raise DPBoundsError(f"M must be an integer >= 1, got {M!r}")
    if not (math.isfinite(kf) and 1 <= kf <= Mf and kf == math.floor(kf)):
        raise DPBoundsError(f"k must be an integer in [1, M] = [1, {Mf:g}], got {k!r}")
    def build() -> PartialEpochLaw:
        if kf >= 2:
            return PartialEpochLaw(law_for(sigma, kf, purpose), Mf)
        return PartialEpochLaw(cached(("log-domain", sigma, 1), lambda: LogDomainLaw(sigma, 1)), Mf)
    return cached(("partial", sigma, Mf, kf, purpose), build)


def require_converged(law: SingleEpochLaw) -> None:
    """ValueError, saying what would work, where the chosen law did not converge."""
    if not law.converged:
        raise DPBoundsError(
            f"the exact computation does not converge within its Fourier budget at sigma={law.sigma}, "
            f"rounds={law.M:g} (the characteristic function of a sum of so few lognormals decays too "
            "slowly); use a larger rounds value or method='closed_form'")
