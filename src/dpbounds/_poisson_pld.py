"""Certified privacy-loss distribution of Poisson-subsampled Gaussian DP-SGD (private).

Public class: :class:`PoissonPLD`.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds._ufuncs import ndtr as _ndtr  # type: ignore[import-not-found, unused-ignore]
from dpbounds.tradeoff import gdp_epsilon as _gdp_epsilon

FArr = NDArray[np.float64]

__all__ = ["PoissonPLD"]

_ULP = 2.220446049250313e-16
# Per-step allowance for the floating-point error of the cell masses (ndtr accurate to a few
# ulp, differences taken on the side where they do not cancel, the split of each cell): an
# estimate, not a certified bound; see the notes of PoissonPLD.
_FLOAT_STEP = 64.0 * _ULP
_TAU = 1e-14  # Chernoff level of the composition windows (each side)
_TAIL = 1e-28  # mass of each normal left beyond the outermost cells, over all steps
_MAX_GAP = 1 << 22
_MAX_SPACING = 0.5  # coarsest lattice tried when the window does not fit  # longest run of empty lattice points kept inside a single-step PMF


# ---------------------------------------------------------------------------------------
# single step: cells of the x line whose remove-direction loss spans one lattice step
# ---------------------------------------------------------------------------------------
def _loss(sigma: float, q: float, x: float) -> float:
    """Remove-direction loss L(x) = log(1 - q + q e^{(2x - 1)/(2 sigma^2)})."""
    z = (2.0 * x - 1.0) / (2.0 * sigma * sigma)
    if q == 1.0:
        return z
    if z > 0.0:
        return z + math.log(q + (1.0 - q) * math.exp(-z))
    return math.log1p(q * math.expm1(z))


def _normal_cells(u: FArr) -> tuple[FArr, float, float]:
    """Standard-normal masses of the cells [u_k, u_{k+1}), the mass below u_0 and above u_n.

    Every mass is a difference of ``ndtr`` values on the side where it does not cancel
    (left of 0: Phi(b) - Phi(a); right of 0: Phi(-a) - Phi(-b)), so each CDF value is
    accurate to a few ulp relative and the masses telescope.
    """
    fl = _ndtr(u)
    fr = _ndtr(-u)
    m = np.where(u[1:] <= 0.0, fl[1:] - fl[:-1], fr[:-1] - fr[1:])
    np.maximum(m, 0.0, out=m)
    return m, float(fl[0]), float(fr[-1])


def _z_tail(p: float) -> float:
    """z with Phi(-z) <= p (bisection on ndtr)."""
    lo, hi = 0.0, 40.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if float(_ndtr(-mid)) > p:
            lo = mid
        else:
            hi = mid
    return hi


class _Step:
    """One Poisson-subsampled Gaussian step on the loss lattice ``h Z``: lattice PMFs.

    Cell ``k`` (``k_lo <= k < k_hi``) is ``[x_k, x_{k+1})`` with ``x_k = L^{-1}(k h)``, so the
    remove-direction loss L lies in ``[k h, (k + 1) h]`` on it (``x_k = -inf`` where
    ``k h <= log(1 - q)``); ``a0``/``a1`` are its N(0, s^2)/N(1, s^2) masses.  The add
    direction (loss -L(x) under N(0, s^2)) uses the same cells mirrored.
    """

    def __init__(self, sigma: float, q: float, h: float, tail: float):
        self.sigma, self.q, self.h = sigma, q, h
        z = _z_tail(tail)
        k_lo = math.floor(_loss(sigma, q, -z * sigma) / h)
        self.k_hi = math.ceil(_loss(sigma, q, 1.0 + z * sigma) / h)
        self.log1mq = math.log1p(-q) if q < 1.0 else -math.inf
        if q < 1.0 and k_lo - self.log1mq / h < _MAX_GAP:
            # cover the loss down to its infimum log(1 - q): no lower tail at all
            k_lo = math.floor(self.log1mq / h)
        self.k_lo = k_lo
        lk = np.arange(k_lo, self.k_hi + 1, dtype=np.float64) * h
        # c_k = e^{k h} - 1 + q = q e^{z(x_k)}; the edge is x_k = s^2 log(c_k / q) + 1/2
        self.c = np.expm1(lk) + q
        pos = self.c > 0.0
        x = np.full(lk.shape, -np.inf)
        x[pos] = sigma * sigma * (np.log(self.c[pos]) - math.log(q)) + 0.5
        self.a0, self.bot0, self.top0 = _normal_cells(x / sigma)
        self.a1, self.bot1, self.top1 = _normal_cells((x - 1.0) / sigma)

    def remove(self) -> tuple[tuple[int, FArr, float], tuple[int, FArr, FArr, float]]:
        """((jmin, connect-the-dots PMF, mass at +inf), (jmin, cell P masses, tilted Q masses, c)).

        The tilted Q mass of the cell at lattice index j is ``Q e^{(j + c) h}``, with c chosen so
        that the tilted masses sum to 1 (c ~ 1/2 on fine lattices).
        """
        q, h, c = self.q, self.h, self.c
        a0, a1 = self.a0, self.a1
        p = q * a1 if q == 1.0 else (1.0 - q) * a0 + q * a1
        # split of cell k between k h and (k + 1) h keeping its P and Q masses:
        # upper weight (p - a0 e^{k h}) / (1 - e^{-h}), with p - a0 e^{k h} = q a1 - a0 c_k
        wb = np.clip((q * a1 - a0 * c[:-1]) / -math.expm1(-h), 0.0, p)
        up = np.zeros(p.size + 1)
        up[:-1] += p - wb
        up[1:] += wb
        # below x_{k_lo}: loss in [log(1 - q), k_lo h] -> up to k_lo; above x_{k_hi}: +inf
        up[0] += (1.0 - q) * self.bot0 + q * self.bot1
        inf = (1.0 - q) * self.top0 + q * self.top1
        k = np.arange(self.k_lo, self.k_hi, dtype=np.float64)
        r, cc = _tilt(a0, k, h)
        return (self.k_lo, up, inf), (self.k_lo, p, r, cc)

    def add(self) -> tuple[tuple[int, FArr, float], tuple[int, FArr, FArr, float]]:
        """As :meth:`remove` for the add direction: loss -L(x) under N(0, s^2)."""
        q, h, c = self.q, self.h, self.c
        a0, a1 = self.a0, self.a1
        p = q * a1 if q == 1.0 else (1.0 - q) * a0 + q * a1
        n = a0.size
        k = np.arange(self.k_lo, self.k_hi, dtype=np.float64)
        # cell k: loss in [-(k + 1) h, -k h], P mass a0, Q mass p; upper weight (at -k h)
        # (a0 - p e^{-(k+1) h}) / (1 - e^{-h}) with a0 e^{(k+1) h} - p = a0 c_{k+1} - q a1
        wb = np.clip(np.exp(-(k + 1.0) * h) * (a0 * c[1:] - q * a1) / -math.expm1(-h), 0.0, a0)
        # lattice index j = -k_hi + i, i = 0 .. n; cell k sits at i = n - 1 - (k - k_lo) (+1)
        extra = 0
        inf = 0.0
        jtop = -self.k_lo
        bot = self.bot0  # N(0, s^2) mass below x_{k_lo}: loss in [-k_lo h, -log(1 - q)]
        if bot > 0.0:
            jb = math.ceil(-self.log1mq / h) if q < 1.0 else math.inf
            if jb - jtop <= _MAX_GAP:
                extra = max(int(jb) - jtop, 0)
            else:
                inf = bot
        up = np.zeros(n + 1 + extra)
        up[n - 1::-1] += a0 - wb
        up[n:0:-1] += wb
        up[0] += self.top0  # above x_{k_hi}: loss <= -k_hi h
        if bot > 0.0 and inf == 0.0:
            up[n + extra] += bot
        r, cc = _tilt(p[::-1], -(k[::-1] + 1.0), h)
        return (-self.k_hi, up, inf), (-self.k_hi, a0[::-1].copy(), r, cc)


def _tilt(qm: FArr, j: FArr, h: float) -> tuple[FArr, float]:
    """Q masses at lattice indices j tilted by e^{(j + c) h}, c such that they sum to 1; (masses, c)."""
    r = qm * np.exp((j - j[-1]) * h)  # <= qm e^{0}: no overflow
    tot = float(r.sum())
    c = -j[-1] - math.log(tot) / h
    r /= tot
    return r, c


# ---------------------------------------------------------------------------------------
# lower bound: the composed pair of cell masses, merged by lattice index
# ---------------------------------------------------------------------------------------
class _PairTail:
    """eps -> max over a split K of sum_{K' >= K} (P(K') - e^eps Q(K')), the merged pair's delta.

    ``P`` and ``R`` are composed lattice PMFs on index K (``P(K) = gp[K - sp]``) with
    ``Q(K) = e^{-(K + offset) h} R(K)``.  Every split K gives a lower bound on
    sum_K (P(K) - e^eps Q(K))^+; the best one is where the merged loss
    lambda_K = log(P(K) / Q(K)) crosses eps, found from lambda_K itself (it differs from
    (K + offset) h by the cells' accumulated offsets, which at coarse spacings can be many
    lattice steps), and the five splits around it are tried.
    """

    def __init__(self, sp: int, gp: FArr, sr: int, gr: FArr, h: float, offset: float):
        self.h, self.offset = h, offset
        # losses >= -3 h: all that eps >= 0 can use
        k0 = max(math.floor(-offset) - 3, min(sp, sr))
        k1 = max(sp + gp.size, sr + gr.size)
        self.k0 = k0
        n = max(k1 - k0, 1)
        a = np.zeros(n)
        _place(a, k0, sp, gp)
        b = np.zeros(n)
        _place(b, k0, sr, gr)
        b *= np.exp(-(np.arange(k0, k0 + n, dtype=np.float64) + offset) * h)
        self.a, self.b = a, b
        self.A = np.cumsum(a[::-1])[::-1]
        self.B = np.cumsum(b[::-1])[::-1]

    def _offset(self, i: int) -> float | None:
        """lambda_K - (K + offset) h at array index i, or None where the masses are not usable."""
        if not 0 <= i < self.a.size:
            return None
        pa, qb = float(self.a[i]), float(self.b[i])
        if not (pa > 1e-280 and qb > 1e-280):
            return None
        return math.log(pa / qb) - (i + self.k0 + self.offset) * self.h

    def __call__(self, eps: float) -> tuple[float, float]:
        """(value, factor): the lower value and the largest e^{eps - (K + offset) h} over the splits tried."""
        h, offset, k0 = self.h, self.offset, self.k0
        k = math.floor(eps / h - offset) + 1  # first K with (K + offset) h > eps
        # follow lambda_K: K = first index with (K + offset) h + offset_K > eps (a few fixed-point steps)
        for _ in range(6):
            off = self._offset(k - k0)
            if off is None:
                break
            k_new = math.floor((eps - off) / h - offset) + 1
            if k_new == k:
                break
            k = k_new
        for _ in range(64):  # local walk to the sign change of P(K) - e^eps Q(K)
            lm = self._offset(k - 1 - k0)
            if lm is not None and (k - 1 + offset) * h + lm > eps:
                k -= 1
                continue
            lk = self._offset(k - k0)
            if lk is not None and (k + offset) * h + lk <= eps:
                k += 1
                continue
            break
        best = 0.0
        ee = math.exp(min(eps, 700.0))
        for kk in range(k - 2, k + 3):
            i = kk - k0
            if 0 <= i < self.A.size:
                best = max(best, float(self.A[i] - ee * self.B[i]))
        return best, math.exp(max(eps - (k - 2 + offset) * h, 0.0))


def _place(dst: FArr, k0: int, s: int, g: FArr) -> None:
    lo = max(s, k0)
    hi = min(s + g.size, k0 + dst.size)
    if hi > lo:
        dst[lo - k0:hi - k0] += g[lo - s:hi - s]


# ---------------------------------------------------------------------------------------
# public class
# ---------------------------------------------------------------------------------------
class PoissonPLD:
    """Privacy-loss distribution of Poisson-subsampled Gaussian steps, certified brackets.

    Add/remove-one neighbours, sensitivity 1, Gaussian noise N(0, sigma^2) per step and
    Poisson sampling with rate q.  Remove direction: P = (1 - q) N(0, s^2) + q N(1, s^2) and
    Q = N(0, s^2), loss L(x) = log(1 - q + q e^{(2x - 1)/(2 s^2)}) under x ~ P; add direction:
    loss -L(x) under x ~ N(0, s^2).  ``delta(eps)`` is the larger of the two directions'
    hockey-stick divergences of the composed mechanism.

    Parameters
    ----------
    noise_multiplier : float
        sigma, finite and > 0.
    sample_rate : float
        q in (0, 1].
    steps : int
        Number of steps T >= 1.
    tolerance : float, optional
        Target relative width of the brackets (epsilon bracket for :meth:`epsilon`, delta
        bracket for :meth:`delta`), in (0, 1).  Default 2e-3.
    max_lattice : int, optional
        Largest composition window in lattice points (default 2**21: 16 MiB per array).

    Attributes
    ----------
    lattice_spacing : float
        Loss-lattice spacing used by the last query.
    tolerance_met : bool
        Whether the last query reached ``tolerance``.  When it did not (the window the
        tolerance needs exceeds ``max_lattice``, or floating-point error estimates dominate)
        the bracket is still certified, only wider.
    lattice_needed : int
        Window (lattice points) the last refinement asked for; larger than ``max_lattice``
        when the memory cap stopped the refinement.

    Notes
    -----
    The x line is cut at the points where the remove-direction loss crosses the lattice
    ``h Z`` (L is increasing in x), so every cell's loss lies in one lattice step; the cell
    masses of N(0, s^2) and N(1, s^2) are differences of the normal CDF.

    * Upper bound: each cell's mass is split between the two lattice points around it so that
      both its P and its Q mass are kept ("connect the dots", Doroshenko et al., "Connect the
      dots: tighter discrete approximations of privacy loss distributions").  The split pair
      dominates the cell pair (the cell is a post-processing of it), so the lattice PLD's
      composed hockey-stick divergence is an upper bound, with an error of second order in h.
      The mass beyond the outermost cells is put at +inf loss (or at the upper end of its loss
      range where that is bounded, e.g. add direction x -> -inf: -log(1 - q)).
    * Lower bound: the pair of cell masses (P(cell), Q(cell)) is a post-processing of the
      step's pair, and so is the composed pair merged by the sum of the cells' lattice
      indices; its hockey-stick divergence, sum_K (P(K) - e^eps Q(K))^+, is at least any
      partial sum over K >= K*.  Q is composed tilted by e^{(k + c) h} (c normalising the
      tilted masses), so the FFT round-off is not magnified by e^eps.  Mass beyond the outermost cells is dropped.
    * Composition: one FFT power per PMF on a window holding all but 1e-14 of the mass on
      each side (Chernoff bounds of the lattice law; Koskela, Jälkö, Honkela: "Computing
      tight differential privacy guarantees using FFT"), heterogeneous segments by
      convolution.

    Certified (exact arithmetic): the discretisation (both directions, the mass beyond the
    cells) and the window tails.  Estimated: the FFT round-off (an error model added to the
    upper and subtracted from the lower bound) and the floating-point error of the cell
    masses (T * 64 ulp per bound, ndtr being accurate to a few ulp).

    The lattice spacing is chosen from a first epsilon guess (the Gaussian-DP central limit
    mu = q sqrt(T (e^{1/s^2} - 1))) and refined while the bracket is wider than the
    tolerance and the window fits in ``max_lattice``.

    Examples
    --------
    >>> from dpbounds.accountant import PoissonPLD  # doctest: +SKIP
    >>> acc = PoissonPLD(1.0, 0.01, 1000)
    >>> lo, hi = acc.epsilon(1e-5)
    >>> 1.8 < lo <= hi < 1.85 and hi - lo <= 2e-3 * hi
    True
    >>> d_lo, d_hi = acc.delta(1.0)
    >>> d_lo <= d_hi
    True
    """

    def __init__(self, noise_multiplier: float, sample_rate: float, steps: int, *,
                 tolerance: float = 2e-3, max_lattice: int = 2 ** 21):
        seg = _check_segment(noise_multiplier, sample_rate, steps, "")
        self._init([seg], tolerance, max_lattice)

    @classmethod
    def from_segments(cls, segments: Sequence[tuple[float, float, int]], *, tolerance: float = 2e-3,
                      max_lattice: int = 2 ** 21) -> "PoissonPLD":
        """Heterogeneous history: segments of (noise_multiplier, sample_rate, steps), composed by convolution.

        Parameters
        ----------
        segments : sequence of (float, float, int)
            ``(noise_multiplier, sample_rate, steps)`` for each run of identical steps.
        tolerance, max_lattice
            As for the constructor.

        Examples
        --------
        >>> acc = PoissonPLD.from_segments([(1.0, 0.01, 500), (1.5, 0.02, 500)])
        >>> lo, hi = acc.epsilon(1e-5)
        >>> lo <= hi
        True
        """
        segs = list(segments)
        if not segs:
            raise ValueError("segments must hold at least one (noise_multiplier, sample_rate, steps)")
        checked = []
        for i, s in enumerate(segs):
            try:
                sg, qq, tt = s
            except (TypeError, ValueError):
                raise ValueError(f"segments[{i}] must be a (noise_multiplier, sample_rate, steps) "
                                 f"tuple, got {s!r}") from None
            checked.append(_check_segment(sg, qq, tt, f"segments[{i}].",))
        self = cls.__new__(cls)
        self._init(checked, tolerance, max_lattice)
        return self

    def _init(self, segs: list[tuple[float, float, int]], tolerance: float, max_lattice: int) -> None:
        self.segments = segs
        self.steps = sum(t for _, _, t in segs)
        self.tolerance = float(V.check_open_unit("tolerance", tolerance))
        self.max_lattice = int(V.check_rounds("max_lattice", max_lattice, minimum=1024))
        self.lattice_spacing = math.nan
        self.tolerance_met = True
        self.lattice_needed = 0
        self.limit = ""
        self._cache: dict[float, Any] = {}
        # Gaussian-DP central-limit parameter (first guess of epsilon only)
        self._mu = math.sqrt(sum(t * q * q * _expm1_inv_s2(s) for s, q, t in segs))

    # ---- lattice --------------------------------------------------------------------
    def _build(self, h: float) -> list[tuple[Any, float, Any, float, float]]:
        """Per direction: (upper HockeyStick, upper additive, lower _PairTail, P error, R error)."""
        T = self.steps
        tail = _TAIL / T
        steps_obj = [(_Step(s, q, h, tail), t) for s, q, t in self.segments]
        out = []
        for direction in ("remove", "add"):
            up_acc: tuple[int, FArr] | None = None
            p_acc: tuple[int, FArr] | None = None
            r_acc: tuple[int, FArr] | None = None
            err_up = err_p = err_r = 0.0
            log_fin = 0.0  # log P[no step at +inf]
            offset = 0.0  # composed Q(K) = e^{-(K + offset) h} R(K)
            for st, t in steps_obj:
                (ju, pu, inf), (jl, pp, rr, cc) = st.remove() if direction == "remove" else st.add()
                offset += t * cc
                log_fin += t * math.log1p(-min(inf, 1.0)) if inf < 1.0 else -math.inf
                su, gu, eu = compose(ju, pu, t, _TAU, self.max_lattice)
                sp, gp, ep = compose(jl, pp, t, _TAU, self.max_lattice)
                sr, gr, er = compose(jl, rr, t, _TAU, self.max_lattice)
                up_acc, err_up = _conv(up_acc, (su, gu), err_up, eu, self.max_lattice)
                p_acc, err_p = _conv(p_acc, (sp, gp), err_p, ep, self.max_lattice)
                r_acc, err_r = _conv(r_acc, (sr, gr), err_r, er, self.max_lattice)
            assert up_acc is not None and p_acc is not None and r_acc is not None
            hs = HockeyStick(up_acc[0], up_acc[1], h)
            pt = _PairTail(p_acc[0], p_acc[1], r_acc[0], r_acc[1], h, offset)
            inf_tot = -math.expm1(log_fin)
            out.append((hs, err_up + inf_tot + T * _FLOAT_STEP, pt, err_p + T * _FLOAT_STEP,
                        err_r + T * _FLOAT_STEP))
        return out

    def _lattice(self, h: float) -> list[tuple[Any, float, Any, float, float]]:
        if h not in self._cache:
            self._cache.clear()  # one lattice at a time (windows of up to tens of MB)
            self._cache[h] = self._build(h)
        built: list[tuple[Any, float, Any, float, float]] = self._cache[h]
        return built

    def _delta_at(self, eps: float, h: float) -> tuple[float, float]:
        lo, hi, _, _ = self._delta_parts(eps, h)
        return lo, hi

    def _delta_parts(self, eps: float, h: float) -> tuple[float, float, float, float]:
        """(lower, upper, discretisation gap, error-term gap) at eps; the gaps of the direction giving the upper."""
        lo_all, hi_all = 0.0, 0.0
        disc = errs = 0.0
        for hs, add_up, pt, e_p, e_r in self._lattice(h):
            up_raw = hs(eps)
            v, fac = pt(eps)
            lo_all = max(lo_all, v - e_p - fac * e_r)
            if up_raw + add_up >= hi_all:
                hi_all = up_raw + add_up
                disc, errs = max(up_raw - v, 0.0), add_up + e_p + fac * e_r
        return max(lo_all, 0.0), min(hi_all, 1.0), disc, errs

    def _spacing_for(self, eps_guess: float) -> float:
        # second-order discretisation: the relative eps width behaves like T h^2 / eps
        h = 0.5 * math.sqrt(self.tolerance * max(eps_guess, 1e-2) / self.steps)
        return min(max(h, 1e-8), 0.1 * _MAX_SPACING)

    def _refine(self, query: Callable[[float], tuple[float, float]], at: Callable[[tuple[float, float]], float],
                h: float, trivial: tuple[float, float]) -> tuple[float, float]:
        """Run ``query`` at spacing h, then at finer spacings while the bracket is wider than the tolerance.

        ``at(bracket)`` is the eps where the bracket's delta gap is examined.  Every bracket
        found is certified, so the intersection of all of them is returned; ``trivial`` (the
        whole range) if no window fits in ``max_lattice`` at all.
        """
        best: tuple[float, float] | None = None
        self.tolerance_met = False
        self.lattice_needed = 0
        self.limit = ""
        refinements = coarsenings = 0
        while refinements < 6 and coarsenings < 30:
            try:
                res = query(h)
            except WindowTooLarge as exc:
                self.lattice_needed = max(self.lattice_needed, exc.needed)
                self.limit = "max_lattice"
                if best is not None:
                    break
                # coarsen until the window fits: certified, only wider
                coarsenings += 1
                h *= max(1.1 * exc.needed / self.max_lattice, 1.5)
                if h > _MAX_SPACING:
                    break
                continue
            refinements += 1
            self.lattice_spacing = h
            best = res if best is None else (max(best[0], res[0]), min(best[1], res[1]))
            w = (best[1] - best[0]) / best[1] if best[1] > 0 else 0.0
            if w <= self.tolerance:
                self.tolerance_met = True
                self.limit = ""
                break
            e = at(best)
            if not math.isfinite(e):
                self.limit = "round-off"  # no finite eps has a certified delta <= target
                break
            _, _, disc, errs = self._delta_parts(e, h)
            target = 0.7 * (disc + errs) * self.tolerance / w  # delta gap that would meet it
            if disc <= 0.0:
                self.limit = "round-off"
                break
            # model: spacing h -> r h moves the discretisation gap to disc r^2 and the
            # round-off estimates (window ~ 1/h) to errs r^{-1/2}
            def gap(r: float) -> float:
                return disc * r * r + errs / math.sqrt(r)

            r_best = min((errs / (4.0 * disc)) ** 0.4, 1.0)
            if gap(r_best) <= target:  # the largest r in [r_best, 1] that meets the target
                r_lo, r_hi = r_best, 1.0
                for _ in range(30):
                    r_mid = 0.5 * (r_lo + r_hi)
                    r_lo, r_hi = (r_mid, r_hi) if gap(r_mid) <= target else (r_lo, r_mid)
                r = r_lo
            elif gap(r_best) <= 0.75 * (disc + errs):
                r = r_best  # cannot meet it, but a finer lattice still narrows the bracket
            else:
                self.limit = "round-off"
                break
            h *= min(max(r, 0.1), 0.9)
        return trivial if best is None else best

    # ---- public ---------------------------------------------------------------------
    def delta(self, epsilon: float) -> tuple[float, float]:
        """Certified bracket ``[lower, upper]`` of delta(epsilon).

        Parameters
        ----------
        epsilon : float
            eps >= 0.

        Returns
        -------
        (float, float)
            Lower and upper bound on delta(eps) of the composed mechanism (the larger of the
            two directions).  ``tolerance`` is read as the relative width of this bracket.

        Examples
        --------
        >>> lo, hi = PoissonPLD(1.0, 0.01, 1000).delta(1.0)
        >>> 0.0 < lo <= hi < 0.1
        True
        """
        eps = float(V.check_finite_positive("epsilon", epsilon)) if epsilon != 0 else 0.0
        return self._refine(lambda h: self._delta_at(eps, h), lambda b: eps,
                            self._spacing_for(max(eps, self._mu)), (0.0, 1.0))

    def epsilon(self, delta: float) -> tuple[float, float]:
        """Certified bracket ``[lower, upper]`` of epsilon(delta) (upper may be inf).

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        (float, float)
            ``lower`` (0 or an eps whose certified lower delta is >= ``delta``) and ``upper``
            (an eps whose certified upper delta is <= ``delta``; inf if none was found).

        Examples
        --------
        >>> lo, hi = PoissonPLD(1.0, 0.01, 1000).epsilon(1e-5)
        >>> 1.8 < lo <= hi < 1.85
        True
        """
        d = float(V.check_open_unit("delta", delta))
        guess = float(_gdp_epsilon(d, self._mu)) if self._mu > 0 else 1.0
        if not math.isfinite(guess):
            guess = 1.0

        def query(h: float) -> tuple[float, float]:
            return invert(lambda e: self._delta_at(e, h), d)

        return self._refine(query, lambda b: b[1], self._spacing_for(guess), (0.0, math.inf))


def _expm1_inv_s2(s: float) -> float:
    return math.expm1(min(1.0 / (s * s), 700.0))


def _check_segment(sigma: Any, q: Any, t: Any, prefix: str) -> tuple[float, float, int]:
    s = float(V.check_finite_positive(prefix + "noise_multiplier", sigma))
    qa = V.as_float_array(prefix + "sample_rate", q)
    with np.errstate(invalid="ignore"):
        V.check(prefix + "sample_rate", qa, (qa > 0) & (qa <= 1), "in (0, 1]")
    steps = int(V.check_rounds(prefix + "steps", t, minimum=1))
    return s, float(qa), steps


def _conv(acc: tuple[int, FArr] | None, new: tuple[int, FArr], e_acc: float, e_new: float,
          max_lattice: int) -> tuple[tuple[int, FArr], float]:
    if acc is None:
        return new, e_new
    j, g, e = convolve(acc, new)
    return (j, g), e_acc + e_new + e


# ---------------------------------------------------------------------------------------
# TEMPORARY private copy of the shared lattice/inversion helpers (accountant._lattice,
# accountant._invert); replaced by imports when the accountant package lands.
# ---------------------------------------------------------------------------------------
def compose(jmin: int, pmf: FArr, E: int, tau: float, max_lattice: int) -> tuple[int, FArr, float]:
    k = np.arange(pmf.size, dtype=float)
    tot = float(pmf.sum())
    mean = float(np.sum(k * pmf)) / tot
    var = float(np.sum((k - mean) ** 2 * pmf)) / tot
    lam = np.logspace(-6, 0, 31) / max(math.sqrt(var), 1.0)
    kc = k - mean
    pm = np.maximum(pmf, 1e-150)
    lmgf_p = np.array([math.log(float(np.sum(np.exp(np.clip(l * kc, -300.0, 700.0)) * pm))) for l in lam])
    lmgf_m = np.array([math.log(float(np.sum(np.exp(np.clip(-l * kc, -300.0, 700.0)) * pm))) for l in lam])
    log_tau = math.log(tau)
    a_hi = float(np.min((E * lmgf_p - log_tau) / lam))
    a_lo = float(np.min((E * lmgf_m - log_tau) / lam))
    span = E * (pmf.size - 1)
    lo_i = max(0.0, E * mean - a_lo)
    hi_i = min(float(span), E * mean + a_hi)
    L = int(2 ** math.ceil(math.log2(max(hi_i - lo_i + pmf.size + 2, 16))))
    if L >= span + 1:
        L = int(2 ** math.ceil(math.log2(span + 1)))
        s0 = 0
        outside = 0.0
    else:
        s0 = int(math.floor(lo_i))
        outside = 2.0 * tau
    if L > max_lattice:
        raise WindowTooLarge(int(hi_i - lo_i + pmf.size + 2))
    f = np.fft.rfft(pmf, n=L)
    f **= E
    g = np.fft.irfft(f, n=L)
    del f
    shift = s0 % L
    g = np.roll(g, -shift)
    err_fft = 4e-16 * math.log2(L) * E * math.sqrt(L)
    return E * jmin + s0, g, outside + err_fft


class WindowTooLarge(Exception):
    def __init__(self, needed: int):
        super().__init__(needed)
        self.needed = needed


class HockeyStick:
    def __init__(self, s0: int, g: NDArray[np.float64], delta_l: float):
        k0 = max(0, 1 - s0)
        self.j0 = s0 + k0
        self.delta_l = delta_l
        gk = g[k0:]
        self.t1 = np.cumsum(gk[::-1])[::-1]
        w = np.arange(gk.size, dtype=float)
        w += self.j0
        w *= -delta_l
        np.exp(w, out=w)
        w *= gk
        t2 = np.cumsum(w[::-1], out=w)[::-1]
        n = int(np.searchsorted(-self.t1, -1e-30, side="right")) + 1
        n = min(n, self.t1.size)
        self.dropped = 1e-30 if n < self.t1.size else 0.0
        self.t1 = np.array(self.t1[:n])
        self.t2 = np.array(t2[:n])

    def __call__(self, eps: float) -> float:
        j = math.floor(eps / self.delta_l) + 1
        while (j - 1) * self.delta_l > eps:
            j -= 1
        while j * self.delta_l <= eps:
            j += 1
        k = max(j - self.j0, 0)
        if k >= self.t1.size:
            return self.dropped
        return float(self.t1[k] - math.exp(eps) * self.t2[k]) + self.dropped


def convolve(a: tuple[int, FArr], b: tuple[int, FArr]) -> tuple[int, FArr, float]:
    ja, pa = a
    jb, pb = b
    n = pa.size + pb.size - 1
    L = 1 << max(4, (n - 1).bit_length())
    g = np.fft.irfft(np.fft.rfft(pa, L) * np.fft.rfft(pb, L), L)[:n]
    err = 4e-16 * math.log2(L) * math.sqrt(L) * float(np.sum(pa)) * float(np.sum(pb))
    return ja + jb, g, err


def invert(fn: Callable[[float], tuple[float, float]], d: float) -> tuple[float, float]:
    cache: dict[float, tuple[float, float]] = {}

    def f(e: float) -> tuple[float, float]:
        if e not in cache:
            cache[e] = fn(e)
        return cache[e]

    if f(0.0)[1] <= d:
        return 0.0, 0.0
    a, b = 0.0, 1.0
    while sum(f(b)) / 2 > d:
        a, b = b, 2 * b
        if b > 256:
            return (a if f(a)[0] >= d else 0.0), math.inf

    def g(e: float) -> float:
        m = sum(f(e)) / 2
        return math.log(max(m, 1e-300)) - math.log(d)

    ga, gb = g(a), g(b)
    side = 0
    root = math.nan
    for _ in range(60):
        c = (a * gb - b * ga) / (gb - ga) if gb != ga else 0.5 * (a + b)
        if not (a < c < b):
            c = 0.5 * (a + b)
        gc = g(c)
        fc = f(c)
        if abs(gc) <= 0.05 * (fc[1] - fc[0]) / max(sum(fc) / 2, 1e-300):
            root = c
            break
        if gc > 0:
            a, ga = c, gc
            if side == 1:
                gb /= 2
            side = 1
        else:
            b, gb = c, gc
            if side == -1:
                ga /= 2
            side = -1
        if b - a <= 1e-13 * b:
            break
    if not math.isfinite(root):
        root = 0.5 * (a + b)
    fa, fb, fr = f(a), f(b), f(root)
    slope = abs(sum(fa) - sum(fb)) / (2.0 * (b - a)) if b > a else 0.0
    step0 = max(1e-12 * root, 1e-15)
    if slope > 0.0 and math.isfinite(slope):
        step0 = max(step0, 0.6 * (fr[1] - fr[0]) / slope)
    step = step0
    e_up = root
    for _ in range(200):
        if f(e_up)[1] <= d:
            break
        e_up += step
        step *= 2
        if e_up > 1000.0:
            e_up = math.inf
            break
    else:
        e_up = math.inf
    step = step0
    e_lo = root
    for _ in range(200):
        if e_lo <= 0:
            e_lo = 0.0
            break
        if f(e_lo)[0] >= d:
            break
        e_lo = max(e_lo - step, 0.0)
        step *= 2
    return float(e_lo), float(e_up)
