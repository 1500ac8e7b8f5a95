"""Certified privacy-loss distribution of Poisson-subsampled Gaussian DP-SGD (private).

Public class: :class:`PoissonPLD`.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds._result import PrivacyBracket
from dpbounds._ufuncs import ndtr as _ndtr  # type: ignore[import-not-found, unused-ignore]
from dpbounds.accountant._cache import cached
from dpbounds.accountant._gdp import gdp_epsilon as _gdp_epsilon
from dpbounds.accountant._invert import invert
from dpbounds.accountant._lattice import HockeyStick, WindowTooLarge, compose, convolve
from dpbounds.accountant._params import check_max_lattice

FArr = NDArray[np.float64]

__all__ = ["PoissonPLD"]

_ULP = 2.220446049250313e-16
# Per-step allowance for the floating-point error of the cell masses (ndtr accurate to a few
# ulp, differences taken on the side where they do not cancel, the split of each cell): an
# estimate, not a certified bound; see the notes of PoissonPLD.
_FLOAT_STEP = 64.0 * _ULP
_TAU = 1e-14  # Chernoff level of the composition windows (each side)
_TAIL = 1e-28  # mass of each normal left beyond the outermost cells, over all steps
_MAX_GAP = 1 << 22  # longest run of empty lattice points kept inside a single-step PMF
_MAX_SPACING = 0.5  # coarsest lattice tried when the window does not fit


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
        # (losses above 700 -- sigma below ~0.03 -- are left to the top tail: e^{k h} stays finite)
        self.k_hi = min(math.ceil(_loss(sigma, q, 1.0 + z * sigma) / h), math.floor(700.0 / h))
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
        # lower pair: the masses beyond the cells are merged into the outermost cells (any
        # merging is a post-processing), not dropped
        pl, ql = self._merged_tails(p, a0, (1.0 - q) * self.bot0 + q * self.bot1, self.bot0, inf, self.top0)
        k = np.arange(self.k_lo, self.k_hi, dtype=np.float64)
        r, cc = _tilt(ql, k, h)
        return (self.k_lo, up, inf), (self.k_lo, pl, r, cc)

    @staticmethod
    def _merged_tails(p: FArr, qm: FArr, p_bot: float, q_bot: float, p_top: float,
                      q_top: float) -> tuple[FArr, FArr]:
        pl, ql = p.copy(), qm.copy()
        pl[0] += p_bot
        ql[0] += q_bot
        pl[-1] += p_top
        ql[-1] += q_top
        return pl, ql

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
        # lower pair (P = N(0, s^2), Q = mixture), the masses beyond the cells merged in
        pl, ql = self._merged_tails(a0, p, self.bot0, (1.0 - q) * self.bot0 + q * self.bot1,
                                    self.top0, (1.0 - q) * self.top0 + q * self.top1)
        r, cc = _tilt(ql[::-1], -(k[::-1] + 1.0), h)
        return (-self.k_hi, up, inf), (-self.k_hi, pl[::-1].copy(), r, cc)


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

    Stored from the first index with loss >= -3 h up to where the P tail falls below 1e-30
    (beyond it 0 is the lower bound): the P tail sums ``A``, the discounted R tail sums
    ``Bt(K) = sum_{K' >= K} e^{-(K' - K) h} R(K') = e^{(K + offset) h} sum_{K' >= K} Q(K')``
    (no underflow at large losses) and ``d = log(P / R) = lambda_K - (K + offset) h``.
    """

    def __init__(self, sp: int, gp: FArr, sr: int, gr: FArr, h: float, offset: float):
        self.h, self.offset = h, offset
        k0 = max(math.floor(-offset) - 3, min(sp, sr))  # losses >= -3 h: all eps >= 0 can use
        n = max(max(sp + gp.size, sr + gr.size) - k0, 1)
        self.k0 = k0
        a = np.zeros(n)
        _place(a, k0, sp, gp)
        A = np.cumsum(a[::-1])[::-1]
        keep = min(int(np.searchsorted(-A, -1e-30, side="right")) + 1, n)
        self.A = np.array(A[:keep])
        del A
        r = np.zeros(n)
        _place(r, k0, sr, gr)
        self.Bt = _discounted_tail(r, h)[:keep].copy()
        a, r = a[:keep], r[:keep]
        with np.errstate(divide="ignore", invalid="ignore"):
            ok = (a > 1e-300) & (r > 1e-300)
            d = np.log(np.where(ok, a, 1.0)) - np.log(np.where(ok, r, 1.0))
        d[~ok] = np.nan
        self.d = d

    def _lam(self, k: int) -> float:
        """lambda_K - (K + offset) h at index K (nan where not usable)."""
        i = k - self.k0
        return float(self.d[i]) if 0 <= i < self.d.size else math.nan

    def __call__(self, eps: float) -> tuple[float, float]:
        """(value, factor): the lower value and the largest e^{eps - (K + offset) h} over the splits tried."""
        h, offset = self.h, self.offset
        # first K with (K + offset) h > eps, inside the stored range (below it P and Q hold no
        # mass, so a split there equals the split at its first index)
        k = min(max(math.floor(eps / h - offset) + 1, self.k0), self.k0 + self.A.size - 1)
        for _ in range(6):  # follow lambda_K (fixed-point steps)
            off = self._lam(k)
            if math.isnan(off):
                break
            k_new = min(max(math.floor((eps - off) / h - offset) + 1, self.k0), self.k0 + self.A.size - 1)
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
        log_fac = max(eps - (max(k - 2, self.k0) + offset) * h, 0.0)
        if log_fac > 700.0:  # the error factor is not representable: 0 is the (valid) lower bound
            return 0.0, 1.0
        best = 0.0
        for kk in range(max(k - 2, self.k0), k + 3):
            i = kk - self.k0
            if 0 <= i < self.A.size:
                # e^eps sum_{K' >= kk} Q(K') = e^{eps - (kk + offset) h} Bt(kk)
                x = eps - (kk + offset) * h
                bt = float(self.Bt[i])
                if x < 700.0:
                    best = max(best, float(self.A[i]) - math.exp(x) * bt)
                elif bt <= 0.0:  # Bt is 0 up to round-off (covered by the error terms)
                    best = max(best, float(self.A[i]))
        return best, math.exp(log_fac)


