"""A training history of random allocation as certified brackets (private).

A history is a list of epochs, each with its own (sigma, M); a run of equal whole epochs
composes by one FFT power of its lattice PMF, different runs by convolution.  A partial epoch
(k < M steps) is dominated by any longer prefix of its epoch and dominates any shorter one (the
first k' steps of an epoch are a post-processing of its first k steps when k' <= k): so
accounting it as k_hi >= k steps gives an upper bound and as k_lo <= k steps a lower bound.
Where a whole-epoch or power-of-two step bucket [k_lo, k_hi] costs at most half the
tolerance (by the Gaussian-DP approximation of the history), the partial epoch is bracketed so;
a training loop's queries then reuse the compositions of whole epochs.  Otherwise (few epochs)
the partial epoch's own law (``_select.partial_law_for``) is used, exactly.

Every answer is a pure function of the history, the delta (or epsilon) asked for, the tolerance
and the memory cap: the lattice spacing comes from a fixed grid of spacings (powers of sqrt 2)
chosen from those alone, and everything cached (laws, lattice PMFs, compositions) is a pure
function of its key.  So a query after one more step or epoch returns the bracket a cold query
on the same history returns, bit for bit, only faster.
"""
from __future__ import annotations

import math

import numpy as np

from dpbounds._errors import DPBoundsError
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._cache import cached
from dpbounds.accountant._composition import compose_spectral, pmf_stats
from dpbounds.accountant._gdp import gdp_epsilon, gdp_mu_random_allocation
from dpbounds.accountant._invert import invert
from dpbounds.accountant._lattice import HockeyStick, WindowTooLarge
from dpbounds.accountant._law import FArr, LatticePMFs, SingleEpochLaw
from dpbounds.accountant._select import law_for, partial_law_for, require_converged, tilted_reach

__all__ = ["Run", "Pieces", "runs_from_history", "HistoryBracket", "build_bracket", "check_computable", "history_epsilon",
           "history_delta", "history_delta_function", "EPS_MAX"]

# (sigma, M, whole epochs, steps of a trailing partial epoch (0 if none))
Run = tuple[float, float, int, int]
# a composition side: ((law, count), ...) in history order
Pieces = tuple[tuple[SingleEpochLaw, int], ...]

_TAU = 1e-14             # composed mass left outside a window, each side
_SPACING_FLOOR = 2.0 ** -23.5   # finest lattice spacing (~8.4e-8)
_DL_C = 2.0              # spacing^2 = _DL_C tol eps s / E: ~tol / 8 wide (connect-the-dots with
                         # both masses known; measured 0.14-0.24 E dl^2 / (eps s) relative)
_BUCKET_SHARE = 0.5      # the part of the tolerance a partial-epoch bucket may use
EPS_MAX = 1e4            # largest epsilon the inversion looks for
_MAX_ITER = 8


