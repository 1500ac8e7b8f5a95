"""The random-allocation accountant: (eps, delta), Gaussian-DP and trade-off answers for E epochs."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbounds import _validation as V
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._curve import tradeoff_exact
from dpbounds.accountant._gdp import gdp_delta, gdp_epsilon, mu_poisson_limit
from dpbounds.accountant._gdp_certificate import certified_gdp_mu
from dpbounds.accountant._params import check_sigma_rounds
from dpbounds.accountant._pld import RandomAllocationPLD
from dpbounds.accountant._select import law_for, require_converged

__all__ = ["RandomAllocationAccountant"]


class RandomAllocationAccountant:
    """(eps, delta) and trade-off accounting for E epochs of random allocation.

    Parameters
    ----------
    noise_multiplier : float (sigma)
    rounds_per_epoch : int (M)
    epochs : int (E)
    method : {"exact", "closed_form", "gdp_asymptotic"}
        ``"exact"``: certified numerical brackets (this module).  ``"closed_form"``: Theorem 3.1
        delta_min composed over epochs (an upper bound on delta, valid only where the theorem
        applies, else ValueError).  ``"gdp_asymptotic"``: the Theorem 4.2 / Poisson limit
        mu = sqrt(E (e^{1/sigma^2} - 1) / M) -- an asymptotic *approximation*, never a bound.
    tolerance : float
        Relative width target of the exact epsilon bracket.

    ``get_epsilon`` / ``get_delta`` return ``(lower, upper)`` for ``"exact"``, the bound for
    ``"closed_form"`` (as ``(nan, upper)`` -- no lower bound) and the approximation
    ``(value, value)`` for ``"gdp_asymptotic"``; ``bound_kind`` says which.
    """

    METHODS = ("exact", "closed_form", "gdp_asymptotic")

    def __init__(self, noise_multiplier: float, rounds_per_epoch: int, epochs: int = 1,
                 method: str = "exact", tolerance: float = 2e-3):
        self.sigma, self.rounds = check_sigma_rounds(noise_multiplier, rounds_per_epoch,
                                                      "noise_multiplier", "rounds_per_epoch")
        self.epochs = int(V.check_rounds("epochs", epochs, minimum=1))
        self.method = V.check_choice("method", method, self.METHODS)
        self.tolerance = float(V.check_open_unit("tolerance", tolerance))
        self.bound_kind = {"exact": "certified bracket", "closed_form": "upper bound (Theorem 3.1)",
                           "gdp_asymptotic": "asymptotic approximation (not a bound)"}[self.method]
        self._pld: RandomAllocationPLD | None = None

    @property
    def pld(self) -> RandomAllocationPLD:
        if self._pld is None:
            self._pld = RandomAllocationPLD(self.sigma, self.rounds, self.epochs, self.tolerance)
        return self._pld

    def gdp_mu(self) -> float:
        """mu of Gaussian DP.

        ``"gdp_asymptotic"``: sqrt(E (w - 1)/M), the Poisson-limit reading of the asymptotic mu
        (an approximation, not a bound).
        ``"exact"``: the smallest mu such that G_mu <= f_M on the *certified* single-epoch curve
        over a in [1e-10, 1 - 1e-10], composed as mu sqrt(E) (G_mu composes exactly; it is
        symmetric, so f_M^{-1} is covered too).  The single-epoch law gives boxes along the
        curve (points provably under and over it, :meth:`SingleEpochLaw.curve_points`); between
        them f_M lies above the secants through neighbouring boxes extended (convexity), and
        G_mu minus that piecewise-linear envelope is convex on each linear piece, so checking the
        piece ends certifies every a in between.  Below a = 1e-10 (both curves within 1e-10 of
        1) it is not certified.  ``gdp_mu_scan()`` gives the value checked only at the points.
        """
        return self._gdp_mu(certified=True)

    def gdp_mu_scan(self) -> float:
        """As :meth:`gdp_mu` for ``"exact"``, but checked only at the curve's points (not a certificate)."""
        return self._gdp_mu(certified=False)

    def _gdp_mu(self, certified: bool) -> float:
        if self.method == "closed_form":
            raise ValueError("Theorem 3.1 gives no Gaussian-DP statement; use method='exact' "
                             "(certified scan) or 'gdp_asymptotic' (approximation)")
        if self.method == "gdp_asymptotic":
            return mu_poisson_limit(self.sigma, self.rounds, self.epochs)
        law = law_for(self.sigma, self.rounds, "curve")
        require_converged(law)
        a_lo, a_hi, f_lo, f_hi = (np.asarray(v, dtype=float) for v in law.curve_points())
        return certified_gdp_mu(a_lo, a_hi, f_lo, f_hi, certified) * math.sqrt(self.epochs)

    def get_delta(self, epsilon: float) -> tuple[float, float]:
        """Bracket of delta(epsilon) (see the class docstring for what each method returns)."""
        eps = float(V.check_finite_positive("epsilon", epsilon))
        if self.method == "exact":
            return self.pld.delta(eps)
        if self.method == "gdp_asymptotic":
            d = float(gdp_delta(eps, self.gdp_mu()))
            return PrivacyBracket(d, d, quantity="delta", at=eps, tolerance=self.tolerance,
                                  method="Gaussian-DP asymptotic approximation (not a bound)")
        return math.nan, self._closed_form_delta()

    def _closed_form_delta(self) -> float:
        from dpbounds import _ufuncs as U

        d = float(U.delta_bound_exact(self.sigma, self.rounds))
        if not math.isfinite(d):
            raise ValueError(
                f"Theorem 3.1 does not apply at sigma={self.sigma}, rounds={self.rounds} "
                "(condition (2) or M >= 3 / sigma >= sqrt(3/ln M) fails); use method='exact'")
        return float(U.compose_delta(d, float(self.epochs)))

    def get_epsilon(self, delta: float) -> tuple[float, float]:
        """Bracket of epsilon(delta) (see the class docstring for what each method returns)."""
        d = float(V.check_open_unit("delta", delta))
        if self.method == "exact":
            return self.pld.epsilon(d)
        if self.method == "gdp_asymptotic":
            e = float(gdp_epsilon(d, self.gdp_mu()))
            return PrivacyBracket(e, e, quantity="epsilon", at=d, tolerance=self.tolerance,
                                  method="Gaussian-DP asymptotic approximation (not a bound)")
        # Theorem 3.1 gives f >= f_{0, delta_min}: (0, delta)-DP for delta >= composed delta_min
        return (math.nan, 0.0) if self._closed_form_delta() <= d else (math.nan, math.inf)

    def tradeoff(self, a: Any) -> tuple[Any, Any]:
        """Trade-off information at type-I errors ``a``.

        ``epochs == 1``: the exact curve f_M(a) of the dominating pair and its error bound
        (:func:`tradeoff_exact`).  ``epochs > 1``: ``(lower, nan)`` where ``lower`` is a
        certified lower bound on the E-epoch mechanism's symmetrised trade-off curve
        (:meth:`RandomAllocationPLD.tradeoff_lower`); no error bound/upper curve is provided.
        """
        if self.method != "exact":
            raise ValueError("tradeoff(a) is available for method='exact'")
        if self.epochs == 1:
            return tradeoff_exact(a, self.sigma, self.rounds)
        lower = self.pld.tradeoff_lower(a)
        return lower, np.full(np.shape(lower), np.nan) if np.ndim(lower) else math.nan
