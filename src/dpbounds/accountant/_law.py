"""The single-epoch law interface of the random-allocation accountant (private).

One epoch of random allocation with noise multiplier sigma and M rounds is dominated by the pair
H0: x ~ N(0, I_M) vs H1: x ~ (1/M) sum_j N(e_j/sigma, I_M); its likelihood ratio is S/M with S
a sum of M i.i.d. lognormals (H1 is the size-biased law).  A *law* represents S under both
hypotheses well enough to answer every question the accountant asks of one epoch:

* :meth:`SingleEpochLaw.tradeoff` -- the trade-off curve f(a) with an error bound;
* :meth:`SingleEpochLaw.delta` -- a bracket of delta(eps), both neighbouring directions;
* :meth:`SingleEpochLaw.tv` -- TV(P0, P1) (delta at eps = 0) with its error;
* :meth:`SingleEpochLaw.curve_points` -- boxes along the curve (for Gaussian-DP certificates);
* :meth:`SingleEpochLaw.lattice_pmfs` -- loss-lattice masses for E-epoch composition;
* :meth:`SingleEpochLaw.diluted_directions`, :meth:`SingleEpochLaw.diluted_lattice_pmfs` -- the
  same for the pair diluted by a partial epoch (see :mod:`dpbounds.accountant._law_partial`),
  by default from :meth:`SingleEpochLaw.cdf_brackets`.

Three implementations (Fourier series, tilted Fourier series, log-domain grid) serve different
(sigma, M); :mod:`dpbounds.accountant._select` is the only place that chooses between them.
"""
from __future__ import annotations

import abc
import math

import numpy as np
from numpy.typing import NDArray

FArr = NDArray[np.float64]

# direction -> (jmin, p_up, inf_up, jmin_dn, p_dn, miss_dn): lattice PMF rounded up (mass at
# +inf loss: inf_up) and rounded down (mass not represented: miss_dn, subtracted from lower bounds)
LatticePMFs = dict[str, tuple[int, FArr, float, int, FArr, float]]

__all__ = ["SingleEpochLaw", "LatticePMFs", "FArr", "RND"]

#: relative round-off of one combination of two terms (added to both ends of a bracket)
RND = 4.0 * 2.220446049250313e-16


