"""Privacy-loss distribution of E epochs of random allocation, with certified brackets (private)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError, PrecisionWarning, warn
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._envelope import evaluate, refine
from dpbounds.accountant._gdp import gdp_epsilon, gdp_mu_random_allocation
from dpbounds.accountant._history import (
    Pieces,
    Run,
    build_bracket,
    check_computable,
    history_delta,
    history_delta_function,
    history_epsilon,
)
from dpbounds.accountant._invert import invert
from dpbounds.accountant._lattice import Composition, delta_bracket
from dpbounds.accountant._law import SingleEpochLaw
from dpbounds.accountant._params import check_max_lattice, check_sigma_rounds
from dpbounds.accountant._select import law_for, require_converged, tilted_reach

__all__ = ["RandomAllocationPLD"]


class RandomAllocationPLD:
    """Privacy-loss distribution of E epochs of random allocation, with certified brackets.

    Parameters
    ----------
    sigma : float in [0.3, 20]
    rounds : int in [2, 1e9]  (M, rounds per epoch)
    epochs : int >= 1
    tolerance : float
        Target relative width of the epsilon bracket (default 2e-3).  For ``epochs == 1``
        no loss lattice is needed and the bracket width is set by the ~1e-13 numerical error
        instead.  For ``epochs > 1`` the lattice is refined until the bracket meets it or the
        memory cap is reached; a bracket that misses it says so (``tolerance_met``, ``note``)
        and issues a :class:`dpbounds.PrecisionWarning` naming the memory a tighter one needs.
    max_lattice : int
        Largest composition window in lattice points (default 2**21, 16 MiB per array; M = E =
        1e4 meets the default tolerance well inside it).  Where ``tolerance`` would need a
        larger window, the lattice is coarsened instead: the bracket stays certified but is
        wider.  At most 2**26 (~3 GiB peak): a larger value raises DPBoundsError naming
        ``max_lattice`` before anything is allocated.

    Notes
    -----
    Both directions (remove: log(S/M) under H1; add: -log(S/M) under H0) are computed and the
    larger delta is reported.  ``epochs > 1``: the H0 and H1 masses of every interval of a loss
    lattice of spacing Delta are placed exactly (connect-the-dots split for the upper bound,
    balanced merging for the lower one), and the E-fold convolution is one FFT power on a
    window around E times the mean loss whose outside mass is bounded by a Chernoff bound of
    the lattice law (added to the upper bound, subtracted from the lower one).  See the
    accountant chapter of the documentation (``docs/``) for what is certified and what is
    estimated.
    """

    def __init__(self, sigma: float, rounds: float, epochs: int = 1, tolerance: float = 2e-3,
                 max_lattice: int = 2 ** 21):
        self.sigma, self.rounds = check_sigma_rounds(sigma, rounds)
        self.epochs = V.check_count("epochs", epochs, minimum=1)
        self.tolerance = V.check_scalar("tolerance", tolerance, V.Constraint.OPEN_UNIT)
        self.max_lattice = check_max_lattice(max_lattice)
        self.lattice_spacing = math.nan  # loss-lattice spacing of the last E > 1 query
        self._runs: tuple[Run, ...] = ((self.sigma, self.rounds, self.epochs, 0),)
        if self.epochs > 1:
            check_computable(self._runs, 0.5)  # hopeless lengths refused before any law is built
        self._law_obj: SingleEpochLaw | None = None
        self._law_forced = False
        if self.epochs > 1:
            require_converged(self._law)
        # (E = 1: the law is built by the first query; an epsilon query builds the one it needs)

    @property
    def _law(self) -> SingleEpochLaw:
        """The single-epoch law (curve law for E = 1, lattice law for E > 1), built on first use."""
        if self._law_obj is None:
            self._law_obj = law_for(self.sigma, self.rounds, "curve" if self.epochs == 1 else "compose")
            require_converged(self._law_obj)
        return self._law_obj

    @_law.setter
    def _law(self, law: SingleEpochLaw) -> None:
        self._law_obj = law
        self._law_forced = True

    # ---- E = 1: the law's own bracket -----------------------------------------
    def _delta1(self, eps: float) -> tuple[float, float]:
        return self._law.delta(eps)

    # ---- E > 1: lattice PLD (the history engine, :mod:`dpbounds.accountant._history`) --------
    def _composed(self, delta_l: float, cell_span: float | None = None) -> tuple[Composition, float, int]:
        """(composition per direction, spacing used, points a tighter lattice needed or 0) of the
        E epochs on the lattice of spacing ``delta_l`` (coarsened only where a window exceeds the
        memory cap); ``cell_span`` is accepted for compatibility (the laws place exact interval
        masses)."""
        pieces = self._pieces() if self.epochs > 1 else ((law_for(self.sigma, self.rounds, "compose"), 1),)
        require_converged(pieces[0][0])
        fn, used, needed = build_bracket(pieces, pieces, float(delta_l), self.max_lattice, lattice=True)
        return fn.composition(), used, needed

    def _pieces(self) -> Pieces:
        """The E epochs as one piece of the history engine (the law this object holds)."""
        return ((self._law, self.epochs),)

    def _deltaE(self, eps: float, delta_l: float, cell_span: float | None = None) -> tuple[float, float]:
        comp, used, _ = self._composed(delta_l, cell_span)
        self.lattice_spacing = used
        return delta_bracket(comp, eps)

    # ---- public -----------------------------------------------------------
    def delta(self, epsilon: float) -> PrivacyBracket:
        """Certified bracket [lower, upper] of delta(epsilon) for the E-epoch mechanism."""
        eps = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_NONNEGATIVE) + 0.0  # -0.0 -> 0.0
        if self.epochs == 1:
            lo, hi = self._delta1(eps)
            return PrivacyBracket(lo, hi, quantity="delta", at=eps, tolerance=self.tolerance,
                                  method=f"exact ({self._law.method})", certified=self._law.certified,
                                  estimated=self._law.estimated, warn=False)
        res, used = history_delta(self._runs, eps, self.tolerance, self.max_lattice, self._pieces())
        self.lattice_spacing = used
        return res

    def tradeoff_lower(self, a: Any, n_eps: int | None = None, *, tol: float = 1e-4) -> Any:
        """Certified lower bound on the E-epoch mechanism's trade-off curve (symmetrised, both directions).

        Uses the (eps, delta) duality f(a) >= sup_eps max{0, 1 - delta(eps) - e^eps a,
        e^{-eps} (1 - delta(eps) - a)} with the certified *upper* delta(eps) on a grid of eps:
        the maximum over any grid is a certified lower bound (a convex polygon below the curve);
        the grid decides only how tight it is.

        Parameters
        ----------
        a : array_like in [0, 1]
        n_eps : int, optional
            A uniform grid of ``n_eps`` >= 2 points (the behaviour before the grid was refined
            adaptively).  Default: adaptive, see ``tol``.
        tol : float in (0, 1)
            Default grid: eps intervals are bisected until, at every a in [0, 1], the bound is
            within ``tol`` (absolute) of the envelope of the supporting lines of *all* eps >= 0
            (bounded per interval from the end values, delta being non-increasing in eps).  The
            grid does not depend on ``a``, so each value is a function of its own a only.
            Where 2**14 points do not reach ``tol`` a :class:`dpbounds.PrecisionWarning` gives
            the gap reached.  The envelope itself sits below the true curve by what the
            delta(eps) bracket's width (``tolerance``) allows.
        """
        av = V.check_closed_unit("a", a)
        if n_eps is not None:
            n_eps = V.check_count("n_eps", n_eps, minimum=2)
        tol = V.check_scalar("tol", tol, V.Constraint.OPEN_UNIT)
        eps, d_up = self._supporting_grid(n_eps, tol)
        f = evaluate(np.atleast_1d(av).ravel(), eps, d_up)
        return V.scalar_or_array(f.reshape(np.shape(av)))

    def _supporting_grid(self, n_eps: int | None, tol: float) -> tuple[np.ndarray, np.ndarray]:
        """(eps grid, certified upper delta on it) for :meth:`tradeoff_lower`."""
        fn: Callable[[float], tuple[float, float]]
        if self.epochs == 1:
            fn = self._delta1
        else:
            fn = history_delta_function(self._runs, float(gdp_epsilon(1e-4, self._mu_guess())),
                                        self.tolerance, self.max_lattice, self._pieces())

        # eps range: up to where the certified delta is negligible
        e_max = 1.0
        while fn(e_max)[1] > 1e-12 and e_max < 200:
            e_max *= 2
        if n_eps is not None:
            eps = np.linspace(0.0, e_max, n_eps)
            return eps, np.array([fn(float(e))[1] for e in eps])
        eps, d_up, gap = refine(lambda e: fn(e)[1], e_max, tol)
        if gap > tol:
            warn(f"the trade-off lower bound is within {gap:.3g} of the envelope of its "
                 f"supporting lines, not tol={tol:g} ({eps.size} eps points)", PrecisionWarning)
        return eps, d_up

    def _mu_guess(self) -> float:
        return float(gdp_mu_random_allocation(self.sigma, self.rounds, self.epochs))

    def epsilon(self, delta: float) -> PrivacyBracket:
        """Certified bracket [lower, upper] of epsilon(delta).

        Raises ValueError where no finite epsilon can be certified (delta below the numerical
        error of the delta bracket, or epsilon beyond 1e4); issues a
        :class:`dpbounds.PrecisionWarning` where the bracket misses ``tolerance``.
        """
        d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
        if self.epochs > 1:
            res, used = history_epsilon(self._runs, d, self.tolerance, self.max_lattice, self._pieces())
            self.lattice_spacing = used
            return res
        # (the tilted series, small sigma with large M, needs to reach only where the tail is
        # ~delta / 10: a far cheaper law than the curve's, at the same bracket width)
        law = self._law if self._law_forced else law_for(self.sigma, self.rounds, "curve", reach=tilted_reach(d))
        require_converged(law)
        lo, hi = invert(law.delta, d, law.eps_start(d))
        if not math.isfinite(hi):
            self._raise_unbounded(d)
        return PrivacyBracket(lo, hi, quantity="epsilon", at=d, tolerance=self.tolerance,
                              method=f"exact ({law.method})", certified=law.certified,
                              estimated=law.estimated)

    def _raise_unbounded(self, d: float) -> None:
        low, floor = self._delta1(1e4)
        if low >= d:
            raise DPBoundsError(
                f"no finite epsilon can be certified at delta={d:g}: epsilon exceeds 1e4 (certified "
                f"delta(1e4) >= {low:.3g}; sigma={self.sigma:g} gives almost no privacy over "
                f"{self.epochs} epochs of {self.rounds:g} rounds)")
        if floor >= d:
            raise DPBoundsError(
                f"no finite epsilon can be certified at delta={d:g}: the certified delta bracket "
                f"cannot go below {floor:.3g} here (numerical error of the law); "
                + (f"ask for delta >= {10 * floor:.1g}" if 10 * floor < 1 else
                   "no delta below 1 can be certified at these parameters: use more noise"))
        raise DPBoundsError(
            f"no finite epsilon can be certified at delta={d:g} for sigma={self.sigma:g}, "
            f"rounds={self.rounds:g}, epochs={self.epochs}: epsilon exceeds 1e4; use "
            "method='gdp_asymptotic' for an approximation")
