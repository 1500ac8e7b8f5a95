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

Error bars are the k-round law's, weighted by the same coefficients (interval arithmetic on
its CDF brackets, or monotone bracketing of the remapped eps for the log-domain law), so they
are certified exactly where the k-round law's are.  k = M is the full epoch: every answer is
then the k-round law's own, bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

from dpbounds.accountant._law import FArr, LatticePMFs, SingleEpochLaw
from dpbounds.accountant._law_fourier import LognormalSum, _cell_masses
from dpbounds.accountant._law_logdomain import LogDomainPair
from dpbounds.accountant._law_tilted import TiltedLognormalSum
from dpbounds.accountant._tails import spread_along_bound, upper_tail_h0, upper_tail_h1

__all__ = ["PartialEpochLaw"]

_ULP = 2.220446049250313e-16
_RND = 4.0 * _ULP  # relative round-off of one combination of two terms (added to both ends)


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
            raise ValueError(f"M must be an integer >= k = {k:g} (the steps run so far), got {M!r}")
        if not (k >= 1 and k == math.floor(k)):
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        if not isinstance(base, (LognormalSum, TiltedLognormalSum, LogDomainPair)):
            raise ValueError(f"base must be one of the single-epoch laws, got {type(base).__name__}")
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
            raise ValueError("per-direction brackets are not available for k = M (a full epoch)")
        eps = float(eps)
        if isinstance(self.base, LogDomainPair):
            return self._directions_logdomain(eps)
        return self._directions_cdf(eps)

    def _cdf_bounds(self, y: FArr) -> tuple[FArr, FArr, FArr, FArr]:
        """[lo_i, hi_i] containing P_i'[x' <= y] (i = 0: H0, 1: size-biased) of the k-round law, any y.

        Inside the served range: the series value and the law's own error terms (for the Fourier
        law one-sided, as its ``delta`` uses them: aliasing only adds mass to the wrapped CDF,
        mass below the window only to the true one).  Beyond it: monotonicity (a CDF is between
        its value at the range's end and 0 or 1) and, above, the rigorous upper tail bounds."""
        law = self.base
        assert isinstance(law, (LognormalSum, TiltedLognormalSum))
        y = np.atleast_1d(np.asarray(y, dtype=float))
        yc = np.clip(y, law.xlo, law.xhi)
        if isinstance(law, LognormalSum):
            g0, g1 = law.wrapped_cdf_pair(yc)
            num = law.err_trunc + law.err_round
            lo0 = g0 - (law.tail_lo0 + law.tail_hi0 + num)
            hi0 = g0 + (law.tail_lo0 + num)
            lo1 = g1 - (law.tail_lo1 + law.tail_hi1 + num)
            hi1 = g1 + (law.tail_lo1 + num)
        else:
            g0, g1 = law.wrapped_cdf_pair(yc)
            e = law.err(yc)
            lo0, hi0, lo1, hi1 = g0 - e, g0 + e, g1 - e, g1 + e
        above = y > law.xhi
        if np.any(above):
            ya = np.minimum(y[above], 1e300)
            hi0[above] = 1.0
            hi1[above] = 1.0
            lo0[above] = np.maximum(lo0[above], 1.0 - upper_tail_h0(self.sigma, self.k, ya))
            lo1[above] = np.maximum(lo1[above], 1.0 - upper_tail_h1(self.sigma, self.k, ya))
        below = y < law.xlo
        lo0[below] = 0.0
        lo1[below] = 0.0
        return (np.clip(lo0, 0.0, 1.0), np.clip(hi0, 0.0, 1.0),
                np.clip(lo1, 0.0, 1.0), np.clip(hi1, 0.0, 1.0))

    def _directions_cdf(self, eps: float) -> dict[str, tuple[float, float]]:
        """Fourier / tilted base: interval arithmetic on the CDF brackets at y and y2."""
        r, M = self.r, self.M
        if eps > 700.0:
            # e^eps overflows; add is 0 (a0 < 0 long before), remove <= r P1'[x' > y] <= r P1'[x' > xhi]
            _, _, lo1, _ = self._cdf_bounds(np.array([1e300]))
            return {"remove": (0.0, float(r * (1.0 - lo1[0]) * (1.0 + _RND))), "add": (0.0, 0.0)}
        ee = math.exp(eps)
        em = math.expm1(eps)
        y = M * em
        y2 = M * math.expm1(-eps)
        lo0, hi0, lo1, hi1 = self._cdf_bounds(np.array([y, y2]))
        # remove: r (1 - F1(y)) - c (1 - F0(y)), c = e^eps - 1 + r >= r > 0
        c = em + r
        t1h, t2l = r * (1.0 - lo1[0]), c * (1.0 - hi0[0])
        t1l, t2h = r * (1.0 - hi1[0]), c * (1.0 - lo0[0])
        rem = (t1l - t2h - _RND * (t1l + t2h), t1h - t2l + _RND * (t1h + t2l))
        # add: a0 F0(y2) - b F1(y2), a0 = 1 - e^eps (1 - r), b = e^eps r; zero where a0 <= 0
        a0 = r * ee - em
        b = r * ee
        da = _RND * (r * ee + em)  # round-off bound of a0
        if a0 + da <= 0.0:
            add = (0.0, 0.0)  # a0 <= 0: x' <= y2 <= -k is impossible (add loss <= -log(1 - r) < eps)
        else:
            u1, u2 = (a0 + da) * hi0[1], b * lo1[1]
            l1, l2 = max(a0 - da, 0.0) * lo0[1], b * hi1[1]
            add = (l1 - l2 - _RND * (l1 + l2), u1 - u2 + _RND * (u1 + u2))
        return {"remove": (float(rem[0]), float(rem[1])), "add": (float(add[0]), float(add[1]))}

    def _directions_logdomain(self, eps: float) -> dict[str, tuple[float, float]]:
        """Log-domain base: the k-round grids' own per-direction integrals at the remapped eps.

        Both integrals are non-negative (no cancellation of CDFs).  The remapped eps is rounded;
        each direction is monotone in it, so evaluating at eps' -/+ (its round-off bound) brackets
        the exact value; the fine-vs-coarse estimate of the k-round law is applied to each end."""
        law = self.base
        assert isinstance(law, LogDomainPair)
        r = self.r

        def est(vf: float, vc: float) -> float:
            return float(law._est(vf, vf - vc))  # the k-round law's own estimate (see LogDomainPair)

        def remove_k(e: float, w: float) -> tuple[float, float]:
            vf, vc = w * law.fine.delta_remove(e), w * law.coarse.delta_remove(e)
            return vf, est(vf, vc)

        def add_k(e: float, w: float) -> tuple[float, float]:
            vf, vc = w * law.fine.delta_add(e), w * law.coarse.delta_add(e)
            return vf, est(vf, vc)

        out: dict[str, tuple[float, float]] = {}
        em = math.expm1(eps) if eps <= 700.0 else math.inf
        # remove = r * delta_k^remove(eps1), e^{eps1} = 1 + (e^eps - 1)/r
        eps1 = math.log1p(em / r) if math.isfinite(em) else math.inf
        d1 = 8.0 * _ULP * (1.0 + eps1)
        if eps1 + d1 > 700.0:
            out["remove"] = (0.0, r * law.floor)
        else:
            vl, el = remove_k(eps1 + d1, r)
            vh, eh = remove_k(max(eps1 - d1, 0.0), r)
            out["remove"] = (vl - el, vh + eh)
        # add = a0 * delta_k^add(eps2), a0 = e^eps r - (e^eps - 1), e^{eps2} = e^eps r / a0
        if not math.isfinite(em):
            out["add"] = (0.0, 0.0)
            return out
        ee = math.exp(eps)
        a0 = r * ee - em
        da = 8.0 * _ULP * (r * ee + em)
        if a0 + da <= 0.0:
            out["add"] = (0.0, 0.0)  # the add loss never exceeds -log(1 - r) < eps
            return out
        hi_a = a0 + da
        eps2 = math.log(r * ee / hi_a)
        d2 = 8.0 * _ULP * (1.0 + eps2)
        if eps2 - d2 > 700.0:
            hi = hi_a * law.floor
        else:
            vh, eh = add_k(max(eps2 - d2, 0.0), hi_a)
            hi = vh + eh
        lo_a = a0 - da
        lo = 0.0
        if lo_a > 0.0:
            eps2 = math.log(r * ee / lo_a)
            d2 = 8.0 * _ULP * (1.0 + eps2)
            if eps2 + d2 <= 700.0:
                vl, el = add_k(eps2 + d2, lo_a)
                lo = vl - el
        out["add"] = (lo, hi)
        return out

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
        if isinstance(self.base, LognormalSum):
            return self._lattice_fourier(float(delta_l))
        if isinstance(self.base, LogDomainPair):
            return self._lattice_logdomain(float(delta_l))
        raise NotImplementedError(f"the {self.base.method} law does not provide loss lattices")

    def _lattice_fourier(self, delta_l: float) -> LatticePMFs:
        law = self.base
        assert isinstance(law, LognormalSum)
        r, M, k = self.r, self.M, self.k
        # cells narrow enough that the loss varies by <= delta_l / 2 near x' = 0 (at most 2^20)
        edges, h, p0, p1, err = _cell_masses(law, max(delta_l * M * 0.5, law.P / 2 ** 20))
        p0 = np.maximum(p0, 0.0)
        p1 = np.maximum(p1, 0.0)
        la = np.log1p(edges / M)  # edges >= xlo >= -k > -M: finite
        lb = np.log1p((edges + h) / M)
        hi0, hi1 = law.tail_hi0, law.tail_hi1
        if max(hi0, hi1) > 1e-10:  # the far tables tighten the window's upper tail bounds
            hi0 = min(hi0, float(upper_tail_h0(self.sigma, k, [law.xhi], far=True)[0]))
            hi1 = min(hi1, float(upper_tail_h1(self.sigma, k, [law.xhi], far=True)[0]))
        lo0, lo1 = law.tail_lo0, law.tail_lo1
        l_xlo = math.log1p(law.xlo / M)
        l_xhi = math.log1p(law.xhi / M)
        l_add_max = -math.log1p(-r)
        # remove (loss unbounded above): mass below xlo at loss <= log1p(xlo/M); above xhi along
        # the mixture's certified survival bound, the rest and the cell-mass error at +inf
        tot_hi = (1.0 - r) * hi0 + r * hi1
        spread = self._spread_tail(tot_hi, l_xhi)
        pm = (1.0 - r) * p0 + r * p1
        rem = _round_cells(pm, la, lb, delta_l, [(l_xlo, (1.0 - r) * lo0 + r * lo1)] + spread)
        inf_rem = max(tot_hi - sum(m for _, m in spread), 0.0) + err
        miss_rem = (1.0 - r) * (lo0 + hi0) + r * (lo1 + hi1) + err
        # add (loss <= -log(1 - r)): above xhi at loss <= -log1p(xhi/M); below xlo and the
        # cell-mass error at the largest possible loss
        add = _round_cells(p0, -lb, -la, delta_l, [(-l_xhi, hi0), (l_add_max, lo0 + err)])
        miss_add = lo0 + hi0 + err
        return {
            "remove": (rem[0], rem[1], inf_rem, rem[2], rem[3], miss_rem),
            "add": (add[0], add[1], 0.0, add[2], add[3], miss_add),
        }

    def _spread_tail(self, tot: float, l_xhi: float) -> list[tuple[float, float]]:
        """Mixture mass above the window (at most ``tot``) spread along the certified survival bound
        (1 - r) B0 + r B1 (truncated Chernoff, far tables); see :func:`spread_along_bound`."""
        r, M, k = self.r, self.M, self.k

        def survival(lk: FArr) -> FArr:
            y = M * np.expm1(lk)
            return np.asarray((1.0 - r) * upper_tail_h0(self.sigma, k, y, far=True)
                              + r * upper_tail_h1(self.sigma, k, y, far=True), dtype=np.float64)

        return spread_along_bound(tot, l_xhi, survival)

    def _lattice_logdomain(self, delta_l: float) -> LatticePMFs:
        """Cells of U = log S_k with exact loss edges: U in [u_j, u_{j+1}) <=> remove loss in
        [j D, (j+1) D), u_j = log M + log(e^{jD} - 1 + r).  Masses from the k-round grids' CDFs
        (fine, with the coarse grid for the l1 error estimate, as the full-epoch law does)."""
        law = self.base
        assert isinstance(law, LogDomainPair)
        r, D = self.r, delta_l
        lm = math.log(self.M)
        l1mr = math.log1p(-r)
        u = law.fine.u
        ends = np.logaddexp(l1mr, np.array([u[0], u[-1]]) - lm)  # remove losses at the grid's ends
        j0 = int(math.floor(ends[0] / D))
        j1 = int(math.ceil(ends[1] / D))
        j = np.arange(j0, j1 + 1, dtype=float)
        t = np.expm1(j * D) + r
        with np.errstate(divide="ignore", invalid="ignore"):
            uj = np.where(t > 0, lm + np.log(np.maximum(t, 1e-300)), -np.inf)
        masses = []
        for g in (law.fine, law.coarse):
            xc = np.clip(uj, g.u[0], g.u[-1])
            masses.append((np.diff(g.cdf0_at(xc)), np.diff(g.cdf1_at(xc))))
        (p0, p1), (q0, q1) = masses
        err = float(max(np.sum(np.abs(p0 - q0)), np.sum(np.abs(p1 - q1)))) / 16.0 + law.defect + 1e-16
        outside = max(abs(1.0 - float(np.sum(p0))), abs(1.0 - float(np.sum(p1))))
        p0 = np.maximum(p0, 0.0)
        pm = (1.0 - r) * p0 + r * np.maximum(p1, 0.0)
        n = p0.size
        # add: cell j has loss in (-(j+1) D, -j D]: up -j, down -(j+1); off-grid mass and the
        # error estimate at the largest possible add loss -log(1 - r) (not +inf)
        j_top = max(int(math.ceil(-l1mr / D)), -j0)
        up = np.zeros(j_top + j0 + n)
        up[:n] = p0[::-1]
        up[-1] += outside + err
        return {
            "remove": (j0 + 1, pm, outside + err, j0, pm.copy(), err),
            "add": (-(j0 + n - 1), up, 0.0, -(j0 + n), p0[::-1].copy(), err),
        }


def _round_cells(p: FArr, l_lo: FArr, l_hi: FArr, delta_l: float,
                 extra: list[tuple[float, float]]) -> tuple[int, FArr, int, FArr]:
    """(jmin_up, pmf_up, jmin_dn, pmf_dn): cell masses ``p`` with losses in [l_lo, l_hi] rounded
    up (upper PMF, plus the ``extra`` (loss, mass) pairs) and down (lower PMF, cells only)."""
    ex = [(lv, mv) for lv, mv in extra if mv > 0 and math.isfinite(lv)]
    j_up = np.ceil(l_hi / delta_l).astype(np.int64)
    j_dn = np.floor(l_lo / delta_l).astype(np.int64)
    pf_up = p
    if ex:
        j_up = np.concatenate([j_up, np.ceil(np.array([lv for lv, _ in ex]) / delta_l).astype(np.int64)])
        pf_up = np.concatenate([p, np.array([mv for _, mv in ex])])
    jmin = int(j_up.min())
    pu = np.bincount(j_up - jmin, weights=pf_up)
    jdmin = int(j_dn.min())
    pd = np.bincount(j_dn - jdmin, weights=p)
    return jmin, pu.astype(np.float64), jdmin, pd.astype(np.float64)
