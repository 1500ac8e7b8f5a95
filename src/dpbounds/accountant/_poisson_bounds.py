"""The bounds of one direction of the Poisson PLD from its composed, tilted lattices (private).

Upper bounds on delta(eps) from the tail sums of the composed lattice, and the certified lower
bound of a pair of lattices; :mod:`._poisson_pld` combines the two directions.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from dpbounds.accountant._tilted_power import TailSums

__all__ = ["Direction", "PairLower", "first_above", "tail_at", "upper_bound"]


# ---------------------------------------------------------------------------------------
# the bounds of one direction from its composed (tilted) lattices
# ---------------------------------------------------------------------------------------
def first_above(eps: float, h: float) -> int:
    """The first lattice index j with loss j h > eps."""
    x = eps / h
    if x >= 2.0 ** 50:  # far beyond any window (there j h no longer resolves single steps)
        return math.floor(x) + 1
    j = math.floor(x) + 1
    while (j - 1) * h > eps:
        j -= 1
    while j * h <= eps:
        j += 1
    return j


def tail_at(t: TailSums, j: int, discounted: bool) -> tuple[float, float] | None:
    """(tail sum from lattice index j, its error bound); None where j lies below the usable range."""
    k = j - t.j0
    if k < t.kmin:
        return None
    if k >= t.n:
        return 0.0, t.beyond()
    return t.bound(k, discounted)


def upper_bound(t: TailSums, eps: float) -> tuple[float, float] | None:
    """(value, error bound) of sum_{l > eps} g_l (1 - e^{eps - l}) over the composed upper PMF."""
    j = first_above(eps, t.h)
    if j - t.j0 >= t.n:  # above the window: only what lies beyond it (weights at most 1)
        return 0.0, 2.0 * t.beyond()
    a = tail_at(t, j, False)
    d = tail_at(t, j, True)
    if a is None or d is None:
        return None
    f = math.exp(min(eps - j * t.h, 0.0))  # in (e^{-h}, 1]
    return a[0] - f * d[0], a[1] + f * d[1]


class PairLower:
    """eps -> max over a split J of sum_{K >= J} (P(K) - e^eps Q(K)), the merged cell pair's delta.

    ``p`` and ``r`` are the composed P and R lattices (tail sums with error bounds), with
    ``Q(K) = e^{-(K + offset) h} R(K)``.  Every split J gives a lower bound on
    sum_K (P(K) - e^eps Q(K))^+; the best one is where the merged loss
    lambda_K = log(P(K) / Q(K)) crosses eps, found from lambda_K itself (it differs from
    (K + offset) h by the cells' accumulated offsets, which at coarse spacings can be many
    lattice steps), and the five splits around it are tried, each with its own error bound.
    """

    def __init__(self, p: TailSums, r: TailSums, offset: float):
        self.p, self.r, self.h, self.offset = p, r, p.h, offset
        self.j_lo = max(p.j0 + p.kmin, r.j0 + r.kmin)  # first split with both tails usable
        self.j_hi = max(p.j0 + p.n, r.j0 + r.n)  # beyond: both tails (bounded by) window ends

    def _lam(self, j: int) -> float:
        """lambda_J - (J + offset) h at index J (nan where not usable)."""
        kp, kr = j - self.p.j0 - self.p.kmin, j - self.r.j0 - self.r.kmin
        if not (0 <= kp < self.p.u.size and 0 <= kr < self.r.u.size):
            return math.nan
        a, b = float(self.p.u[kp]), float(self.r.u[kr])
        if a <= 1e-300 or b <= 1e-300:
            return math.nan
        return math.log(a) - math.log(b)

    def __call__(self, eps: float) -> tuple[float, float]:
        """(value, error bound) at the best split tried: value - error is the certified lower end."""
        h, offset = self.h, self.offset
        if self.j_lo >= self.j_hi:
            return 0.0, 0.0
        k = min(max(math.floor(eps / h - offset) + 1, self.j_lo), self.j_hi - 1)
        for _ in range(6):  # follow lambda_J (fixed-point steps)
            off = self._lam(k)
            if math.isnan(off):
                break
            k_new = min(max(math.floor((eps - off) / h - offset) + 1, self.j_lo), self.j_hi - 1)
            if k_new == k:
                break
            k = k_new
        for _ in range(64):  # local walk to the sign change of P(K) - e^eps Q(K)
            lm = self._lam(k - 1)
            if not math.isnan(lm) and (k - 1 + offset) * h + lm > eps:
                k -= 1
                continue
            lk = self._lam(k)
            if not math.isnan(lk) and (k + offset) * h + lk <= eps:
                k += 1
                continue
            break
        # the split with the largest value among the five around the crossing (its error bound
        # then taken: every split gives a valid lower bound)
        best_j: int | None = None
        best_v = -math.inf
        p, r = self.p, self.r
        for j in range(max(k - 2, self.j_lo), k + 3):
            x = eps - (j + offset) * h
            kp, kr = j - p.j0, j - r.j0
            if x > 700.0 or kp < p.kmin or kr < r.kmin:  # e^eps Q not representable / not usable
                continue
            a = float(p.A[kp - p.kmin]) if kp < p.n else 0.0
            d = float(r.D[kr - r.kmin]) if kr < r.n else 0.0
            v = a - math.exp(x) * d
            if v > best_v:
                best_j, best_v = j, v
        if best_j is None:
            return 0.0, 0.0
        a_e = tail_at(p, best_j, False)
        d_e = tail_at(r, best_j, True)
        assert a_e is not None and d_e is not None
        f = math.exp(eps - (best_j + offset) * h)
        return a_e[0] - f * d_e[0], a_e[1] + f * d_e[1]


class Direction(NamedTuple):
    """One direction's composed lattices: upper PMF, mass at +inf, merged-pair lower bound (the
    add direction's is built only where it may matter: :meth:`PoissonPLD._add_low`)."""

    up: TailSums
    inf_mass: float
    low: PairLower | None
    float_rel: float  # relative allowance for the floating-point error of the cell masses
