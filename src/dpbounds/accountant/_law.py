"""The single-epoch law interface of the random-allocation accountant (private).

One epoch of random allocation with noise multiplier sigma and M rounds is dominated by the pair
H0: x ~ N(0, I_M) vs H1: x ~ (1/M) sum_j N(e_j/sigma, I_M); its likelihood ratio is S/M with S
a sum of M i.i.d. lognormals (H1 is the size-biased law).  A *law* represents S under both
hypotheses well enough to answer every question the accountant asks of one epoch:

* :meth:`SingleEpochLaw.tradeoff` -- the trade-off curve f(a) with an error bound;
* :meth:`SingleEpochLaw.delta` -- a bracket of delta(eps), both neighbouring directions;
* :meth:`SingleEpochLaw.tv` -- TV(P0, P1) (delta at eps = 0) with its error;
* :meth:`SingleEpochLaw.curve_points` -- boxes along the curve (for Gaussian-DP certificates);
* :meth:`SingleEpochLaw.lattice_pmfs` -- loss-lattice masses for E-epoch composition.

Three implementations (Fourier series, tilted Fourier series, log-domain grid) serve different
(sigma, M); :mod:`dpbounds.accountant._select` is the only place that chooses between them.
"""
from __future__ import annotations

import abc
import numpy as np
from numpy.typing import NDArray

FArr = NDArray[np.float64]

# direction -> (jmin, p_up, inf_up, jmin_dn, p_dn, miss_dn): lattice PMF rounded up (mass at
# +inf loss: inf_up) and rounded down (mass not represented: miss_dn, subtracted from lower bounds)
LatticePMFs = dict[str, tuple[int, FArr, float, int, FArr, float]]

__all__ = ["SingleEpochLaw", "LatticePMFs", "FArr"]


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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} sigma={self.sigma:g} M={self.M:g}>"

