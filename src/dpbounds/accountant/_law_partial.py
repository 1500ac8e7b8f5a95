"""A partial epoch of random allocation: k of the M steps released (private).

After only k < M steps of an epoch, the example's step is still to come with probability
1 - k/M, and is step j <= k with probability 1/M each.  The dominating pair is
H0: x ~ N(0, I_k) vs H1: (1 - k/M) N(0, I_k) + (1/M) sum_{j<=k} N(e_j/sigma, I_k), whose
likelihood ratio is

    LR = 1 - k/M + S_k/M = 1 + x'/M,   x' = S_k - k,

with S_k the sum of k i.i.d. lognormals of the k-round law.  Under H1, x' has the mixture law
(1 - r) P0' + r P1' (r = k/M) of the k-round law's H0 / size-biased laws P0', P1'; under H0
it has P0'.  So every answer is a linear combination, with non-negative weights, of the
k-round law's own quantities at a remapped threshold:

* trade-off: the threshold x_a is the k-round law's (Q0 = P0'), so
  f(a) = (1 - r)(1 - a) + r f_k(a);
* TV = r TV_k;
* remove: delta(eps) = r P1'[x' > y] - (e^eps - 1 + r) P0'[x' > y], y = M (e^eps - 1),
  i.e. r delta_k^remove(eps') with e^{eps'} = 1 + (e^eps - 1)/r;
* add: delta(eps) = (1 - e^eps (1 - r)) P0'[x' <= y2] - e^eps r P1'[x' <= y2],
  y2 = M (e^{-eps} - 1), i.e. a0 delta_k^add(eps'') with a0 = 1 - e^eps (1 - r) and
  e^{eps''} = e^eps r / a0 (zero once a0 <= 0: the add loss is at most -log(1 - r)).

Error bars are the k-round law's, weighted by the same coefficients, so they are certified
exactly where the k-round law's are.  What depends on the k-round law's representation is the
law's own business, behind two methods of the law interface (:mod:`dpbounds.accountant._law`):
``diluted_directions`` (interval arithmetic on its CDF brackets by default; monotone bracketing
of the remapped eps for the log-domain law) and ``diluted_lattice_pmfs``.  k = M is the full
epoch: every answer is then the k-round law's own, bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

from dpbounds._errors import DPBoundsError
from dpbounds.accountant._law import RND as _RND
from dpbounds.accountant._law import FArr, LatticePMFs, SingleEpochLaw

__all__ = ["PartialEpochLaw"]


class PartialEpochLaw(SingleEpochLaw):
    """The pair of a partial epoch (k of M steps run), from the k-round law ``base``.

    Parameters
    ----------
    base : the single-epoch law of k = ``base.M`` rounds (Fourier, tilted or log-domain).
    M : the epoch length (M >= k).

    Attributes ``k``, ``M``, ``r = k / M`` and ``base``; ``full`` is True when k = M (answers are
    then the base law's own).
    """

    def __init__(self, base: SingleEpochLaw, M: float):
        k = float(base.M)
        Mf = float(M)
        if not (math.isfinite(Mf) and Mf == math.floor(Mf) and Mf >= k):
            raise DPBoundsError(f"M must be an integer >= k = {k:g} (the steps run so far), got {M!r}")
        if not (k >= 1 and k == math.floor(k)):
            raise DPBoundsError(f"k must be an integer >= 1, got {k!r}")
        if not isinstance(base, SingleEpochLaw):
            raise DPBoundsError(f"base must be a single-epoch law, got {type(base).__name__}")
        self.base = base
        self.sigma = base.sigma
        self.k = k
        self.M = Mf
        self.r = k / Mf
        self.full = k == Mf
        self.method = base.method if self.full else f"{base.method}; partial epoch, {k:g} of {Mf:g} steps"
        self.certified = base.certified
        self.estimated = base.estimated
        self.supports_lattice = base.supports_lattice

    @property
    def key(self) -> tuple[object, ...]:
        return ("partial", self.base.key, self.M)

    @property
    def converged(self) -> bool:
        return self.base.converged

    # -------------------------------------------------------------- trade-off curve, TV
    def tradeoff(self, a: FArr) -> tuple[FArr, FArr]:
        """f(a) = (1 - r)(1 - a) + r f_k(a): H0 is the k-round H0, so the threshold x_a is shared."""
        if self.full:
            return self.base.tradeoff(a)
        a = np.asarray(a, dtype=float)
        fk, ek = self.base.tradeoff(a)
        one_minus_a = np.where(a <= 0, 1.0, np.where(a >= 1, 0.0, 1.0 - a))
        f = (1.0 - self.r) * one_minus_a + self.r * fk
        return f, self.r * ek + _RND * np.abs(f)

    def tv(self) -> tuple[float, float]:
        """TV(Q0, Q1) = r TV(P0', P1'): Q1 - Q0 = r (P1' - P0')."""
        if self.full:
            return self.base.tv()
        v, e = self.base.tv()
        return self.r * v, self.r * e + _RND * abs(self.r * v)

    def curve_points(self) -> tuple[FArr, FArr, FArr, FArr]:
        """The k-round law's boxes mapped by f -> (1 - r)(1 - a) + r f (a unchanged).

        f(a_lo) >= f_lo' and f(a_hi) <= f_hi' follow from the same inequalities of f_k, with the
        exact (1 - r)(1 - a) term evaluated at the box's own a (rounded outward)."""
        if self.full:
            return self.base.curve_points()
        a_lo, a_hi, f_lo, f_hi = (np.asarray(v, dtype=float) for v in self.base.curve_points())
        r = self.r
        # a outside [0, 1] (a box straddling an end): f(0) = 1 and f(1) = 0 hold trivially
        a_lo = np.maximum(a_lo, 0.0)
        a_hi = np.minimum(a_hi, 1.0)
        fl = (1.0 - r) * (1.0 - a_lo) + r * f_lo
        fh = (1.0 - r) * (1.0 - a_hi) + r * f_hi
        fl = np.minimum(fl - _RND * np.abs(fl), 1.0)
        fh = np.maximum(fh + _RND * np.abs(fh), 0.0)
        return a_lo, a_hi, fl, fh

    # -------------------------------------------------------------- delta(eps)
    def delta(self, eps: float) -> tuple[float, float]:
        if self.full:
            return self.base.delta(eps)
        d = self.delta_directions(eps)
        (rl, rh), (al, ah) = d["remove"], d["add"]
        return float(max(rl, al, 0.0)), float(min(max(rh, ah), 1.0))

    def delta_directions(self, eps: float) -> dict[str, tuple[float, float]]:
        """Brackets of delta(eps) of each neighbouring direction: ``{"remove": (lo, hi), "add": (lo, hi)}``.

        remove: the loss log LR under H1; add: -log LR under H0.  Not available for k = M (the
        full-epoch laws report only the larger of the two)."""
        if self.full:
            raise DPBoundsError("per-direction brackets are not available for k = M (a full epoch)")
        return self.base.diluted_directions(float(eps), self.r, self.M)

    def x_range(self) -> tuple[float, float]:
        return self.base.x_range()

    @property
    def spread_extra(self) -> float:  # type: ignore[override]
        return self.base.spread_extra

    def loss_range(self, M_outer: float | None = None) -> tuple[float, float]:
        """The base law's x range for the loss log1p(x / M) of the diluted pair (x = S_k - k)."""
        if self.full:
            return self.base.loss_range()
        return self.base.loss_range(self.M)

    # -------------------------------------------------------------- loss lattices (E > 1)
    def lattice_pmfs(self, delta_l: float, cell_span: float | None = None) -> LatticePMFs:
        """Lattice PMFs of both directions' loss at spacing ``delta_l`` (``cell_span`` is accepted
        for the interface; this law sizes its cells from ``delta_l``).

        remove: loss log1p(x'/M) under (1 - r) P0' + r P1'; add: -log1p(x'/M) under P0'.  Cells
        of x' (Fourier base) or of log S_k (log-domain base) are rounded up / down onto the
        lattice as the full-epoch laws do; the mixture's cell masses are (1 - r) p0 + r p1.  The
        add loss never exceeds -log(1 - r): mass outside the window (and the cell-mass error)
        goes there in the upper PMF instead of to +inf."""
        if self.full:
            return self.base.lattice_pmfs(delta_l)
        return self.base.diluted_lattice_pmfs(float(delta_l), self.r, self.M)