def _discounted_tail(r: FArr, h: float) -> FArr:
    """t[i] = sum_{j >= i} e^{-(j - i) h} r[j], in blocks short enough that e^{h m} stays finite."""
    n = r.size
    t = np.empty(n)
    m = max(1, min(n, int(600.0 / h)))  # block length: e^{h m} <= e^600
    carry = 0.0  # t at the start of the following block
    for s0 in range(((n - 1) // m) * m, -1, -m):
        s1 = min(s0 + m, n)
        w = np.exp(-h * np.arange(s1 - s0, dtype=np.float64))  # e^{-(j - s0) h}, >= e^{-600}
        c = np.cumsum((r[s0:s1] * w)[::-1])[::-1] / w  # within-block discounted tail
        c += carry * np.exp(-h * (s1 - np.arange(s0, s1, dtype=np.float64)))
        t[s0:s1] = c
        carry = float(c[0])
    return t


def _place(dst: FArr, k0: int, s: int, g: FArr) -> None:
    lo = max(s, k0)
    hi = min(s + g.size, k0 + dst.size)
    if hi > lo:
        dst[lo - k0:hi - k0] += g[lo - s:hi - s]


# ---------------------------------------------------------------------------------------
# public class
# ---------------------------------------------------------------------------------------
_Lattice = list[tuple[HockeyStick, float, _PairTail, float, float]]


class _Refined(NamedTuple):
    bracket: tuple[float, float]
    note: str
    spacing: float  # nan if no lattice fitted
    needed: int  # window a tighter lattice asked for (0 if it fitted)


class PoissonPLD:
    """Privacy-loss distribution of Poisson-subsampled Gaussian steps, certified brackets.

    Add/remove-one neighbours, sensitivity 1, Gaussian noise N(0, s^2) per step (s the noise
    multiplier) and Poisson sampling with rate q.  Remove direction:
    P = (1 - q) N(0, s^2) + q N(1, s^2) against Q = N(0, s^2), privacy loss
    L(x) = log(1 - q + q e^{(2x - 1)/(2 s^2)}) under x ~ P; add direction: loss -L(x) under
    x ~ N(0, s^2).  delta(eps) of the composition is the larger of the two directions'
    hockey-stick divergences.

    Parameters
    ----------
    noise_multiplier : float
        s, finite and > 0.
    sample_rate : float
        q in (0, 1].
    steps : int
        Number of steps T >= 1.
    tolerance : float, optional
        Target relative width ``(upper - lower) / upper`` of the brackets, in (0, 1)
        (default 2e-3): of the epsilon bracket for :meth:`epsilon`, of the delta bracket
        for :meth:`delta`.
    max_lattice : int, optional
        Largest composition window in lattice points (default 2**21, 16 MiB per array); at
        most 2**26 (~3 GiB peak), larger values raise DPBoundsError naming it.

    Attributes
    ----------
    lattice_spacing : float
        Loss-lattice spacing of the last query's final lattice.
    lattice_needed : int
        Window (lattice points) that the last query's tolerance asked for when it exceeded
        ``max_lattice`` (0 otherwise).

    Notes
    -----
    The x line is cut where the remove-direction loss crosses the lattice h Z (L increases
    with x), so every cell's loss lies within one lattice step; cell masses of N(0, s^2) and
    N(1, s^2) are differences of the normal CDF (``ndtr``, on the side where they do not
    cancel).

    * Upper bound: each cell's mass is split between the two lattice points around it so that
      both its P and its Q mass are kept (the "connect the dots" construction of Doroshenko
      et al., "Connect the dots: tighter discrete approximations of privacy loss
      distributions").  The split pair dominates the cell (the cell is a post-processing of
      it), so the composed hockey-stick divergence of the lattice PLD is an upper bound; its
      error is of second order in h.  Mass beyond the outermost cells goes to +inf loss, or to
      the upper end of its loss range where that is finite (remove direction below the cells:
      loss >= log(1 - q); add direction: loss <= -log(1 - q)).
    * Lower bound: the pair of cell masses (P(cell), Q(cell)) is a post-processing of the
      step, and so is the composed pair merged by the sum of the cells' lattice indices; its
      hockey-stick divergence sum_K (P(K) - e^eps Q(K))^+ is at least every partial sum over
      K >= K*.  Q is composed tilted by e^{(k + c) h} (c normalising the tilted masses), so
      its round-off is not magnified by e^eps.  Mass beyond the outermost cells is merged
      into them (a post-processing too).
    * Composition: one FFT power of each single-step PMF on a window that holds all but 1e-14
      of the mass on each side (Chernoff bounds of the lattice law; Koskela, Jälkö, Honkela:
      "Computing tight differential privacy guarantees using FFT"); segments of a
      heterogeneous history by convolution.

    Certified (in exact arithmetic): the discretisation of both directions, the mass beyond
    the cells and the composition window's tails.  Estimated, not proved: the FFT round-off
    (the shared composition's error model, added to the upper and subtracted from the lower
    bound) and the floating-point error of the cell masses (64 ulp per step and bound).  The
    FFT estimate grows like T sqrt(window) and sets the smallest delta that can be certified
    (about 2e-8 at T = 1e4); :meth:`epsilon` raises ``ValueError`` below it.

    The lattice spacing comes from a first epsilon guess (the Gaussian-DP central limit
    mu = q sqrt(T (e^{1/s^2} - 1))) and is refined while the bracket is wider than the
    tolerance, the window fits in ``max_lattice`` and the refinement narrows the bracket
    (a finer window raises the round-off estimate).  A bracket that misses the tolerance says
    why in its ``note`` (``tolerance_met`` is False; :meth:`epsilon` also issues a
    :class:`dpbounds.PrecisionWarning`).

    Examples
    --------
    >>> from dpbounds.accountant import PoissonPLD
    >>> acc = PoissonPLD(1.0, 0.01, 1000)
    >>> eps = acc.epsilon(1e-5)
    >>> 1.82 < eps.lower <= eps.upper < 1.84 and eps.tolerance_met
    True
    >>> d = acc.delta(1.0)
    >>> 0.0 < d.lower <= d.upper < 0.01
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
            ``(noise_multiplier, sample_rate, steps)`` of each run of identical steps, in any
            order (composition commutes).
        tolerance, max_lattice
            As for the constructor.

        Returns
        -------
        PoissonPLD

        Examples
        --------
        >>> from dpbounds.accountant import PoissonPLD
        >>> acc = PoissonPLD.from_segments([(1.0, 0.01, 500), (1.5, 0.02, 500)])
        >>> eps = acc.epsilon(1e-5)
        >>> 1.89 < eps.lower <= eps.upper < 1.91
        True
        """
        segs = list(segments)
        if not segs:
            raise DPBoundsError("segments must hold at least one (noise_multiplier, sample_rate, steps)")
        checked = []
        for i, seg in enumerate(segs):
            try:
                sg, qq, tt = seg
            except (TypeError, ValueError):
                raise DPBoundsError(f"segments[{i}] must be a (noise_multiplier, sample_rate, steps) "
                                 f"tuple, got {seg!r}") from None
            checked.append(_check_segment(sg, qq, tt, f"segments[{i}]."))
        self = cls.__new__(cls)
        self._init(checked, tolerance, max_lattice)
        return self

    def _init(self, segs: list[tuple[float, float, int]], tolerance: float, max_lattice: int) -> None:
        self.segments = tuple(segs)
        self.steps = sum(t for _, _, t in segs)
        self.tolerance = V.check_scalar("tolerance", tolerance, V.Constraint.OPEN_UNIT)
        self.max_lattice = check_max_lattice(max_lattice)
        self.lattice_spacing = math.nan
        self.lattice_needed = 0
        # Gaussian-DP central-limit parameter: first guess of epsilon only
        self._mu = math.sqrt(sum(t * q * q * math.expm1(min(1.0 / (s * s), 700.0)) for s, q, t in segs))

    # ---- lattice --------------------------------------------------------------------
    def _build(self, h: float) -> _Lattice:
        """Per direction: (upper HockeyStick, upper additive term, lower _PairTail, P error, R error)."""
        T = self.steps
        steps = [(_Step(s, q, h, _TAIL / T), t) for s, q, t in self.segments]
        out = []
        for direction in ("remove", "add"):
            up_acc: tuple[int, FArr] | None = None
            p_acc: tuple[int, FArr] | None = None
            r_acc: tuple[int, FArr] | None = None
            err_up = err_p = err_r = 0.0
            log_fin = 0.0  # log P[no step at +inf loss]
            offset = 0.0  # composed Q(K) = e^{-(K + offset) h} R(K)
            for st, t in steps:
                (ju, pu, inf), (jl, pp, rr, cc) = st.remove() if direction == "remove" else st.add()
                offset += t * cc
                log_fin += t * math.log1p(-inf) if inf < 1.0 else -math.inf
                up_acc, err_up = _conv(up_acc, compose(ju, pu, t, _TAU, self.max_lattice), err_up)
                p_acc, err_p = _conv(p_acc, compose(jl, pp, t, _TAU, self.max_lattice), err_p)
                r_acc, err_r = _conv(r_acc, compose(jl, rr, t, _TAU, self.max_lattice), err_r)
            assert up_acc is not None and p_acc is not None and r_acc is not None
            hs = HockeyStick(up_acc[0], up_acc[1], h)
            pt = _PairTail(p_acc[0], p_acc[1], r_acc[0], r_acc[1], h, offset)
            fl = T * _FLOAT_STEP
            out.append((hs, err_up - math.expm1(log_fin) + fl, pt, err_p + fl, err_r + fl))
        return out

    def _lattice(self, h: float) -> _Lattice:
        key = ("poisson-pld", self.segments, h, self.max_lattice)
        return cached(key, lambda: self._build(h))

    def _delta_parts(self, eps: float, h: float) -> tuple[float, float, float, float]:
        """(lower, upper, discretisation gap, error-term gap) at eps; gaps of the direction giving the upper."""
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

    def _delta_at(self, eps: float, h: float) -> tuple[float, float]:
        lo, hi, _, _ = self._delta_parts(eps, h)
        return lo, hi

    def _spacing_for(self, eps_guess: float) -> float:
        # second-order discretisation: the relative eps width behaves like T h^2 / eps
        h = 0.5 * math.sqrt(self.tolerance * max(eps_guess, 1e-2) / self.steps)
        return min(max(h, 1e-8), 0.1 * _MAX_SPACING)

    def _refine(self, query: Callable[[float], tuple[float, float]],
                at: Callable[[tuple[float, float]], float], h: float,
                trivial: tuple[float, float]) -> _Refined:
        """Run ``query`` at spacing h, then at finer spacings while the bracket misses the tolerance.

        ``at(bracket)`` is the eps where the delta gap is examined.  Every bracket found is
        certified, so their intersection is returned (``trivial`` if no window fits at all),
        with a note saying why the tolerance was missed ("" if it was met).  Uses no mutable
        state of the object (concurrent queries are safe); the caller publishes the outcome.
        """
        best: tuple[float, float] | None = None
        needed = 0
        spacing = math.nan
        note = ""
        refinements = coarsenings = 0
        disc = errs = 0.0
        while refinements < 6 and coarsenings < 30:
            try:
                res = query(h)
            except WindowTooLarge as exc:
                needed = max(needed, exc.needed)
                note = self._memory_note(needed)
                if best is not None:
                    break
                coarsenings += 1  # coarsen until the window fits: certified, only wider
                h *= max(1.1 * exc.needed / self.max_lattice, 1.5)
                if h > _MAX_SPACING:
                    break
                continue
            refinements += 1
            spacing = h
            best = res if best is None else (max(best[0], res[0]), min(best[1], res[1]))
            w = (best[1] - best[0]) / best[1] if best[1] > 0 else 0.0
            if w <= self.tolerance:
                note = ""
                break
            e = at(best)
            if not math.isfinite(e):
                break
            _, _, disc, errs = self._delta_parts(e, h)
            if note:
                break
            if disc <= 0.0:  # nothing left to refine: the estimated error terms set the width
                if errs > 0.0:
                    note = self._roundoff_note()
                break
            target = 0.7 * (disc + errs) * self.tolerance / w  # delta gap that would meet it
            # model: spacing h -> r h moves the discretisation gap to disc r^2 and the
            # round-off estimates (window ~ 1/h) to errs r^{-1/2}

            def gap(r: float) -> float:
                return disc * r * r + errs / math.sqrt(r)

            # the spacing that minimises the gap (coarser than h when round-off dominates)
            r_best = (errs / (4.0 * disc)) ** 0.4
            if gap(r_best) <= target:  # the largest r that meets the target: fewest points
                r_lo, r_hi = r_best, 2.0 * r_best
                while gap(r_hi) <= target:
                    r_lo, r_hi = r_hi, 2.0 * r_hi
                for _ in range(30):
                    r_mid = 0.5 * (r_lo + r_hi)
                    r_lo, r_hi = (r_mid, r_hi) if gap(r_mid) <= target else (r_lo, r_mid)
                r = r_lo
            elif gap(r_best) <= 0.75 * (disc + errs):
                r = r_best  # cannot meet it, but another lattice still narrows the bracket
            else:
                note = self._roundoff_note()
                break
            h *= min(max(r, 0.1), 8.0)
        else:
            if best is not None and not note:
                note = (self._roundoff_note() if errs >= disc else
                        f"the refinement stopped after {refinements} lattices "
                        f"(last spacing {spacing:.3g})")
        return _Refined(trivial if best is None else best, note, spacing, needed)

    def _memory_note(self, n: int) -> str:
        return (f"meeting the tolerance needs a composition window of about {n:,} lattice points "
                f"(~{n * 8 * 6 / 2 ** 20:,.0f} MB peak), above max_lattice={self.max_lattice:,}; "
                "pass a larger max_lattice to tighten it")

    def _roundoff_note(self) -> str:
        return ("the width comes from the estimated FFT round-off of the composition "
                f"({self.steps} steps), which grows with the window: no lattice spacing "
                "narrows it further")

    def _bracket(self, res: _Refined, quantity: str, at: float, warn: bool) -> PrivacyBracket:
        self.lattice_spacing, self.lattice_needed = res.spacing, res.needed  # reported only
        return PrivacyBracket(
            res.bracket[0], res.bracket[1], quantity=quantity, at=at, tolerance=self.tolerance,
            method=(f"exact Poisson-subsampled Gaussian PLD (loss lattice of spacing "
                    f"{res.spacing:.3g} composed over {self.steps} steps by FFT)"),
            certified=("cell discretisation (connect-the-dots split up, merged cell pair down), "
                       "mass beyond the cells, composition window tails"),
            estimated="FFT round-off of the composition; floating-point error of the cell masses",
            note=res.note, warn=warn)

    # ---- public ---------------------------------------------------------------------
    def delta(self, epsilon: float) -> PrivacyBracket:
        """Certified bracket ``[lower, upper]`` of delta(epsilon).

        Parameters
        ----------
        epsilon : float
            eps >= 0.

        Returns
        -------
        PrivacyBracket
            ``(lower, upper)`` bounds on delta(eps) of the composition (the larger of the two
            directions); ``tolerance`` is read as the relative width of this bracket, and
            ``note`` says why it was missed, if it was (no warning is issued).

        Examples
        --------
        >>> from dpbounds.accountant import PoissonPLD
        >>> lo, hi = PoissonPLD(1.0, 0.01, 1000).delta(1.0)
        >>> 0.0 < lo <= hi < 0.01
        True
        """
        eps = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_NONNEGATIVE) + 0.0  # -0.0 -> 0.0
        res = self._refine(lambda h: self._delta_at(eps, h), lambda b: eps,
                           self._spacing_for(max(eps, self._mu)), (0.0, 1.0))
        return self._bracket(res, "delta", eps, warn=False)

    def epsilon(self, delta: float) -> PrivacyBracket:
        """Certified bracket ``[lower, upper]`` of epsilon(delta).

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        PrivacyBracket
            ``lower`` (0, or an eps whose certified lower delta is >= ``delta``) and ``upper``
            (an eps whose certified upper delta is <= ``delta``).  Issues a
            :class:`dpbounds.PrecisionWarning` where the bracket misses ``tolerance``.

        Raises
        ------
        ValueError
            Where no finite epsilon can be certified: ``delta`` below the bracket's numerical
            error terms, or epsilon beyond 1e4.

        Examples
        --------
        >>> from dpbounds.accountant import PoissonPLD
        >>> lo, hi = PoissonPLD(1.0, 0.01, 1000).epsilon(1e-5)
        >>> 1.82 < lo <= hi < 1.84
        True
        """
        d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
        guess = float(_gdp_epsilon(d, self._mu)) if self._mu > 0 else 1.0
        if not math.isfinite(guess):
            guess = 1.0
        res = self._refine(lambda h: invert(lambda e: self._delta_at(e, h), d),
                           lambda b: b[1], self._spacing_for(guess), (0.0, math.inf))
        if not math.isfinite(res.bracket[1]):
            if not math.isfinite(res.spacing):
                raise DPBoundsError(f"no finite epsilon can be certified at delta={d:g}: no loss lattice "
                                 f"of spacing <= {_MAX_SPACING:g} fits: {res.note}")
            self._raise_unbounded(d, res.spacing)
        return self._bracket(res, "epsilon", d, warn=True)

    def _raise_unbounded(self, d: float, spacing: float) -> None:
        lo, hi = self._delta_at(1e4, spacing)
        if lo >= d:
            raise DPBoundsError(
                f"no finite epsilon can be certified at delta={d:g}: epsilon exceeds 1e4 "
                f"(certified delta(1e4) >= {lo:.3g}; the noise gives almost no privacy over "
                f"{self.steps} steps)")
        raise DPBoundsError(
            f"no finite epsilon can be certified at delta={d:g}: the certified delta bracket "
            f"cannot go below {hi:.3g} here (estimated FFT round-off of {self.steps} steps, "
            f"window tails); " + (f"ask for delta >= {10 * hi:.1g}" if 10 * hi < 1 else
                                  "no delta below 1 can be certified at these parameters: use fewer steps or more noise"))


def _check_segment(sigma: Any, q: Any, t: Any, prefix: str) -> tuple[float, float, int]:
    s = V.check_scalar(prefix + "noise_multiplier", sigma, V.Constraint.FINITE_POSITIVE)
    qa = V.check_rate(prefix + "sample_rate", q)
    steps = V.check_count(prefix + "steps", t, minimum=1)
    return s, qa, steps


def _conv(acc: tuple[int, FArr] | None, new: tuple[int, FArr, float],
          e_acc: float) -> tuple[tuple[int, FArr], float]:
    """Accumulate a composed segment (jmin, pmf, error) into a running convolution."""
    if acc is None:
        return (new[0], new[1]), new[2]
    j, g, e = convolve(acc, (new[0], new[1]))
    return (j, g), e_acc + new[2] + e