class SingleEpochLaw(abc.ABC):
    """Law of the lognormal sum S_M under H0 and H1 for one (sigma, M)."""

    sigma: float
    M: float
    #: short name of the representation (reported in results)
    method: str = ""
    #: what the error bars of this law prove, and what they only estimate
    certified: str = ""
    estimated: str = ""

    @property
    @abc.abstractmethod
    def converged(self) -> bool:
        """False where the representation could not be built to its accuracy (no answers then)."""

    @abc.abstractmethod
    def tradeoff(self, a: FArr) -> tuple[FArr, FArr]:
        """f_M(a) and a bound on its error, for a flat array ``a`` in [0, 1]."""

    @abc.abstractmethod
    def delta(self, eps: float) -> tuple[float, float]:
        """[lower, upper] of delta(eps) of one epoch (the larger of the two directions), eps >= 0."""

    @abc.abstractmethod
    def tv(self) -> tuple[float, float]:
        """TV(P0, P1) = delta(0) and its error bound."""

    @abc.abstractmethod
    def curve_points(self) -> tuple[FArr, FArr, FArr, FArr]:
        """Boxes ``(a_lo, a_hi, f_lo, f_hi)`` along the curve: for each i, ``f(a_lo[i]) >= f_lo[i]``
        and ``f(a_hi[i]) <= f_hi[i]`` (points under and over the true curve), a increasing."""

    def eps_start(self, d: float) -> tuple[float, float] | None:
        """Where the search for delta(eps) = d may start: (an approximate root, the slope there of
        sqrt(-2 log delta) in eps), or None.  Only proposes points to
        :func:`dpbounds.accountant._invert.invert` (its ends are checked with :meth:`delta`)."""
        return None

    supports_lattice: bool = True

    @property
    def key(self) -> tuple[object, ...]:
        """What determines this law's numbers (cache keys of results built from it)."""
        return (type(self).__name__, self.sigma, self.M)

    def lattice_pmfs(self, delta_l: float, cell_span: float | None = None) -> LatticePMFs:
        """Lattice PMFs of both directions' single-epoch loss at spacing ``delta_l``, from cells
        of loss span about ``cell_span`` (the law's default if None)."""
        raise NotImplementedError(f"the {self.method} law does not provide loss lattices")

    def x_range(self) -> tuple[float, float]:
        """(lowest, highest) x = S - M its lattice PMFs place mass from (the window, or the grid)."""
        raise NotImplementedError(f"the {self.method} law does not provide loss lattices")

    #: loss beyond the top of :meth:`x_range` where mass above the window may be placed (along a
    #: certified survival bound: up to 40 in steps of 0.05, see ``_tails.spread_along_bound``)
    spread_extra: float = 0.0

    def loss_range(self, M_outer: float | None = None) -> tuple[float, float]:
        """(lo, hi) with hi - lo at least the loss span of the lattice PMFs of either direction:
        the loss log1p(x / M_outer) over :meth:`x_range` (M_outer = M: a full epoch), below
        floored at -31 (lattice placement merges everything below -30), plus
        :attr:`spread_extra`.  The history engine refuses a spacing whose PMFs alone would
        exceed its memory cap before building them."""
        Mo = float(self.M if M_outer is None else M_outer)
        x0, x1 = self.x_range()
        lo = math.log1p(x0 / Mo) if x0 > -Mo else -math.inf
        lo = max(lo, -31.0)
        hi = math.log1p(x1 / Mo) + self.spread_extra
        return lo, hi

    # ---------------------------------------------------------- the pair diluted by a partial epoch
    # After k = M of the M_outer steps of an epoch, the pair is P0 vs (1 - r) P0 + r P1 with
    # r = M / M_outer and likelihood ratio 1 + x / M_outer (x = S - M): the derivation is in
    # :mod:`dpbounds.accountant._law_partial`, which wraps a law with these two methods.
    def cdf_brackets(self, y: FArr) -> tuple[FArr, FArr, FArr, FArr]:
        """``(lo0, hi0, lo1, hi1)``: [lo_i, hi_i] contains P_i[S - M <= y] (i = 0: H0, 1: H1) at
        every point of the flat array ``y`` (beyond the law's served range too)."""
        raise NotImplementedError(f"the {self.method} law does not provide CDF brackets")

    def diluted_directions(self, eps: float, r: float, M_outer: float) -> dict[str, tuple[float, float]]:
        """Brackets of delta(eps) of both directions of the diluted pair (``{"remove": (lo, hi),
        "add": (lo, hi)}``), eps >= 0, 0 < r <= 1.

        remove: r (1 - F1(y)) - (e^eps - 1 + r)(1 - F0(y)), y = M_outer (e^eps - 1); add:
        a0 F0(y2) - e^eps r F1(y2), a0 = 1 - e^eps (1 - r), y2 = M_outer (e^{-eps} - 1) (zero
        where a0 <= 0).  By default interval arithmetic on :meth:`cdf_brackets` (non-negative
        weights: each end takes the CDF bracket ends that make it extreme), with round-off."""
        if eps > 700.0:
            # e^eps overflows; add is 0 (a0 < 0 long before), remove <= r P1[x > y] <= r P1[x > xhi]
            _, _, lo1, _ = self.cdf_brackets(np.array([1e300]))
            return {"remove": (0.0, float(r * (1.0 - lo1[0]) * (1.0 + RND))), "add": (0.0, 0.0)}
        ee = math.exp(eps)
        em = math.expm1(eps)
        y = M_outer * em
        y2 = M_outer * math.expm1(-eps)
        lo0, hi0, lo1, hi1 = self.cdf_brackets(np.array([y, y2]))
        # remove: r (1 - F1(y)) - c (1 - F0(y)), c = e^eps - 1 + r >= r > 0
        c = em + r
        t1h, t2l = r * (1.0 - lo1[0]), c * (1.0 - hi0[0])
        t1l, t2h = r * (1.0 - hi1[0]), c * (1.0 - lo0[0])
        rem = (t1l - t2h - RND * (t1l + t2h), t1h - t2l + RND * (t1h + t2l))
        # add: a0 F0(y2) - b F1(y2), a0 = 1 - e^eps (1 - r), b = e^eps r; zero where a0 <= 0
        a0 = r * ee - em
        b = r * ee
        da = RND * (r * ee + em)  # round-off bound of a0
        if a0 + da <= 0.0:
            add = (0.0, 0.0)  # a0 <= 0: x <= y2 <= -M is impossible (add loss <= -log(1 - r) < eps)
        else:
            u1, u2 = (a0 + da) * hi0[1], b * lo1[1]
            l1, l2 = max(a0 - da, 0.0) * lo0[1], b * hi1[1]
            add = (l1 - l2 - RND * (l1 + l2), u1 - u2 + RND * (u1 + u2))
        return {"remove": (float(rem[0]), float(rem[1])), "add": (float(add[0]), float(add[1]))}

    def diluted_lattice_pmfs(self, delta_l: float, r: float, M_outer: float) -> LatticePMFs:
        """Lattice PMFs (as :meth:`lattice_pmfs`) of both directions' loss of the diluted pair:
        remove: log1p(x / M_outer) under (1 - r) P0 + r P1; add: -log1p(x / M_outer) under P0."""
        raise NotImplementedError(f"the {self.method} law does not provide loss lattices")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} sigma={self.sigma:g} M={self.M:g}>"

