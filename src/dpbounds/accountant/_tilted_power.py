"""Convolution powers of lattice PMFs with a rigorous round-off bound, in the exponentially tilted domain (private).

Used by the Poisson accountant (:class:`~dpbounds.accountant.PoissonPLD`).

Why tilt.  A convolution power computed by FFT carries a round-off error that is absolute, of
the order of ``E u log2(L)`` times the largest composed mass (``E`` the power, ``u`` the unit
round-off, ``L`` the window).  A privacy-loss tail of 1e-7 that spans thousands of lattice
points is then swamped as the lattice gets finer.  Composing instead the tilted PMF
``p_j e^{theta j} / M(theta)`` (``M`` its mass) and untilting the result,
``g_l = g~_l M^E e^{-theta l}``, makes the error relative to the tilted law's mass *near the
tail of interest*: with ``theta`` at the saddle point of that tail (the tilted law centred
there) the relative error of a tail sum is about ``E u log2(L)``, whatever the lattice and the
tail probability.

What is bounded, and how (each term is computed from the data, not estimated):

* forward FFT of each folded tilted PMF ``x``: every coefficient within
  ``a = FFT_LEVEL u (log2 L + 2) ||x||_1`` of the exact DFT -- the per-coefficient form of the
  Cooley-Tukey error analysis (Higham, *Accuracy and Stability of Numerical Algorithms*,
  section 24.1): the error added by one radix pass is at most a few ``u`` times the l1 norm of
  the sub-transforms it combines, and the sub-transforms of one pass partition ``x``;
* the power by repeated squaring: ``|x^E - y^E| <= E |x - y| max(|x|, |y|)^(E-1)`` for the
  propagated forward error, and a relative ``(1 + sqrt(5) u)^(E - 1) - 1`` for the products'
  own rounding (the error bound of a complex product, Brent, Percival and Zimmermann);
* the inverse FFT: ``FFT_LEVEL u (log2 L + 2)`` times the l1 norm of the spectrum over ``L``
  per output entry, plus ``1/L`` times the summed spectral error;
* the window: the tilted mass outside it (Chernoff bounds of the tilted law: below the
  window, above it, and so far above it that it wraps onto the queried part) and the mass
  trimmed from each PMF's ends; each is charged, untilted, at the largest weight the
  untilting gives where it may land.

Not bounded here: the error of the input PMFs themselves (the caller's).

:class:`Composed` holds the tilted result with ``beta`` (a bound on every entry's error) and
the misplaced masses ``cut``, ``tau_lo``, ``tau_hi``, ``tau_wrap``; :class:`TailSums` turns it
into untilted tail sums with a per-query bound.  :class:`Plan` is the window without the FFT,
to compare tilts by their cost.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np
from numpy.typing import NDArray

from dpbounds._kernels import tail_sums as _tail_sums  # type: ignore[import-not-found, unused-ignore]
from dpbounds.accountant._lattice import WindowTooLarge, fft_size

FArr = NDArray[np.float64]

__all__ = ["Composed", "Plan", "TailSums", "TiltFamily", "compose_tilted", "compose_plan", "plan_tilted", "saddle_tilt",
           "fft_error_level", "FFT_LEVEL", "UNIT_ROUNDOFF"]

UNIT_ROUNDOFF = 2.0 ** -53
#: Error constant per radix-2 level of the FFT error bound (in units of the unit round-off).
#: A radix-2 butterfly adds at most (sqrt(5) + 2) u (complex product with an accurately rounded
#: twiddle, one complex addition) times its operands' l1 norm; radix 3, 4 and 5 passes add at
#: most about 3.5 u per level they stand for.  8 leaves a margin of 2 over the worst pass.
FFT_LEVEL = 8.0
_SQRT5U = math.sqrt(5.0) * UNIT_ROUNDOFF
_LOG_TINY = -740.0  # exp below this is (sub)normal dust, bounded by 1e-300 per coefficient
_MAX_EXP = 700.0
_DUST = 1e-300  # absolute slack for subnormal arithmetic in the tail sums
_CH_SLACK = 1.0 + 1e-6  # Chernoff bounds raised for the rounding of their sums
_SEARCH_POINTS = 1024  # size of the coarser copies the Chernoff parameters are searched on


def _dot(a: FArr, b: FArr) -> float:
    """sum a * b in numpy's own loop (BLAS ddot spawns threads that are slow on a loaded machine)."""
    return float(np.einsum("i,i->", a, b))


