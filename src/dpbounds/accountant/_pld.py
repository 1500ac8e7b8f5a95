"""Privacy-loss distribution of E epochs of random allocation, with certified brackets (private)."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError, PrecisionWarning
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._cache import cached
from dpbounds.accountant._envelope import evaluate, refine
from dpbounds.accountant._gdp import gdp_epsilon, mu_random_allocation
from dpbounds.accountant._invert import invert
from dpbounds.accountant._lattice import Composition, WindowTooLarge, compose_pieces, delta_bracket
from dpbounds.accountant._law import SingleEpochLaw
from dpbounds.accountant._params import check_max_lattice, check_sigma_rounds
from dpbounds.accountant._select import law_for, require_converged

__all__ = ["RandomAllocationPLD"]

_SPACING_FLOOR = 1e-7   # finest loss lattice tried (below it round-off, not rounding, dominates)
_TAU = 1e-14            # composed mass left outside the window, each side
_CELL_RATIO = 0.25      # default single-epoch cell loss span / lattice spacing
_SPAN_DIV = 2.5         # cell loss span = tolerance * eps / (_SPAN_DIV * E)
_DL_K = 1.0             # lattice spacing = sqrt(tolerance * eps * s / (_DL_K * E)), s the loss scale


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
        Largest composition window in lattice points (default 2**21, 16 MiB per array; peak
        RSS stays under 200 MB at M = E = 1e4, where the bracket is then ~3 % wide and says so;
        2**22 gives 2.4 % at ~340 MB).  Where ``tolerance`` would need a larger window,
        the lattice is coarsened instead: the bracket stays certified but is wider.  At most
        2**26 (~3 GiB peak): a larger value raises DPBoundsError naming ``max_lattice``
        before anything is allocated.

    Notes
    -----
    Both directions (remove: log(S/M) under H1; add: -log(S/M) under H0) are computed and the
    larger delta is reported.  ``epochs > 1``: the single-epoch law is put on loss cells, each
    cell's loss is rounded up (upper bound) and down (lower bound) onto a lattice of spacing
    Delta, and the E-fold convolution is one FFT power on a window around E times the mean loss
    whose outside mass is bounded by a Chernoff bound of the lattice law (added to the upper
    bound, subtracted from the lower one).  See the accountant chapter of the documentation
    (``docs/``) for what is certified and what is estimated.
    """

    def __init__(self, sigma: float, rounds: float, epochs: int = 1, tolerance: float = 2e-3,
                 max_lattice: int = 2 ** 21):
        self.sigma, self.rounds = check_sigma_rounds(sigma, rounds)
        self.epochs = V.check_count("epochs", epochs, minimum=1)
        self.tolerance = V.check_scalar("tolerance", tolerance, V.Constraint.OPEN_UNIT)
        self.max_lattice = check_max_lattice(max_lattice)
        self.lattice_spacing = math.nan  # loss-lattice spacing of the last E > 1 query
        self._last_span: float | None = None  # and its cells' loss span
        self._law: SingleEpochLaw = law_for(self.sigma, self.rounds,
                                            "curve" if self.epochs == 1 else "compose")
        require_converged(self._law)

    # ---- E = 1: the law's own bracket -----------------------------------------
    def _delta1(self, eps: float) -> tuple[float, float]:
        return self._law.delta(eps)

    # ---- E > 1: lattice PLD -----------------------------------------------------
    def _composed(self, delta_l: float, cell_span: float | None = None) -> tuple[Composition, float, int]:
        """(composition per direction, spacing used, points a tighter lattice needed or 0)."""
        law = self._law
        span = _CELL_RATIO * delta_l if cell_span is None else float(cell_span)
        key = ("composition", law.key, self.epochs, delta_l, span, self.max_lattice)

        def build() -> tuple[Composition, float, int]:
            dl, needed = delta_l, 0
            while True:
                try:
                    return self._build_lattice(dl, span), dl, needed
                except WindowTooLarge as exc:
                    # memory cap: a coarser lattice (certified still, just a wider bracket)
                    needed = max(needed, exc.needed)
                    dl *= 1.05 * exc.needed / self.max_lattice
        return cached(key, build)

    def _build_lattice(self, delta_l: float, cell_span: float) -> Composition:
        pieces = [(self._law.lattice_pmfs(delta_l, cell_span), self.epochs)]
        return compose_pieces(pieces, delta_l, _TAU, self.max_lattice)

    def _deltaE(self, eps: float, delta_l: float, cell_span: float | None = None) -> tuple[float, float]:
        comp, used, _ = self._composed(delta_l, cell_span)
        self.lattice_spacing = used
        self._last_span = cell_span
        return delta_bracket(comp, eps)

    def _spacings(self, eps_guess: float, shrink: float = 1.0) -> tuple[float, float]:
        """(lattice spacing, cell loss span) for a bracket of relative width ~ tolerance at ``eps_guess``.

        Connect-the-dots placement makes the bracket's width first order in the cells' loss
        spans (about E spans in all) and second order in the lattice spacing: measured
        ~ E Delta^2 / (s eps) relative, s ~ mu / sqrt(E) the single-epoch loss's scale (M = 100
        and 1e4, E = 100 and 1e4); each gets about half the tolerance.  ``shrink`` < 1 tightens
        both (spans linearly, the spacing as its square root)."""
        e = max(eps_guess, 1e-3)
        E = self.epochs
        span = shrink * self.tolerance * e / (_SPAN_DIV * E)
        s = max(self._mu_guess() / math.sqrt(E), 1e-6)
        dl = math.sqrt(shrink * self.tolerance * e * s / (_DL_K * E))
        dl = max(dl, span, _SPACING_FLOOR)
        return dl, span

    def _delta_l_for(self, eps_guess: float) -> float:
        return self._spacings(eps_guess)[0]

    def _mu_guess(self) -> float:
        return float(mu_random_allocation(self.sigma, self.rounds, self.epochs))

    def _method(self, spacing: float | None = None) -> str:
        m = f"exact ({self._law.method}"
        if self.epochs > 1:
            m += f"; loss lattice of spacing {spacing:.3g} composed over {self.epochs} epochs by FFT"
        return m + ")"

    def _certified(self) -> str:
        c = self._law.certified
        if self.epochs > 1:
            c += "; lattice rounding (up for the upper end, down for the lower end) and the composition window's tails"
        return c

    def _estimated(self) -> str:
        e = self._law.estimated
        if self.epochs > 1:
            e += "; FFT round-off of the composition"
        return e

    def _memory_note(self, needed: int) -> str:
        mb = needed * 8 * 6 / 2 ** 20  # ~6 float64 arrays of the window are alive at the peak
        return (f"meeting the tolerance needs a loss lattice of about {needed:,} points "
                f"(~{mb:,.0f} MB peak), above max_lattice={self.max_lattice:,}; "
                "pass a larger max_lattice to tighten it")

    # ---- public -----------------------------------------------------------
    def delta(self, epsilon: float) -> PrivacyBracket:
        """Certified bracket [lower, upper] of delta(epsilon) for the E-epoch mechanism."""
        eps = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_NONNEGATIVE) + 0.0  # -0.0 -> 0.0
        if self.epochs == 1:
            lo, hi = self._delta1(eps)
            return PrivacyBracket(lo, hi, quantity="delta", at=eps, tolerance=self.tolerance,
                                  method=self._method(), certified=self._certified(),
                                  estimated=self._estimated(), warn=False)
        # lattice spacing from the larger of eps and the GDP scale mu (relative width ~ tolerance)
        dl, span = self._spacings(max(eps, self._mu_guess()))
        lo, hi = self._deltaE(eps, dl, span)
        _, used, needed = self._composed(dl, span)
        return PrivacyBracket(lo, hi, quantity="delta", at=eps, tolerance=self.tolerance,
                              method=self._method(used), certified=self._certified(),
                              estimated=self._estimated(),
                              note=self._memory_note(needed) if needed else "", warn=False)

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
            dl, span = self._spacings(float(gdp_epsilon(1e-4, self._mu_guess())))

            def fn(e: float) -> tuple[float, float]:
                return self._deltaE(e, dl, span)

        # eps range: up to where the certified delta is negligible
        e_max = 1.0
        while fn(e_max)[1] > 1e-12 and e_max < 200:
            e_max *= 2
        if n_eps is not None:
            eps = np.linspace(0.0, e_max, n_eps)
            return eps, np.array([fn(float(e))[1] for e in eps])
        eps, d_up, gap = refine(lambda e: fn(e)[1], e_max, tol)
        if gap > tol:
            warnings.warn(f"the trade-off lower bound is within {gap:.3g} of the envelope of its "
                          f"supporting lines, not tol={tol:g} ({eps.size} eps points)",
                          PrecisionWarning, stacklevel=3)
        return eps, d_up

    def epsilon(self, delta: float) -> PrivacyBracket:
        """Certified bracket [lower, upper] of epsilon(delta).

        Raises ValueError where no finite epsilon can be certified (delta below the numerical
        error of the delta bracket, or epsilon beyond 1e4); issues a
        :class:`dpbounds.PrecisionWarning` where the bracket misses ``tolerance``.
        """
        d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
        note = ""
        if self.epochs == 1:
            lo, hi = invert(self._delta1, d, self._law.eps_start(d))
            spacing = None
        else:
            # a first guess of epsilon from the GDP asymptotics sets the lattice spacing; refine
            # from the bracket found until it meets the tolerance or the memory cap / floor
            dl, span = self._spacings(float(gdp_epsilon(d, self._mu_guess())))
            lo, hi = 0.0, math.inf
            prev_width = math.inf
            for _ in range(8):
                lo2, hi2 = invert(lambda e: self._deltaE(e, dl, span), d)
                lo, hi = max(lo, lo2), min(hi, hi2)  # both brackets are certified
                _, used, needed = self._composed(dl, span)
                spacing = used
                if not math.isfinite(hi) or hi - lo <= self.tolerance * hi:
                    break
                if hi - lo > 0.9 * prev_width:
                    # a finer lattice no longer narrows it: the single-epoch law's cells or its
                    # certified error terms (e.g. tail bounds at small sigma) set the width
                    note = ("a finer loss lattice no longer narrows the bracket: the width comes from "
                            f"the single-epoch law ({self._law.method}: its cells or certified error terms)")
                    break
                prev_width = hi - lo
                if needed:
                    note = self._memory_note(needed)
                    break
                if used <= _SPACING_FLOOR and span <= _SPACING_FLOOR:
                    note = f"the loss lattice reached its finest spacing ({_SPACING_FLOOR:g})"
                    break
                # the bracket found is a far better guess of epsilon than the asymptotics: size
                # the next lattice from it and from the width it missed by
                g = min(0.8 * self.tolerance * hi / (hi - lo), 0.9)
                span *= g
                dl = max(dl * math.sqrt(g), span, _SPACING_FLOOR)
        if not math.isfinite(hi):
            self._raise_unbounded(d)
        return PrivacyBracket(lo, hi, quantity="epsilon", at=d, tolerance=self.tolerance,
                              method=self._method(spacing), certified=self._certified(),
                              estimated=self._estimated(), note=note)

    def _raise_unbounded(self, d: float) -> None:
        floor = (self._delta1(1e4)[1] if self.epochs == 1 else self._deltaE(1e4, self.lattice_spacing, self._last_span)[1])
        if floor >= d:
            raise DPBoundsError(
                f"no finite epsilon can be certified at delta={d:g}: the certified delta bracket "
                f"cannot go below {floor:.3g} here (numerical error of the law and the lattice); "
                f"ask for delta >= {10 * floor:.1g}, or fewer epochs")
        raise DPBoundsError(
            f"no finite epsilon can be certified at delta={d:g} for sigma={self.sigma:g}, "
            f"rounds={self.rounds:g}, epochs={self.epochs}: epsilon exceeds 1e4 (the loss lattice "
            "cannot resolve it within max_lattice); use method='gdp_asymptotic' for an approximation")
