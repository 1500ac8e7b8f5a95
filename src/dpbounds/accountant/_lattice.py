"""Loss lattices and their composition (private).

A privacy-loss distribution rounded onto the lattice ``delta_l * Z`` (up for an upper bound on
delta, down for a lower one) composes by one FFT power (:func:`compose`); different lattice
PMFs on the same spacing compose by convolution (:func:`convolve`).  :class:`HockeyStick` then
answers delta(eps) = sum_{l > eps} g_l (1 - e^{eps - l}) in O(1) per query.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

FArr = NDArray[np.float64]

__all__ = ["compose", "convolve", "compose_pieces", "delta_bracket", "Composition", "HockeyStick", "WindowTooLarge",
           "place_upper", "place_lower", "balance", "fft_size"]

_GREEDY_MAX = 50_000  # bulk intervals balanced one by one (a Python loop: ~1 us each)
_ULP = 4.5e-16  # relative slack on computed losses (a few units in the last place of log1p / products)


def fft_size(n: int) -> int:
    """Smallest 5-smooth integer >= n (numpy's pocketfft is fast on 2^a 3^b 5^c lengths)."""
    n = max(int(n), 1)
    best = 1 << (n - 1).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def _trim(pmf: FArr, tau: float) -> tuple[int, int, float]:
    """Indices [a, b) holding all but at most ``tau`` of the mass at each end, and the mass cut."""
    a = int(np.searchsorted(np.cumsum(pmf), tau, side="right"))          # mass below a <= tau
    nb = int(np.searchsorted(np.cumsum(pmf[::-1]), tau, side="right"))   # mass of the top nb <= tau
    a = min(a, pmf.size - 1)
    b = max(pmf.size - nb, a + 1)
    # the cut mass summed directly (pairwise sums of small terms: accurate, unlike cumsum's tail)
    cut = float(np.sum(pmf[:a])) + float(np.sum(pmf[b:]))
    return a, b, cut * (1.0 + 1e-12)


def compose(jmin: int, pmf: FArr, E: int, tau: float, max_lattice: int) -> tuple[int, FArr, float]:
    """E-fold self-convolution of a lattice PMF by one FFT power, on a window.

    ``pmf[k]`` is the mass at lattice index ``jmin + k`` (a sub-probability: mass at +inf is
    the caller's).  The window holds all but ``tau`` of the composed mass on each side
    (Chernoff bounds of the lattice law).  Returns ``(s0, g, outside)``: ``g[k]`` is the
    composed mass at index ``s0 + k`` and ``outside`` bounds the mass left out plus an FFT
    round-off estimate.  Raises :class:`WindowTooLarge` if the window exceeds ``max_lattice``.

    The single-epoch PMF's ends holding at most ``tau / E`` each are cut first (a composed
    path through a cut atom has mass at most that atom's times a sub-probability, so at most
    E times the cut mass is lost: counted in ``outside``; dropping mass only lowers a lower
    bound, and an upper bound adds ``outside``).
    """
    a, b, cut = _trim(pmf, tau / (4.0 * E))
    if a > 0 or b < pmf.size:
        jmin += a
        pmf = pmf[a:b]
    k = np.arange(pmf.size, dtype=float)
    tot = float(pmf.sum())
    # (np.sum of products rather than np.dot: BLAS threads are slow on a loaded machine)
    mean = float(np.sum(k * pmf)) / tot
    var = float(np.sum((k - mean) ** 2 * pmf)) / tot
    # Chernoff bounds for the sum of E i.i.d. lattice variables (sub-probability, mass tot)
    lam = np.logspace(-6, 0, 31) / max(math.sqrt(var), 1.0)
    kc = k - mean
    # exponents clipped to [-700, 700]: raising the small terms only enlarges the MGF
    # (still a valid Chernoff bound) and keeps subnormals out of the dot products
    pm = np.maximum(pmf, 1e-150)  # raising tiny masses keeps the MGF an upper bound
    lmgf_p = np.array([math.log(float(np.sum(np.exp(np.clip(l * kc, -300.0, 700.0)) * pm))) for l in lam])
    lmgf_m = np.array([math.log(float(np.sum(np.exp(np.clip(-l * kc, -300.0, 700.0)) * pm))) for l in lam])
    del pm, kc, k
    log_tau = math.log(tau)
    # smallest a with min_l exp(-l a + E lmgf) <= tau
    a_hi = float(np.min((E * lmgf_p - log_tau) / lam))
    a_lo = float(np.min((E * lmgf_m - log_tau) / lam))
    span = E * (pmf.size - 1)
    lo_i = max(0.0, E * mean - a_lo)
    hi_i = min(float(span), E * mean + a_hi)
    # the window only has to hold [lo_i, hi_i] (+ slack): what lies outside it aliases into it
    # with total mass <= 2 tau, which ``outside`` counts
    L = fft_size(max(int(math.ceil(hi_i - lo_i)) + 3, 16))
    if L >= span + 1:
        L = fft_size(span + 1)
        s0 = 0
        outside = 0.0
    else:
        s0 = int(math.floor(lo_i))
        outside = 2.0 * tau
    if L > max_lattice:
        raise WindowTooLarge(L)
    if pmf.size > L:
        # the single PMF is wider than the window (E = 1, or thin far tails): fold it modulo L
        # (rfft(pmf, n=L) would drop pmf[L:]); the mass it moves is outside the window and
        # counted in ``outside`` like the composition's own aliasing
        pmf = np.asarray(np.bincount(np.arange(pmf.size) % L, weights=pmf, minlength=L), dtype=np.float64)
    f = np.fft.rfft(pmf, n=L)
    f **= E
    g = np.fft.irfft(f, n=L)
    del f
    # index k of g holds total s with s = k (mod L), s in [s0, s0 + L)
    shift = s0 % L
    if shift:
        g = np.roll(g, -shift)
    err_fft = 4e-16 * math.log2(L) * E * math.sqrt(L)  # round-off estimate
    return E * jmin + s0, g, outside + err_fft + E * cut


class WindowTooLarge(Exception):
    """The composition window would exceed the memory cap; ``needed`` is its size in points."""

    def __init__(self, needed: int):
        super().__init__(needed)
        self.needed = needed


class HockeyStick:
    """eps -> sum_{l > eps} g_l (1 - e^{eps - l}) in O(1) from two tail sums (eps >= 0).

    Only the tail sums over the positive losses are stored (memory ~ 2 arrays).
    """

    def __init__(self, s0: int, g: NDArray[np.float64], delta_l: float):
        k0 = max(0, 1 - s0)  # first index with loss (s0 + k) * delta_l > 0
        self.j0 = s0 + k0  # lattice index of the first stored entry
        self.delta_l = delta_l
        gk = g[k0:]
        self.t1 = np.cumsum(gk[::-1])[::-1]
        w = np.arange(gk.size, dtype=float)  # reused in place: loss, e^{-loss}, g e^{-loss}
        w += self.j0
        w *= -delta_l
        np.exp(w, out=w)
        w *= gk
        t2 = np.cumsum(w[::-1], out=w)[::-1]
        # keep only the part where the tail mass matters (> 1e-30); beyond it the hockey-stick
        # value is below 1e-30, which ``dropped`` accounts for (added to upper bounds)
        n = int(np.searchsorted(-self.t1, -1e-30, side="right")) + 1
        n = min(n, self.t1.size)
        self.dropped = 1e-30 if n < self.t1.size else 0.0
        self.t1 = np.array(self.t1[:n])
        self.t2 = np.array(t2[:n])

    def __call__(self, eps: float) -> float:
        # first stored index with loss > eps
        j = math.floor(eps / self.delta_l) + 1
        while (j - 1) * self.delta_l > eps:
            j -= 1
        while j * self.delta_l <= eps:
            j += 1
        k = max(j - self.j0, 0)
        if k >= self.t1.size:
            return self.dropped
        if eps > 700.0:  # e^eps t2 <= t1 there is not representable; the stored tail bounds it
            return float(self.t1[k]) + self.dropped
        return float(self.t1[k] - math.exp(eps) * self.t2[k]) + self.dropped


def convolve(a: tuple[int, FArr], b: tuple[int, FArr]) -> tuple[int, FArr, float]:
    """Convolution of two lattice PMFs ``(jmin, pmf)`` on the same spacing (FFT, full support).

    Returns ``(jmin, pmf, err)`` with ``err`` an estimate of the summed FFT round-off (the same
    estimate as :func:`compose`); negative round-off values are kept, not clipped, so that the
    caller's bounds can account for them.
    """
    ja, pa = a
    jb, pb = b
    n = pa.size + pb.size - 1
    L = 1 << max(4, (n - 1).bit_length())
    g = np.fft.irfft(np.fft.rfft(pa, L) * np.fft.rfft(pb, L), L)[:n]
    err = 4e-16 * math.log2(L) * math.sqrt(L) * float(np.sum(pa)) * float(np.sum(pb))
    return ja + jb, g, err


# ---------------------------------------------------------------------------------------
# placing loss cells on the lattice (connect-the-dots)
# ---------------------------------------------------------------------------------------
def place_upper(hi: FArr, p: FArr, delta_l: float) -> tuple[int, FArr]:
    """Lattice PMF ``(jmin, pmf)`` whose composition bounds delta from above, for cells whose
    P-side masses are ``p`` and whose losses are all at most ``hi`` (finite).

    Connect-the-dots (as in "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
    Distributions"): an atom of P-mass m at loss l in [t_j, t_k] (lattice points) is split into
    P-masses m (1 - w(l)) at t_j and m w(l) at t_k, w(l) = (e^{-t_j} - e^{-l}) / (e^{-t_j} - e^{-t_k}),
    which keeps both its P- and its Q-mass; the true pair is the merge (a post-processing) of the
    split pair, so every composition of the split pair dominates.  Only a loss bound per cell is
    known: the cell's mass is split with w(hi) between t_{k-1} and t_k, k = ceil(hi / delta_l);
    that measure is stochastically larger than the split of every atom of loss <= hi (w is
    increasing; atoms below t_{k-1} are split below it), and the hockey-stick integral of an
    E-fold convolution is monotone in that order.  Error: second order in delta_l where the
    loss density is smooth (rounding up is first order).  Float slack: hi is raised by a few ulps
    and w by 1e-12 relative, so the computed split stays above the exact one.
    """
    hi_c = hi + _ULP * (1.0 + np.abs(hi))
    k = np.ceil(hi_c / delta_l)
    r = hi_c - (k - 1.0) * delta_l + _ULP * (1.0 + np.abs(hi_c))   # in (0, delta_l]
    np.clip(r, 0.0, delta_l, out=r)
    w = np.expm1(-r)
    w *= (1.0 + 1e-12) / math.expm1(-delta_l)
    w += 1e-15
    np.minimum(w, 1.0, out=w)
    ki = k.astype(np.int64)
    jmin = int(ki.min()) - 1
    n = int(ki.max()) - jmin + 1
    wp = w * p
    pmf = np.bincount(ki - jmin, weights=wp, minlength=n)
    wp -= p  # -(1 - w) p
    wp *= -1.0
    pmf += np.bincount(ki - 1 - jmin, weights=wp, minlength=n)
    return jmin, np.asarray(pmf, dtype=np.float64)


def place_lower(lo: FArr, p: FArr, delta_l: float, err: float) -> tuple[int, FArr]:
    """Lattice PMF ``(jmin, pmf)`` whose composition bounds delta from below, for cells whose
    P-side masses are ``p`` (l1 error at most ``err``) and whose losses are all at least ``lo``.

    Merging atoms is a post-processing, so a pair made of merged groups of (parts of) atoms is
    dominated by the true pair; a group whose Q/P ratio is at most e^{-t} has merged loss >= t
    and may then be moved down to the lattice point t (stochastically smaller: lower bound).
    Interval I_j = [t_j, t_{j+1}) (by ``lo``) sends a fraction alpha_j of each of its cells up to
    t_{j+1} and the rest down to t_j; the group at t_{j+1} is feasible when
    alpha_j C_j <= (1 - alpha_{j+1}) S_{j+1}, with C_j = sum p (e^{-lo} - e^{-t_{j+1}}) (the
    excess Q-mass of the part moved up) and S_{j+1} = sum p (e^{-t_{j+1}} - e^{-lo}) (the slack
    of the part moved down).  alpha_j is the connect-the-dots fraction S_j / (S_j + C_j) capped
    by that constraint with alpha_{j+1} replaced by its own cap (so no recursion is needed), a
    margin for ``err`` (the constraint must hold for the true masses) and for float rounding.
    Error: second order in delta_l where the density is smooth, like :func:`place_upper`.
    """
    lo_c = lo - _ULP * (1.0 + np.abs(lo))
    j = np.floor(lo_c / delta_l)
    u = lo_c - j * delta_l - _ULP * (1.0 + np.abs(lo_c))  # loss - t_j, lowered by the rounding slack
    neg = u < 0.0
    j[neg] -= 1.0
    u[neg] += delta_l
    np.clip(u, 0.0, delta_l, out=u)
    ji = j.astype(np.int64)
    jmin = int(ji.min())
    ji -= jmin
    n = int(ji.max()) + 2
    em = np.expm1(-u)  # e^{-u} - 1
    P = np.bincount(ji, weights=p, minlength=n)
    s = -np.bincount(ji, weights=p * em, minlength=n)           # S_j e^{t_j}
    em -= math.expm1(-delta_l)
    c = np.bincount(ji, weights=p * em, minlength=n)             # C_j e^{t_j}
    del em
    return jmin, balance(P, np.maximum(s, 0.0, out=s), np.maximum(c, 0.0, out=c), delta_l, err)


def balance(P: NDArray[Any], S: FArr, C: FArr, delta_l: float, err: float = 0.0) -> FArr:
    """The lower PMF of balanced merging: interval j (P-mass ``P[j]``, slack ``S[j]`` and excess
    ``C[j]`` in units of e^{-t_j}, both >= 0) sends the fraction alpha_j of its mass up to t_{j+1}.

    alpha_j is the connect-the-dots fraction S_j / (S_j + C_j) capped by the room at t_{j+1},
    alpha_j C_j <= (1 - alpha_{j+1}) S_{j+1} e^{-Delta} - margin, where the margin covers an l1
    error ``err`` of the masses and float rounding.  Everywhere alpha_{j+1} is replaced by its own
    cap (vectorised, no recursion); in the bulk (where the mass is) the choice is greedy from the
    top, alpha_j as large as the actual alpha_{j+1} allows, so that pairs of intervals merge around
    their middle point, which keeps the lower PMF's error second order at coarse spacings.
    """
    n = P.size
    tot = S + C
    e_d = math.exp(-delta_l)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(tot > 0.0, S / np.where(tot > 0.0, tot, 1.0), 0.0)
    del tot
    # room at t_{j+1} in units of e^{-t_j}: (1 - alpha_{j+1}) rs[j] - marg[j] >= alpha_j c_j
    rs = np.zeros(n)
    rs[:-1] = e_d * S[1:] * (1.0 - 1e-9)
    marg = np.zeros(n)
    marg[:-1] = 2.0 * err * (-math.expm1(-delta_l)) + 1e-15 * (P[:-1] + P[1:])
    cc = np.maximum(C, 1e-300) * (1.0 + 1e-9)
    room = np.zeros(n)
    room[:-1] = (1.0 - w[1:]) * rs[:-1] - marg[:-1]
    alpha = np.clip(np.minimum(w, room / cc), 0.0, 1.0)
    alpha[-1] = 0.0  # nothing above the top interval to balance a move up
    cm = np.cumsum(P)
    tot_m = float(cm[-1])
    ra = int(np.searchsorted(cm, 1e-9 * tot_m))
    rb = min(int(np.searchsorted(cm, (1.0 - 1e-9) * tot_m)) + 1, n - 2)
    if 0 <= ra <= rb and rb - ra <= _GREEDY_MAX:
        al, rl, ml, cl = alpha.tolist(), rs.tolist(), marg.tolist(), cc.tolist()
        for i in range(rb, ra - 1, -1):
            a = ((1.0 - al[i + 1]) * rl[i] - ml[i]) / cl[i]
            al[i] = 0.0 if a < 0.0 else (1.0 if a > 1.0 else a)
        if ra > 0:  # the interval below the bulk sees the actual alpha_{ra}
            i = ra - 1
            a = ((1.0 - al[ra]) * rl[i] - ml[i]) / cl[i]
            al[i] = max(0.0, min(float(w[i]), a, 1.0))
        alpha = np.array(al)
    up = alpha * P
    pmf = P - up
    pmf[1:] += up[:-1]
    return np.asarray(pmf, dtype=np.float64)


# direction -> (upper hockey stick, mass added to it, lower hockey stick, mass subtracted from it)
Composition = dict[str, tuple[HockeyStick, float, HockeyStick, float]]


def _compose_side(parts: list[tuple[int, FArr, int]], delta_l: float, tau: float,
                  max_lattice: int) -> tuple[HockeyStick, float]:
    """One side (upper or lower PMFs) of :func:`compose_pieces`: (hockey stick, window + round-off mass)."""
    acc: tuple[int, FArr] | None = None
    out = 0.0
    while parts:
        jmin, pmf, count = parts.pop(0)
        s0, g, o = compose(jmin, pmf, count, tau, max_lattice)
        del pmf
        out += o
        if acc is None:
            acc = (s0, g)
        else:
            j, g, e = convolve(acc, (s0, g))
            acc, out = (j, g), out + e
            if g.size > max_lattice:
                raise WindowTooLarge(int(g.size))
        del g
    assert acc is not None
    return HockeyStick(acc[0], acc[1], delta_l), out


def compose_pieces(pieces: list[tuple[dict[str, tuple[int, FArr, float, int, FArr, float]], int]],
                   delta_l: float, tau: float, max_lattice: int) -> Composition:
    """Compose single-epoch lattice PMFs, each ``count`` times, into hockey sticks per direction.

    ``pieces`` is a list of ``(lattice_pmfs, count)`` (a law's ``lattice_pmfs`` output, consumed:
    each PMF is dropped once composed, and one side's composed window is turned into its hockey
    stick before the other side is composed, which keeps the peak memory of a long run down).
    Each piece is composed by one FFT power, different pieces by convolution; the windows'
    outside mass and round-off estimates are added to the upper bound and subtracted from the
    lower one, with the mass missing below the lower PMFs; the upper side's mass at +inf is
    1 - prod (1 - inf_up)^count.
    """
    comp: Composition = {}
    for direction in list(pieces[0][0]):
        entries = [(pm.pop(direction), count) for pm, count in pieces]
        log_keep = 0.0  # log P[no piece put mass at +inf] (upper side)
        for (_, _, inf_up, _, _, _), count in entries:
            log_keep += count * math.log1p(-min(inf_up, 1.0)) if inf_up < 1 else -math.inf
        missing = sum(count * e[5] for e, count in entries)
        up = [(e[0], e[1], count) for e, count in entries]
        down = [(e[3], e[4], count) for e, count in entries]
        del entries
        hs_up, add_up = _compose_side(up, delta_l, tau, max_lattice)
        hs_dn, sub_dn = _compose_side(down, delta_l, tau, max_lattice)
        comp[direction] = (hs_up, add_up + -math.expm1(log_keep), hs_dn, sub_dn + missing)
    return comp


def delta_bracket(comp: Composition, eps: float) -> tuple[float, float]:
    """[lower, upper] of delta(eps) from a composition: the larger direction, clipped to [0, 1]."""
    lo_all, hi_all = 0.0, 0.0
    for hs_up, add_up, hs_dn, sub_dn in comp.values():
        lo_all = max(lo_all, hs_dn(eps) - sub_dn)
        hi_all = max(hi_all, hs_up(eps) + add_up)
    return max(lo_all, 0.0), min(hi_all, 1.0)