def fft_error_level(n: int) -> float:
    """Per-coefficient FFT error bound of a length-``n`` transform, relative to the input's l1 norm."""
    return FFT_LEVEL * UNIT_ROUNDOFF * (math.log2(max(n, 2)) + 2.0)


class Composed(NamedTuple):
    """A composed lattice law in tilted form.

    The composed (untilted) mass at lattice index ``j0 + K`` is
    ``g[K] * exp(log_scale - theta * K)`` up to the error terms: every computed ``g[K]`` is
    within ``beta`` of the exact tilted mass that the window's circular convolution holds
    there, and of the (normalised) tilted composed law, mass at most ``cut`` is missing
    (trimmed), at most ``tau_lo`` lies below the window (aliased to its top), at most
    ``tau_hi`` above it (aliased to its bottom), and at most ``tau_wrap`` so far above that it
    lands at or above index ``kq``.  Those masses are relative to the tilted law; untilted,
    each weighs at most ``exp(log_scale - theta K)`` at the index K where it lands.
    """

    j0: int
    g: FArr
    theta: float
    log_scale: float
    beta: float
    cut: float
    tau_lo: float
    tau_hi: float
    tau_wrap: float
    kq: int
    scale_rel: float  # relative error of the untilted masses (normalisers, tilting, the parts' own rounding)


def _moments(logp: FArr, k: FArr, t: float) -> tuple[float, float]:
    """(mean, variance) of the law proportional to exp(logp + t k)."""
    w = logp + t * k
    w -= float(np.max(w))
    e = np.exp(w)
    z = float(np.sum(e))
    mu = float(np.sum(e * k)) / z
    var = float(np.sum(e * (k - mu) ** 2)) / z
    return mu, var


def _logs(pmf: FArr) -> tuple[FArr, FArr]:
    """(log of the positive masses, their indices as floats)."""
    nz = np.flatnonzero(pmf > 0.0)
    if nz.size == 0:
        return np.zeros(1), np.zeros(1)
    return np.log(pmf[nz]), nz.astype(np.float64)


class TiltFamily:
    """The exponential family of a composed lattice law: mean and variance of its tilts."""

    def __init__(self, parts: Sequence[tuple[int, FArr, int]]):
        self.logs = [(_logs(p), j, e) for j, p, e in parts]
        self.total = sum(e for _, _, e in parts)
        self._untilted: tuple[float, float] | None = None  # mean_var(0.0), asked for more than once

    def mean_var(self, t: float) -> tuple[float, float]:
        if t == 0.0 and self._untilted is not None:
            return self._untilted
        m = v = 0.0
        for (lp, k), j, e in self.logs:
            mu, var = _moments(lp, k, t)
            m += e * (j + mu)
            v += e * var
        if t == 0.0:
            self._untilted = (m, v)
        return m, v

    def saddle(self, target: float, theta_max: float, start: float = 0.0) -> float:
        """theta >= 0 at which the tilted composed law has mean ``target`` (safeguarded Newton)."""
        m0, v0 = self.mean_var(0.0)
        if m0 >= target:
            return 0.0
        lo, hi = 0.0, theta_max
        t, m, v = 0.0, m0, v0
        if 0.0 < start < theta_max:
            t = start
            m, v = self.mean_var(t)
        for _ in range(40):
            if m < target:
                lo = t
            else:
                hi = t
            if abs(m - target) <= 0.05 * math.sqrt(max(v, 1e-300)) + 0.5 or hi - lo <= 1e-9 * max(hi, 1e-3):
                break
            tn = t + (target - m) / v if v > 0.0 else math.inf
            if not (lo < tn < hi):
                tn = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * max(t, 1e-6)
            t = tn
            m, v = self.mean_var(t)
        return min(max(t, 0.0), theta_max)