def runs_from_history(history: list[tuple[float, float, int]]) -> tuple[Run, ...]:
    """Group steps into epochs: consecutive steps with the same sample rate 1/M fill epochs of M
    steps; a noise multiplier that changes inside an epoch counts the whole epoch at the
    smallest noise multiplier of its steps (conservative: more noise is a post-processing).

    O(history entries) whatever the step counts (whole epochs are counted, not enumerated)."""
    from dpbounds.accountant._protocol import rounds_from_rate

    # epochs as (sigma, M, count, steps in each): count > 1 only for whole epochs
    epochs: list[list[float]] = []
    for s, q, n in history:
        M = rounds_from_rate(q)
        left = int(n)
        if epochs and epochs[-1][1] == M and epochs[-1][3] < M and left:  # fill the open epoch
            take = min(M - int(epochs[-1][3]), left)
            epochs[-1][0] = min(epochs[-1][0], s)
            epochs[-1][3] += take
            left -= take
        if left >= M:
            epochs.append([s, M, left // M, M])
            left %= M
        if left:
            epochs.append([s, M, 1, left])
    runs: list[Run] = []
    for s, Mf, count, k in epochs:
        c, kk = int(count), int(k)
        full = kk == Mf
        if runs and full and runs[-1][0] == s and runs[-1][1] == Mf and runs[-1][3] == 0:
            rs, rM, rE, _ = runs[-1]
            runs[-1] = (rs, rM, rE + c, 0)
        else:
            runs.append((s, float(Mf), c, 0) if full else (s, float(Mf), 0, kk))
    return tuple(runs)


def _mu2(runs: tuple[Run, ...]) -> float:
    """The history's asymptotic Gaussian-DP mu^2 (partial epochs as fractions of an epoch)."""
    return sum(gdp_mu_random_allocation(s, M, E + k / M) ** 2 for s, M, E, k in runs)


def _eps_gdp(delta: float, mu2: float) -> float:
    return float(gdp_epsilon(delta, math.sqrt(max(mu2, 0.0))))


def _mu_max(delta: float) -> float:
    """The Gaussian-DP mu whose epsilon(delta) is :data:`EPS_MAX` (gdp_epsilon increases in mu)."""
    lo, hi = 0.0, 1.0
    while _eps_gdp(delta, hi * hi) < EPS_MAX:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _eps_gdp(delta, mid * mid) < EPS_MAX:
            lo = mid
        else:
            hi = mid
    return lo


def check_computable(runs: tuple[Run, ...], delta: float, name: str = "steps") -> None:
    """DPBoundsError naming ``name``, before any work, where epsilon(delta) is far beyond
    :data:`EPS_MAX` by the Gaussian-DP approximation of the history (close to the exact value
    for sigma >= 0.5 at such lengths; where it is low the exact search itself stops at EPS_MAX,
    its cost bounded by the memory cap).  The message gives the length that can be accounted."""
    mu2 = _mu2(runs)
    e = _eps_gdp(delta, mu2)
    if e > 4.0 * EPS_MAX:
        steps = sum(E * M + k for _, M, E, k in runs)
        frac = _mu_max(delta) ** 2 / mu2  # mu^2 grows linearly with the steps
        s, M = runs[-1][0], runs[-1][1]
        per_epoch = gdp_mu_random_allocation(s, M, 1.0) ** 2
        e_max = _mu_max(delta) ** 2 / per_epoch
        raise DPBoundsError(
            f"{name}: {steps:,.0f} steps give epsilon ~{e:.3g} at delta={delta:g} (Gaussian-DP "
            f"approximation), beyond the largest epsilon the exact accountant computes ({EPS_MAX:g}); "
            f"it can account for at most ~{steps * frac:.3g} steps of this history (at "
            f"noise_multiplier={s:g}, rounds_per_epoch={M:g}: epochs <= ~{e_max:.3g})")


# ---------------------------------------------------------------------------------------- pieces
def _full_law(s: float, M: float) -> SingleEpochLaw:
    law = law_for(s, M, "compose")
    require_converged(law)
    return law


def _partial_law(s: float, M: float, k: int, purpose: str = "compose") -> SingleEpochLaw:
    law = partial_law_for(s, M, k, purpose)  # type: ignore[arg-type]
    require_converged(law)
    return law


def _append(out: list[tuple[SingleEpochLaw, int]], law: SingleEpochLaw, count: int) -> None:
    if count <= 0:
        return
    if out and out[-1][0].key == law.key:
        out[-1] = (out[-1][0], out[-1][1] + count)
    else:
        out.append((law, count))


def _bucket(k: int, M: int, b: int) -> tuple[int, int]:
    """(k_lo, k_hi): k rounded down and up to multiples of b steps (k_hi at most M)."""
    lo = (k // b) * b
    hi = min(-(-k // b) * b, M)
    return lo, hi


def _bucket_size(runs: tuple[Run, ...], delta: float, tol: float) -> int:
    """The largest power-of-two step bucket (or a whole epoch, returned as a huge b) whose
    bracket of every partial epoch widens epsilon by at most _BUCKET_SHARE * tol, by the
    Gaussian-DP approximation; 1 (exact) when none does.  Independent of the partial epochs'
    own step counts (only of their (sigma, M) and the rest of the history), so that every query
    within one bucket composes the same pieces."""
    parts = [(s, M) for s, M, _, k in runs if k]
    if not parts:
        return 1
    base = sum(gdp_mu_random_allocation(s, M, E) ** 2 for s, M, E, _ in runs)
    e0 = max(_eps_gdp(delta, base), 1e-300)
    budget = _BUCKET_SHARE * tol
    b = 1 << (int(max(M for _, M in parts)) - 1).bit_length()  # >= every M: a whole epoch
    while b > 1:
        hi = base + sum(gdp_mu_random_allocation(s, M, min(b, M) / M) ** 2 for s, M in parts)
        if _eps_gdp(delta, hi) - e0 <= budget * e0:
            return b
        b //= 2
    return 1


def _sides(runs: tuple[Run, ...], b: int) -> tuple[Pieces, Pieces]:
    """(upper pieces, lower pieces) of the history with partial epochs bucketed by b steps."""
    up: list[tuple[SingleEpochLaw, int]] = []
    dn: list[tuple[SingleEpochLaw, int]] = []
    for s, M, E, k in runs:
        if E:
            law = _full_law(s, M)
            _append(up, law, E)
            _append(dn, law, E)
        if k:
            Mi = int(M)
            k_lo, k_hi = _bucket(k, Mi, b) if b > 1 else (k, k)
            if k_hi == Mi:
                _append(up, _full_law(s, M), 1)
            else:
                _append(up, _partial_law(s, M, k_hi), 1)
            if k_lo:
                _append(dn, _partial_law(s, M, k_lo), 1)
    return tuple(up), tuple(dn)


def _single(pieces: Pieces) -> SingleEpochLaw | None:
    """The law of a side that is one epoch (full or partial): its own delta needs no lattice."""
    return pieces[0][0] if len(pieces) == 1 and pieces[0][1] == 1 else None


def _direct_law(law: SingleEpochLaw, reach: float) -> SingleEpochLaw:
    """The single-epoch law that answers delta(eps) of one epoch directly (the "curve" law:
    finer than the lattice one where they differ; a tilted series reaching ``reach``)."""
    from dpbounds.accountant._law_partial import PartialEpochLaw

    if isinstance(law, PartialEpochLaw) and not law.full:
        return _partial_law(law.sigma, law.M, int(law.k), "curve")
    lw = law_for(law.sigma, law.M, "curve", reach=reach)
    require_converged(lw)
    return lw


# ----------------------------------------------------------------------------------- composition
def _pmfs(law: SingleEpochLaw, dl: float, max_lattice: int) -> LatticePMFs:
    """The law's lattice PMFs at spacing dl, refused (WindowTooLarge, before anything is
    allocated) where their support alone would exceed the memory cap."""
    lo, hi = law.loss_range()
    n = (hi - lo) / dl
    if not n <= max_lattice:
        raise WindowTooLarge(int(min(n, 2.0 ** 62)) if math.isfinite(n) else 2 ** 62)
    return cached(("lattice pmfs", law.key, dl), lambda: law.lattice_pmfs(dl))


def _side(pieces: Pieces, dl: float, direction: str, upper: bool,
          max_lattice: int) -> tuple[int, FArr, float]:
    """(s0, g, extra mass) of one side of one direction: the composed lattice PMF (index s0 + k
    holds g[k]) and the mass to add (upper) or subtract (lower) for the window's tails, the FFT
    round-off estimate, the masses at +inf (upper) and the masses missing below (lower)."""
    parts = []
    extra = 0.0
    log_keep = 0.0  # upper side: log P[no piece put mass at +inf]
    for law, count in pieces:
        jmin, pu, inf_up, jd, pd, miss = _pmfs(law, dl, max_lattice)[direction]
        pkey = (law.key, dl, direction, upper)
        st = cached(("ra pmf stats",) + pkey, lambda: pmf_stats(*((jmin, pu) if upper else (jd, pd))))
        parts.append((st, count, pkey))
        if upper:
            log_keep += count * math.log1p(-min(inf_up, 1.0)) if inf_up < 1.0 else -math.inf
        else:
            extra += count * miss
    s0, g, out = compose_spectral(parts, _TAU, max_lattice)
    if upper:
        extra = -math.expm1(log_keep) if log_keep > -math.inf else 1.0
    return s0, g, out + extra


def _stick(pieces: Pieces, dl: float, direction: str, upper: bool,
           max_lattice: int) -> tuple[HockeyStick, float]:
    key = ("ra stick", tuple((law.key, c) for law, c in pieces), dl, direction, upper, max_lattice)

    def build() -> tuple[HockeyStick, float]:
        s0, g, out = _side(pieces, dl, direction, upper, max_lattice)
        if upper:
            # the FFT's round-off leaves tiny negative masses; dropping them from the upper
            # PMF only adds mass (still an upper bound) and keeps delta(eps) non-increasing
            np.maximum(g, 0.0, out=g)
        return HockeyStick(s0, g, dl), out
    return cached(key, build)


class HistoryBracket:
    """delta(eps) brackets of one history at one lattice spacing (both sides, both directions)."""

    def __init__(self, up: Pieces, dn: Pieces, dl: float, max_lattice: int, lattice: bool = False,
                 reach: float = 1e-10):
        self.up, self.dn, self.dl, self.max_lattice = up, dn, dl, max_lattice
        self.direct_up = None if lattice else _single(up)
        self.direct_dn = None if lattice else _single(dn)
        if self.direct_up is not None:
            self.direct_up = _direct_law(self.direct_up, reach)
        if self.direct_dn is not None:
            self.direct_dn = _direct_law(self.direct_dn, reach)
        self.uses_lattice = lattice or _uses_lattice(up, dn)
        # build every composition now (so that WindowTooLarge surfaces here, not mid-search)
        for direction in ("remove", "add"):
            if self.direct_up is None:
                _stick(up, dl, direction, True, max_lattice)
            if dn and self.direct_dn is None:
                _stick(dn, dl, direction, False, max_lattice)

    def __call__(self, eps: float) -> tuple[float, float]:
        if self.direct_up is not None:
            hi = self.direct_up.delta(eps)[1]
        else:
            hi = 0.0
            for direction in ("remove", "add"):
                hs, add = _stick(self.up, self.dl, direction, True, self.max_lattice)
                hi = max(hi, hs(eps) + add)
        if not self.dn:
            lo = 0.0
        elif self.direct_dn is not None:
            lo = self.direct_dn.delta(eps)[0]
        else:
            lo = 0.0
            for direction in ("remove", "add"):
                hs, sub = _stick(self.dn, self.dl, direction, False, self.max_lattice)
                lo = max(lo, hs(eps) - sub)
        return max(lo, 0.0), min(hi, 1.0)

    def composition(self) -> dict[str, tuple[HockeyStick, float, HockeyStick, float]]:
        """direction -> (upper hockey stick, mass added, lower hockey stick, mass subtracted), as
        :func:`dpbounds.accountant._lattice.delta_bracket` takes it (lattice sides only)."""
        out = {}
        for direction in ("remove", "add"):
            hu, add = _stick(self.up, self.dl, direction, True, self.max_lattice)
            hd, sub = _stick(self.dn, self.dl, direction, False, self.max_lattice)
            out[direction] = (hu, add, hd, sub)
        return out

    def eps_start(self, d: float) -> tuple[float, float] | None:
        """The single-epoch law's own starting point, where both sides are that one epoch."""
        up, dn = self.direct_up, self.direct_dn
        if up is not None and dn is not None and up.key == dn.key:
            return up.eps_start(d)
        return None


def _quantize(dl: float) -> float:
    """The largest spacing 2^(i/2) <= dl (i an integer), at least the floor."""
    i = math.floor(2.0 * math.log2(max(dl, _SPACING_FLOOR)) + 1e-9)
    return max(float(2.0 ** (i / 2.0)), _SPACING_FLOOR)


def _labels(up: Pieces, dn: Pieces) -> str:
    def one(p: Pieces) -> str:
        out = []
        for law, c in p:
            k = getattr(law, "k", None)
            if k is not None and not getattr(law, "full", True):
                out.append(f"partial epoch {k:g}/{law.M:g} (sigma={law.sigma:g})")
            else:
                out.append(f"{c} x (sigma={law.sigma:g}, M={law.M:g})")
        return " + ".join(out) if out else "nothing"
    a, b = one(up), one(dn)
    return a if a == b else f"upper: {a}; lower: {b}"


def _spacing(runs: tuple[Run, ...], scale: float) -> float:
    """The first lattice spacing for a bracket of relative width ~ tol / 8 at epsilon ~ ``scale``
    (connect-the-dots error ~ E dl^2 / (s eps), s the single-epoch loss scale)."""
    E = max(sum(E + (1 if k else 0) for _, _, E, k in runs), 1)
    mu = math.sqrt(_mu2(runs))
    s = max(mu / math.sqrt(E), 1e-6)
    return math.sqrt(_DL_C * scale * s / E)


def _method(up: Pieces, dn: Pieces, dl: float | None, lattice: bool) -> str:
    laws = {law.method for law, _ in up + dn}
    m = f"exact ({'; '.join(sorted(laws))}"
    if lattice and dl is not None:
        m += f"; loss lattice of spacing {dl:.3g}"
    return m + f": {_labels(up, dn)})"


def _certified(up: Pieces, lattice: bool) -> str:
    c = "; ".join(sorted({law.certified for law, _ in up}))
    if lattice:
        c += "; lattice rounding (up for the upper end, down for the lower end) and the composition windows' tails"
    return c


def _estimated(up: Pieces, lattice: bool) -> str:
    e = "; ".join(sorted({law.estimated for law, _ in up}))
    if lattice:
        e += "; FFT round-off of the composition"
    return e


def _memory_note(needed: int, max_lattice: int) -> str:
    mb = needed * 8 * 6 / 2 ** 20  # ~6 float64 arrays of the window are alive at the peak
    return (f"meeting the tolerance needs a loss lattice of about {needed:,} points "
            f"(~{mb:,.0f} MB peak), above max_lattice={max_lattice:,}; "
            "pass a larger max_lattice to tighten it")


def build_bracket(up: Pieces, dn: Pieces, dl: float, max_lattice: int,
                  lattice: bool = False, reach: float = 1e-10) -> tuple[HistoryBracket, float, int]:
    """The bracket function at spacing ``dl``, coarsened until every window fits the memory cap:
    (function, spacing used, window size the cap refused (0 if none)).  ``lattice``: compose
    on the lattice even a single epoch (which otherwise answers from its own law)."""
    needed = 0
    while True:
        try:
            return HistoryBracket(up, dn, dl, max_lattice, lattice, reach), dl, needed
        except WindowTooLarge as exc:
            needed = max(needed, exc.needed)
            dl = _quantize(dl * 2.0 ** math.ceil(math.log2(1.05 * exc.needed / max_lattice)))


def history_epsilon(runs: tuple[Run, ...], delta: float, tolerance: float, max_lattice: int,
                    pieces: Pieces | None = None) -> tuple[PrivacyBracket, float]:
    """The certified bracket of epsilon(delta) after the history ``runs``, and the lattice
    spacing it used (nan where no lattice was needed).  ``pieces``: the laws to compose (both
    sides), where the caller has them already (a history without partial epochs)."""
    check_computable(runs, delta, "steps")
    b = _bucket_size(runs, delta, tolerance) if pieces is None else 1
    sides = _sides(runs, b) if pieces is None else (pieces, pieces)
    bracket, note, used, up, dn, lattice = _epsilon(runs, sides, delta, tolerance, max_lattice)
    if bracket[1] - bracket[0] > tolerance * bracket[1] and b > 1:
        # the bucket's Gaussian-DP estimate was too optimistic: account partial epochs exactly
        bracket, note, used, up, dn, lattice = _epsilon(runs, _sides(runs, 1), delta, tolerance, max_lattice)
    lo, hi = bracket
    if not math.isfinite(hi):
        _raise_unbounded(delta, used, up, dn, max_lattice)
    return PrivacyBracket(lo, hi, quantity="epsilon", at=delta, tolerance=tolerance,
                          method=_method(up, dn, used, lattice), certified=_certified(up, lattice),
                          estimated=_estimated(up, lattice), note=note), (used if lattice else math.nan)


def _epsilon(runs: tuple[Run, ...], sides: tuple[Pieces, Pieces], d: float, tol: float,
             max_lattice: int) -> tuple[tuple[float, float], str, float, Pieces, Pieces, bool]:
    up, dn = sides
    # (a tolerance below 1e-3 starts from the 1e-3 spacing and refines at most 4x a step while
    # that narrows the bracket: the numerical error terms, not the spacing, set the width there)
    dl = _quantize(_spacing(runs, max(tol, 1e-3) * max(_eps_gdp(d, _mu2(runs)), 1e-3)))
    lo, hi = 0.0, math.inf
    note = ""
    prev = math.inf
    used = dl
    for _ in range(_MAX_ITER):
        fn, used, needed = build_bracket(up, dn, dl, max_lattice, reach=tilted_reach(d))
        lo2, hi2 = invert(fn, d, fn.eps_start(d))
        lo, hi = max(lo, lo2), min(hi, hi2)  # both certified
        if not fn.uses_lattice or not math.isfinite(hi) or hi - lo <= tol * hi:
            break
        if hi - lo > 0.9 * prev:
            note = ("a finer loss lattice no longer narrows the bracket: the width comes from the "
                    "single-epoch laws (their certified error terms)")
            break
        prev = hi - lo
        if needed:
            note = _memory_note(needed, max_lattice)
            break
        if used <= _SPACING_FLOOR:
            note = f"the loss lattice reached its finest spacing ({_SPACING_FLOOR:.2g})"
            break
        # the width is second order in the spacing: shrink it by the square root of the miss
        shrink = math.sqrt(0.8 * tol * hi / (hi - lo))
        dl = _quantize(used * min(max(shrink, 0.25), 0.75))
    return (lo, hi), note, used, up, dn, _uses_lattice(up, dn)


def _uses_lattice(up: Pieces, dn: Pieces) -> bool:
    return _single(up) is None or (bool(dn) and _single(dn) is None)


def _raise_unbounded(d: float, dl: float, up: Pieces, dn: Pieces, max_lattice: int) -> None:
    fn, _, _ = build_bracket(up, dn, dl, max_lattice, reach=tilted_reach(d))
    low, floor = fn(EPS_MAX)
    if low >= d:
        raise DPBoundsError(
            f"no finite epsilon can be certified at delta={d:g}: epsilon exceeds {EPS_MAX:g} (certified "
            f"delta({EPS_MAX:g}) >= {low:.3g}: this history ({_labels(up, dn)}) gives almost no privacy)")
    if floor >= d:
        raise DPBoundsError(
            f"no finite epsilon can be certified at delta={d:g}: the certified delta bracket "
            f"cannot go below {floor:.3g} here (numerical error of the law and the lattice); "
            + (f"ask for delta >= {10 * floor:.1g}, or fewer epochs" if 10 * floor < 1 else
               "no delta below 1 can be certified at these parameters: use fewer epochs or more noise"))
    raise DPBoundsError(
        f"no finite epsilon can be certified at delta={d:g} for this history ({_labels(up, dn)}): "
        f"epsilon exceeds {EPS_MAX:g} (the loss lattice cannot resolve it within max_lattice); "
        "use method='gdp_asymptotic' for an approximation")


def history_delta_function(runs: tuple[Run, ...], eps_scale: float, tolerance: float,
                           max_lattice: int, pieces: Pieces | None = None) -> HistoryBracket:
    """eps -> certified (lower, upper) delta(eps) of the history, on one lattice sized for
    epsilons around ``eps_scale`` (partial epochs exact)."""
    up, dn = _sides(runs, 1) if pieces is None else (pieces, pieces)
    dl = _quantize(_spacing(runs, tolerance * max(eps_scale, 1e-3)))
    return build_bracket(up, dn, dl, max_lattice)[0]


def history_delta(runs: tuple[Run, ...], epsilon: float, tolerance: float, max_lattice: int,
                  pieces: Pieces | None = None) -> tuple[PrivacyBracket, float]:
    """The certified bracket of delta(epsilon) after the history ``runs`` (one lattice, sized from
    the larger of epsilon and the history's Gaussian-DP mu), and the spacing used (nan if none)."""
    mu2 = _mu2(runs)
    up, dn = _sides(runs, 1) if pieces is None else (pieces, pieces)
    dl = _quantize(_spacing(runs, tolerance * max(epsilon, math.sqrt(mu2), 1e-3)))
    fn, used, needed = build_bracket(up, dn, dl, max_lattice)
    lo, hi = fn(epsilon)
    lattice = fn.uses_lattice
    return PrivacyBracket(lo, hi, quantity="delta", at=epsilon, tolerance=tolerance,
                          method=_method(up, dn, used, lattice), certified=_certified(up, lattice),
                          estimated=_estimated(up, lattice),
                          note=_memory_note(needed, max_lattice) if needed else "",
                          warn=False), (used if lattice else math.nan)