def saddle_tilt(parts: Sequence[tuple[int, FArr, int]], target: float, theta_max: float,
                start: float = 0.0) -> float:
    """theta >= 0 (per lattice index) at which the tilted composed law has mean ``target``.

    0 where the untilted mean is already at or above ``target``; at most ``theta_max``.  Only
    proposes the tilt: every later bound holds for any theta.
    """
    return TiltFamily(parts).saddle(target, theta_max, start)


class _Part(NamedTuple):
    base: int  # lattice index of x[0]
    x: FArr  # normalised tilted masses (trimmed)
    log_m: float  # log sum_k pmf[k] e^{theta (k - (base - jmin))}: the tilt's normaliser
    times: int  # how many times the part is composed
    cut: float  # tilted mass trimmed from the ends (relative to the normalised law)
    kk: FArr  # the indices of x centred at the tilted mean
    mean: float
    var: float
    rho: float  # relative rounding of each tilted mass (exp of a rounded argument, the division)
    x_s: FArr  # a coarser copy of (x, kk) (blocks merged at their mean) for searching lam
    kk_s: FArr


def _trim_count(x: FArr, trim: float) -> int:
    """How many leading entries of x have a running sum <= trim (np.searchsorted on np.cumsum(x)).

    The running sums are sequential, so those of a prefix are those of the whole array: the
    trimmed ends are short (trim is tiny), and a prefix usually settles the count."""
    m = 256
    while True:
        cs = np.cumsum(x[:m])
        k = int(np.searchsorted(cs, trim, side="right"))
        if k < cs.size or cs.size == x.size:
            return k
        m *= 8


def _tilt_part(jmin: int, pmf: FArr, count: int, theta: float, trim: float, search: bool = True) -> _Part:
    n = pmf.size
    span = theta * (n - 1)
    if span <= 600.0:
        # e^{theta (k - n + 1)} in [e^{-600}, 1]: no logarithms needed
        e = np.arange(n, dtype=np.float64)
        e -= n - 1
        e *= theta
        np.exp(e, out=e)
        e *= pmf
        m = span
        # x_k e^{log_m - theta k} = pmf_k up to the rounding of the exponent and its exp, of
        # the product and of the division (the rounding of z cancels between x and log_m)
        rho = 4.0 * UNIT_ROUNDOFF * (span + 4.0)
    else:
        lp, k = _logs(pmf)
        w = lp + theta * k
        m = float(np.max(w))
        w -= m
        e = np.zeros(n)
        e[k.astype(np.intp)] = np.exp(w)
        # as above, with the rounding of log pmf
        rho = 4.0 * UNIT_ROUNDOFF * (float(np.max(np.abs(lp))) + span + abs(m) + 2.0)
    z = float(e.sum())
    x = e
    x /= z
    log_m = m + math.log(z)  # log sum pmf e^{theta k}, k from jmin
    # trim the ends holding tilted mass <= trim each (cut mass counted in ``cut``)
    a = min(_trim_count(x, trim), n - 1)
    nb = _trim_count(x[::-1], trim)
    b = max(n - nb, a + 1)
    cut = (float(x[:a].sum()) + float(x[b:].sum())) * (1.0 + 1e-12)
    x = x[a:b]
    # the normaliser refers to index a: sum pmf[k] e^{theta (k - a)} = M e^{-theta a}
    log_m -= theta * a
    kk = np.arange(x.size, dtype=np.float64)
    s0 = float(x.sum())
    mu = _dot(x, kk) / s0
    kk -= mu
    var = _dot(x, kk * kk) / s0
    blk = -(-x.size // _SEARCH_POINTS)
    if blk > 1 and search:
        xs = np.concatenate([x, np.zeros((-x.size) % blk)]).reshape(-1, blk)
        ms = xs.sum(axis=1)
        ks = (xs * np.arange(xs.size, dtype=np.float64).reshape(-1, blk)).sum(axis=1)
        ok = ms > 0.0
        xs_, kss = ms[ok], ks[ok] / ms[ok] - mu
    else:
        xs_, kss = x, kk
    return _Part(jmin + a, x, log_m, count, cut, kk, mu, var, rho, xs_, kss)


def _cgf3(parts: list[_Part], lam: float, search: bool = False,
          value_only: bool = False) -> tuple[float, float, float]:
    """The tilted composed law's centred cumulant generating function C(lam) and its first two
    derivatives (of the coarser copies if ``search``: only to choose lam; the derivatives are
    0 if ``value_only``)."""
    c = c1 = c2 = 0.0
    for p in parts:
        x, kk = (p.x_s, p.kk_s) if search else (p.x, p.kk)
        w = lam * kk
        m = float(max(w[0], w[-1]))  # kk is increasing: the largest exponent is at an end
        w -= m
        np.exp(w, out=w)
        w *= x
        z = float(w.sum())
        if not z > 0.0:  # all the mass underflowed: the logarithmic form
            nz = x > 0.0
            lw = np.log(x[nz]) + lam * kk[nz]
            m = float(lw.max())
            w = np.exp(lw - m)
            z = float(w.sum())
            kk = kk[nz]
        c += p.times * (m + math.log(z))
        if value_only:
            continue
        mu = _dot(w, kk) / z
        c1 += p.times * mu
        d = kk - mu
        c2 += p.times * _dot(w, d * d) / z
    return c, c1, c2


def _chernoff(parts: list[_Part], log_inv_tau: float, sign: float, reach: float,
              damp: float, lam_hint: float = 0.0) -> tuple[float, float, float]:
    """(d, lam, log_bound): the tilted composed mass beyond ``d`` from its mean (above for sign =
    +1, below for -1) is at most ``exp(log_bound)``, with ``log_bound - damp d <= -log_inv_tau``
    (d = ``reach``, the support's end, with bound 0 where nothing lies beyond).

    Chernoff: P(sign (S - mean) >= d) <= exp(C(lam) - lam d) for every lam > 0 (C the centred
    cumulant generating function of sign (S - mean)).  The smallest d is
    min over lam of (C(lam) + log_inv_tau) / (lam + damp), at the lam solving
    (lam + damp) C'(lam) - C(lam) = log_inv_tau, found by safeguarded Newton.  Only the choice
    of lam is a search: the bound returned is evaluated at the lam returned.
    """
    var = sum(p.times * p.var for p in parts)
    if var <= 0.0:
        return 0.0, 1.0, -math.inf
    lo, hi = 0.0, math.inf
    lam = math.sqrt(2.0 * log_inv_tau / var)
    if damp > 0.0:
        lam = max(lam - damp, 0.1 * lam)
    best = (math.inf, lam)
    # the search runs on the parts' coarser copies (or takes the lam of a nearly equal law);
    # the bound is then evaluated once on the parts themselves
    for _ in range(0 if lam_hint > 0.0 else 50):
        c, c1, c2 = _cgf3(parts, sign * lam, search=True)
        c1 *= sign  # derivative with respect to lam of C(sign lam)
        d = (c + log_inv_tau) / (lam + damp)
        if d < best[0]:
            best = (d, lam)
        phi = (lam + damp) * c1 - c - log_inv_tau
        if abs(phi) <= 0.01 * log_inv_tau:
            break
        if phi < 0.0:
            lo = lam
        else:
            hi = lam
        # Newton on phi, or, far above the root (a heavy right tail: phi grows about
        # exponentially in lam, and a plain Newton step gains one e-fold), on log(phi + a)
        # (phi + a > 0 increases from 0 at lam = 0), which steps over all of them at once
        dphi = (lam + damp) * c2
        if not dphi > 0.0:
            nxt = math.inf
        elif phi > log_inv_tau:
            nxt = lam - math.log1p(phi / log_inv_tau) * (phi + log_inv_tau) / dphi
        else:
            nxt = lam - phi / dphi
        # a Newton step off to ~1e300 (c2 tiny: mass left at the support's end) would overflow
        # lam * k; doubling reaches any useful lam long before 1e200
        if not (lo < nxt < min(hi, 1e200)):
            nxt = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * lam
        if lam > 1e300 or abs(nxt - lam) <= 1e-12 * lam:
            break
        lam = nxt
    lam = lam_hint if lam_hint > 0.0 else best[1]
    c = _cgf3(parts, sign * lam, value_only=True)[0]
    d = (c + log_inv_tau) / (lam + damp)
    if d >= reach:
        return reach, lam, -math.inf
    return d, lam, c - lam * d


class Plan(NamedTuple):
    """The tilted parts and the window of a composition (everything but the FFT)."""

    parts: list[_Part]
    theta: float
    lo: int  # window start, offset from sum count * base
    size: int
    cut: float
    tau_lo: float
    tau_hi: float
    tau_wrap: float
    kq: int
    mean: float  # tilted composed mean, absolute lattice index
    var: float  # tilted composed variance
    lam_lo: float  # the Chernoff parameters used (reusable by a nearly equal law)
    lam_hi: float
    lam_wrap: float

    def log_mgf(self) -> float:
        """log sum_J P(J) e^{theta J} over the composed law (J the absolute lattice index): the tilt's normaliser."""
        return sum(p.times * (p.log_m + self.theta * p.base) for p in self.parts)

    def relative_error(self, index: float, saddle: "Plan") -> float:
        """Rough size of the round-off relative to the tilted mass beyond lattice ``index`` (to choose a tilt).

        ``saddle`` is the plan of the same law tilted at the saddle point of ``index`` (its
        tilted mean is there).  The tilted mass beyond ``index`` is then about e^{-I},
        I = (saddle.theta - theta) index - (log M(saddle.theta) - log M(theta)) (the Chernoff
        exponent, M the moment generating function: exact in the exponent also where a heavy
        right tail puts far more mass there than a Gaussian law of the tilted variance would).
        """
        rate = (saddle.theta - self.theta) * index - (saddle.log_mgf() - self.log_mgf())
        total = sum(p.times for p in self.parts)
        return 2.0 * total * fft_error_level(self.size) * math.exp(min(max(rate, 0.0), 700.0))


def plan_tilted(parts: Sequence[tuple[int, FArr, int]], theta: float, tau: float, max_lattice: int,
                like: Plan | None = None, target: float | None = None) -> Plan:
    """The window of :func:`compose_tilted` (Chernoff bounds of the tilted law); raises
    :class:`WindowTooLarge` if it exceeds ``max_lattice``.

    ``target``: the lattice index queries will be made near (default the tilted mean).  The
    masses the window leaves out are charged, untilted, against the tail there: where the
    target lies z tilted standard deviations above the tilted mean (a partial tilt), that tail
    holds only about e^{-z^2/2} of the tilted mass, and the window's levels are lowered by as
    much.  ``like``: the plan of a nearly equal law (same tilt), whose Chernoff parameters are
    reused instead of searched (the bounds are evaluated for this law: as valid, maybe wider).
    """
    total = sum(c for _, _, c in parts)
    tp = [_tilt_part(j, p, c, theta, tau / (4.0 * total), like is None) for j, p, c in parts]
    cut = sum(p.times * p.cut for p in tp)
    # window [lo, lo + size) in offsets from J0 = sum count * base
    mean = sum(p.times * p.mean for p in tp)
    var = sum(p.times * p.var for p in tp)
    span = sum(p.times * (p.x.size - 1) for p in tp)
    j_base = sum(p.times * p.base for p in tp)
    dz = max(target - j_base - mean, 0.0) if target is not None else 0.0
    z = dz / math.sqrt(max(var, 1e-300))
    # -log of the tilted mass beyond the target (Gaussian estimate: only sets the levels)
    level = 0.5 * z * z + math.log(max(z, 1.0) * 2.5066282746310002) if z > 0.0 else 0.0
    a = math.log(1.0 / tau) + level
    # below: the mass under the window aliases to its top, where the queries see it
    d_lo, lam_lo, lb_lo = _chernoff(tp, a, -1.0, mean, 0.0, like.lam_lo if like else 0.0)
    # above: the mass over the window's top matters only through its untilted weight, e^{-theta d}
    # below the weight at the target: the damped bound ...
    d_hi, lam_hi, lb_hi = _chernoff(tp, a + theta * dz, 1.0, span - mean, theta, like.lam_hi if like else 0.0)
    lo = max(int(math.floor(mean - d_lo)), 0)
    # ... and what lies beyond it lands at S - size: at and above index kq (a quarter of the
    # way from the window's bottom to the mean) only from S >= lo + size + kq, a plain bound
    # further out
    kq = max(int(0.25 * (mean - lo)), 0)
    if theta > 0.0:
        d_w, lam_w, lb_w = _chernoff(tp, a, 1.0, span - mean, 0.0, like.lam_wrap if like else 0.0)
    else:
        d_w, lam_w, lb_w = _chernoff(tp, a, 1.0, span - mean, 0.0, like.lam_wrap if like else lam_hi)
    top = max(d_hi, d_w - kq)
    hi = min(int(math.ceil(mean + top)), span)
    full = hi - lo + 1 >= span + 1 or (lo == 0 and hi == span)
    size = fft_size(max(span + 1 if full else hi - lo + 1, 16))
    tau_lo = tau_hi = tau_wrap = 0.0
    if lo + size > span and lo == 0:
        full, size = True, fft_size(max(span + 1, 16))
    if not full:
        # the bounds at the window's actual edges (further out than d: smaller, same lam),
        # raised by 1e-6 relative for the rounding of the cumulant generating function's sums
        top = lo + size - mean
        tau_lo = _CH_SLACK * math.exp(lb_lo - lam_lo * ((mean - lo) - d_lo)) if lb_lo > -math.inf else 0.0
        tau_hi = (_CH_SLACK * math.exp(lb_hi - lam_hi * (top - d_hi))
                  if lb_hi > -math.inf and top < span - mean else 0.0)
        tau_wrap = (_CH_SLACK * math.exp(lb_w - lam_w * (top + kq - d_w))
                    if lb_w > -math.inf and top + kq < span - mean else 0.0)
    else:
        kq = 0
    if size > max_lattice:
        raise WindowTooLarge(size)
    lam_wrap = lam_w
    return Plan(tp, theta, lo, size, cut, tau_lo, tau_hi, tau_wrap, kq, j_base + mean, var, lam_lo, lam_hi, lam_wrap)


def compose_tilted(parts: Sequence[tuple[int, FArr, int]], theta: float, tau: float,
                   max_lattice: int) -> Composed:
    """The convolution of ``pmf_i`` composed ``count_i`` times over ``parts = [(jmin_i, pmf_i, count_i)]``.

    Tilted by ``e^{theta j}`` (``theta >= 0`` per lattice index), composed by one FFT product
    on a window holding all but ``tau`` of the tilted composed mass on each side (Chernoff
    bounds); see the module notes for the bounds.  Raises :class:`WindowTooLarge` if the window
    exceeds ``max_lattice``.
    """
    return compose_plan(plan_tilted(parts, theta, tau, max_lattice))


def compose_plan(plan: Plan) -> Composed:
    """Run the FFT composition of a :class:`Plan`."""
    tp, theta, lo, size = plan.parts, plan.theta, plan.lo, plan.size
    total = sum(p.times for p in tp)
    lvl = fft_error_level(size)
    # ---- spectra of the folded parts and their powers
    log_f_bound = None  # sum_i count_i log(|f_i| + a_i): log of the product's magnitude bound
    spec = None
    per_part = []
    folds = 0.0  # roundings of the folding sums, per step (relative, compounded over the steps)
    for p in tp:
        x = p.x
        if x.size > size:  # fold circularly (exact for a circular convolution)
            folds += p.times * math.ceil(x.size / size)
            pad = (-x.size) % size
            x = np.concatenate([x, np.zeros(pad)]).reshape(-1, size).sum(axis=0)
        f = np.fft.rfft(x, n=size)
        a = lvl * float(np.sum(x)) * (1.0 + 1e-12)
        lf = np.log(np.abs(f) + a)
        per_part.append((f, a, lf, p.times))
        log_f_bound = p.times * lf if log_f_bound is None else log_f_bound + p.times * lf
    assert log_f_bound is not None
    keep = np.flatnonzero(log_f_bound > _LOG_TINY)
    for f, _, _, count in per_part:
        pw = _power(f[keep], count)
        spec = pw if spec is None else spec * pw
    assert spec is not None
    # ---- error of the spectrum on ``keep`` (outside it the spectrum is set to 0: error <= e^{-740})
    lb = log_f_bound[keep]
    err = np.zeros(keep.size)
    for _, a, lf, count in per_part:
        # count a (|f| + a)^{count - 1} prod_{other} (|f'| + a')^{count'}
        err += count * a * np.exp(lb - lf[keep])
    # rounding of the products: repeated squaring doubles a relative error at each squaring, so
    # the product of ``total`` factors carries at most total - 1 roundings of sqrt(5) u each
    rel = math.expm1((total - 1) * math.log1p(_SQRT5U)) * 1.0001
    err += rel * np.exp(lb) + 1e-300
    # full-spectrum weights of a Hermitian half (k = 0 and the Nyquist bin once, the others twice)
    wts = np.full(keep.size, 2.0)
    wts[keep == 0] = 1.0
    if size % 2 == 0:
        wts[keep == size // 2] = 1.0
    n_dust = size - float(np.sum(wts))
    full_spec = np.zeros(size // 2 + 1, dtype=np.complex128)
    full_spec[keep] = spec
    g = np.fft.irfft(full_spec, n=size)
    del full_spec
    l1 = float(np.sum(wts * np.abs(spec)))
    beta = (float(np.sum(wts * err)) + n_dust * math.exp(_LOG_TINY) + lvl * l1) / size
    beta += 2.0 * UNIT_ROUNDOFF * float(np.max(np.abs(g))) + 1e-300
    beta *= 1.0 + 1e-9
    if lo % size:
        g = np.roll(g, -(lo % size))
    j_base = sum(p.times * p.base for p in tp)
    log_scale = sum(p.times * p.log_m for p in tp) - theta * lo
    # relative error of the untilted masses: the tilted masses' rounding compounded over the
    # steps, the folding sums, and the rounding of log_scale - theta K (its terms' sizes)
    scale_rel = (sum(p.times * p.rho for p in tp)
                 + 4.0 * UNIT_ROUNDOFF * (sum(p.times * (abs(p.log_m) + 1.0) for p in tp) + abs(theta) * (lo + size)
                                          + abs(log_scale) + 2.0 + folds))
    return Composed(j_base + lo, g, theta, log_scale, beta, plan.cut, plan.tau_lo, plan.tau_hi, plan.tau_wrap,
                    plan.kq, scale_rel)


def _power(f: NDArray[np.complex128], e: int) -> NDArray[np.complex128]:
    """f**e (e >= 1) by repeated squaring."""
    result: NDArray[np.complex128] | None = None
    base = f.copy()
    while True:
        if e & 1:
            if result is None:
                result = base.copy()
            else:
                result *= base
        e >>= 1
        if not e:
            break
        base *= base
    assert result is not None
    return result


class TailSums:
    """Tail sums of a :class:`Composed` law, untilted, with a per-query error bound.

    For K >= ``kmin`` (the entries whose untilting factor is representable), stored from kmin
    on: the untilted masses ``u``, and on request ``A[K] = sum_{K' >= K} u(K')`` and
    ``D[K] = sum_{K' >= K} e^{-(K' - K) h} u(K')``; :meth:`err_A` / :meth:`err_D` bound their
    errors against the exact composed law (window, aliasing, trimming and round-off included).
    """

    def __init__(self, c: Composed, h: float, tails: bool = True, discounted: bool = True):
        self.c, self.j0, self.h, self.theta = c, c.j0, h, c.theta
        n = c.g.size
        self.n = n
        # untilting exponent log_scale - theta K: representable from kmin on; queries lie near
        # the tilted law's mean: below kq (a quarter of the way from the window's bottom to it)
        # nothing is kept
        if c.theta > 0.0:
            kmin = max(int(math.ceil((c.log_scale - _MAX_EXP) / c.theta)), c.kq)
        else:
            kmin = c.kq if c.log_scale <= _MAX_EXP else n
        self.kmin = min(kmin, n)
        ex = c.log_scale - c.theta * np.arange(self.kmin, n, dtype=np.float64)
        # relative rounding of the untilting (exp of an argument of size |ex|), of the tail sums
        # (recurrences over n terms: gamma_{2n}, and the discount factor e^{-h}, rounded to
        # within 2 u and raised to powers up to n: 2 n u) and of the composed law's scale
        big = float(max(abs(ex[0]), abs(ex[-1]))) if ex.size else 0.0
        self._rel = (big + 4.0) * UNIT_ROUNDOFF + 4.0 * n * UNIT_ROUNDOFF * 1.0001 + c.scale_rel
        np.exp(ex, out=ex)
        ex *= c.g[self.kmin:]
        self.u = ex  # the untilted masses from kmin on
        self.c = c = c._replace(g=np.zeros(0))  # (the tilted masses are no longer needed)
        # both suffix sums from one compiled backward pass (A bit for bit np.cumsum's; D by
        # the recurrence D[i] = u[i] + e^{-h} D[i + 1])
        self.A, self.D = _tail_sums(self.u, math.exp(-h), tails, discounted)

        # constants of the per-query bounds
        self._head_n = math.exp(min(c.log_scale - c.theta * n, _MAX_EXP))
        self._geo0 = 1.0 / -math.expm1(-c.theta) if c.theta > 0.0 else 0.0
        self._geoh = 1.0 / -math.expm1(-(c.theta + h))

    def bound(self, k: int, discounted: bool) -> tuple[float, float]:
        """(A[k] or D[k], a bound on its error against the exact (discounted) tail from index k),
        for kmin <= k < n."""
        c = self.c
        head = math.exp(min(c.log_scale - self.theta * k, _MAX_EXP))
        m = self.n - k
        # round-off of the window's entries, beta each, weighed by their untilting factors
        if discounted:
            geo = head * -math.expm1(-(self.theta + self.h) * m) * self._geoh
            v = float(self.D[k - self.kmin])
        elif self.theta > 0.0:
            geo = head * -math.expm1(-self.theta * m) * self._geo0
            v = float(self.A[k - self.kmin])
        else:
            geo = head * m
            v = float(self.A[k - self.kmin])
        # misplaced mass: trimmed paths and the mass below the window (aliased) may land at any
        # index >= k, as may what lies beyond its end (only far beyond it from kq on); the mass
        # above the window's end is missing, at untilted weight at most that at index n
        above = c.tau_wrap if k >= c.kq else c.tau_hi
        e = c.beta * geo + (c.cut + c.tau_lo + above) * head + c.tau_hi * self._head_n
        # the sum of |u| over the tail is at most |value| + 2 e: the relative roundings apply to it
        return v, e + self._rel * (abs(v) + 2.0 * e) + _DUST

    def err_A(self, k: int) -> float:
        """Bound on |A[k] - exact tail mass from index k| (kmin <= k < n, an index into the window)."""
        return self.bound(k, False)[1]

    def err_D(self, k: int) -> float:
        """Bound on |D[k] - exact discounted tail from index k|."""
        return self.bound(k, True)[1]

    def beyond(self) -> float:
        """Bound on the exact mass at and above the window's end (index n)."""
        return (self.c.cut + self.c.tau_hi) * self._head_n + _DUST
