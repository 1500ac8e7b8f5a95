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
from dpbounds.accountant._cache import cached
from dpbounds.accountant._gdp import gdp_epsilon as _gdp_epsilon
from dpbounds.accountant._invert import invert
from dpbounds.accountant._lattice import WindowTooLarge
from dpbounds.accountant._params import check_max_lattice
from dpbounds.accountant._poisson_bounds import Direction, PairLower, upper_bound
from dpbounds.accountant._poisson_step import StepCells
from dpbounds.accountant._tilted_power import Plan, TailSums, TiltFamily, compose_plan, plan_tilted

FArr = NDArray[np.float64]

__all__ = ["PoissonPLD"]

_ULP = 2.220446049250313e-16
# Per-step relative allowance for the floating-point error of each cell mass (ndtr accurate to
# a few ulp, differences taken on the side where they do not cancel) and of its split between
# two lattice points (a difference of two masses that agree to about h: 8 ulp / h): an
# estimate, not a certified bound; see the notes of PoissonPLD.
_FLOAT_STEP = 64.0 * _ULP
_FLOAT_SPLIT = 8.0 * _ULP
_TAU = 1e-10  # tilted mass left outside each composition window (each side): relative to the mass near a query
_TAIL = 1e-28  # mass of each normal left beyond the outermost cells, over all steps
_MAX_SPACING = 0.5  # coarsest lattice tried when the window does not fit
_THETA_MAX = 50.0  # largest tilt per lattice step
_EPS_SCALE = 5.0  # epsilon brackets beyond it are aimed at the absolute width tolerance * 5
_GRID = 8  # lattice spacings are powers of 2^(1/_GRID): nearby queries share single steps
#: Largest total number of steps: beyond it the round-off of the composition (about
#: steps x 1e-15 relative) leaves no useful bracket.
STEPS_MAX = 10 ** 9
#: Noise multipliers outside [SIGMA_MIN, SIGMA_MAX] are refused: above, the losses of a step
#: are below the finest lattice; below, almost every loss exceeds the largest representable.
SIGMA_MIN, SIGMA_MAX = 0.05, 1e4




# ---------------------------------------------------------------------------------------
# public class
# ---------------------------------------------------------------------------------------
_Lattice = tuple[Direction, Direction]


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
        s in [0.05, 1e4] (below, almost every sampled step's loss exceeds 700, the largest the
        lattice represents; above, a step's losses are below any useful lattice spacing).
    sample_rate : float
        q in (0, 1].
    steps : int
        Number of steps T >= 1, at most 1e9 in all (beyond, the round-off bounds of the
        composition, about T x 1e-15 relative, leave no useful bracket).
    tolerance : float, optional
        Target relative width ``(upper - lower) / upper`` of the brackets, in (0, 1)
        (default 2e-3): of the epsilon bracket for :meth:`epsilon`, of the delta bracket
        for :meth:`delta`.  Epsilon brackets are also refined to an absolute width of at most
        5 tolerance (0.01 by default: the resolution of an accountant with absolute error
        0.01), which is the tighter of the two above epsilon = 5.
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
      K >= K*.  Mass beyond the outermost cells is merged into them (a post-processing too).
      delta is the larger direction's, so the remove direction's lower bound is one of it;
      the add direction's is composed only where its upper bound is the larger.
    * Composition: the single-step PMFs are exponentially tilted by e^{theta l} (theta the
      saddle point of the tail at the queried epsilon, or a fraction of it where the tilted
      law would grow a heavy right tail) and composed by one FFT product per array (every
      segment of a heterogeneous history in the same product), on a window that holds all
      but 1e-10 of the tilted mass near the query (Chernoff bounds of the tilted law; the
      FFT composition of Koskela, Jälkö, Honkela: "Computing tight differential privacy
      guarantees using FFT").  Untilting makes every error relative to the tail itself.

    Certified (in exact arithmetic): the discretisation of both directions, the mass beyond
    the cells and the composition window's tails (aliased and left-out mass charged at its
    untilted weight).  Bounded from the data (the per-coefficient error analysis of the
    Cooley-Tukey FFT, with its per-level constant taken as 8 unit round-offs, and of complex
    products; see Higham, "Accuracy and Stability of Numerical Algorithms"): the FFT
    round-off of the composition, about T u log2(window) relative to the tail whatever the
    lattice.  Estimated: the floating-point error of the cell masses (relative 64 ulp, plus
    8 ulp / h for the split of a cell between two lattice points, per step and compounded
    over the steps).  Down to delta ~ 1e-27 at T = 1e4 brackets stay tight; below the mass
    left beyond the cells (about 1e-30) :meth:`epsilon` raises ``ValueError``.

    The lattice spacing comes from a saddle-point model of the bracket's width,
    c T h^2 (theta + 1) / eps, at a first epsilon guess (a saddle-point approximation of the
    tail), and is refined from the measured gap while the bracket is wider than its goal and
    the window fits in ``max_lattice``.  Every lattice's bracket is certified and the
    intersection is returned; a tighter tolerance gives a finer lattice, so never a wider
    bracket.  A bracket that misses the tolerance says why in its ``note``
    (``tolerance_met`` is False; :meth:`epsilon` also issues a
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
        if self.steps > STEPS_MAX:
            raise DPBoundsError(f"the total number of steps must be <= {STEPS_MAX:.0e} (the composition's "
                                f"round-off leaves no useful bracket beyond), got {self.steps:,}")
        self.tolerance = V.check_scalar("tolerance", tolerance, V.Constraint.OPEN_UNIT)
        self.max_lattice = check_max_lattice(max_lattice)
        self.lattice_spacing = math.nan
        self.lattice_needed = 0
        # Gaussian-DP central-limit parameter (a step is at most as distinguishable as the
        # unsampled Gaussian step, mu = 1 / s): first guess of epsilon only
        self._mu = math.sqrt(sum(t * min(q * q * math.expm1(min(1.0 / (s * s), 700.0)), 1.0 / (s * s))
                                 for s, q, t in segs))

    # ---- lattice --------------------------------------------------------------------
    def _step(self, sigma: float, q: float, h: float, tail_total: float) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
        """The single-step lattice PMFs of both directions (shared by every history and query at h)."""
        # the mass left beyond the cells is spread over the steps: tail_total / T, T rounded up
        # to a power of 2 so that a growing history keeps reusing the same single steps
        tail = tail_total / 2.0 ** math.ceil(math.log2(self.steps))
        key = ("poisson-step", sigma, q, h, tail, self.max_lattice)

        def build() -> tuple[tuple[Any, Any], tuple[Any, Any]]:
            st = StepCells(sigma, q, h, tail, self.max_lattice)
            return st.remove(), st.add()

        return cached(key, build)

    def _parts(self, h: float, tail: float, d: int) -> tuple[list[tuple[int, FArr, int]], list[tuple[int, FArr, int]],
                                                            list[tuple[int, FArr, int]], float, float]:
        """Direction d's (0 remove, 1 add) single-step PMFs with their counts: upper, P, R; the
        composed offset of Q against R and the +inf mass of the upper."""
        ups, ps, rs = [], [], []
        log_fin = 0.0  # log P[no step at +inf loss]
        offset = 0.0  # composed Q(K) = e^{-(K + offset) h} R(K)
        for s, q, t in self.segments:
            (ju, pu, inf), (jl, pp, rr, cc) = self._step(s, q, h, tail)[d]
            offset += t * cc
            log_fin += t * math.log1p(-inf) if inf < 1.0 else -math.inf
            ups.append((ju, pu, t))
            ps.append((jl, pp, t))
            rs.append((jl, rr, t))
        return ups, ps, rs, offset, -math.expm1(log_fin)

    def _pair(self, ps: list[tuple[int, FArr, int]], rs: list[tuple[int, FArr, int]], theta: float,
              offset: float, h: float, like: Plan | None, target: float) -> PairLower:
        # P and R are nearly the upper PMF's law: its Chernoff parameters serve them
        pt = TailSums(compose_plan(plan_tilted(ps, theta, _TAU, self.max_lattice, like, target)), h,
                      discounted=False)
        rt = TailSums(compose_plan(plan_tilted(rs, theta, _TAU, self.max_lattice, like, target)), h, tails=False)
        return PairLower(pt, rt, offset)

    def _build(self, h: float, center: float, tail: float) -> _Lattice:
        """Both directions' composed lattices at spacing h, tilted for queries near eps = ``center``,
        the normals' mass beyond the cells at most ``tail`` over all steps.  The add direction's
        lower bound is left out (the remove direction's is a lower bound of the larger one)."""
        # a window spans at least ~10 standard deviations of the composed loss: refuse at once
        # where even that exceeds max_lattice (before any single step is built)
        sd = math.sqrt(max(self._cumulants(0.0)[2], 0.0))
        if 10.0 * sd / h > self.max_lattice:
            raise WindowTooLarge(int(min(10.0 * sd / h, 1e18)))
        # relative float allowance of the cell masses, compounded over the steps
        float_rel = math.expm1(self.steps * math.log1p(_FLOAT_STEP + _FLOAT_SPLIT / h))
        out = []
        for d in (0, 1):  # remove, add
            ups, ps, rs, offset, inf_mass = self._parts(h, tail, d)
            plan = self._tilt(ups, center / h)
            up = TailSums(compose_plan(plan), h)
            # (the merged pair is indexed by its cells' lower lattice points: a split for eps
            # lies near eps / h - offset)
            low = self._pair(ps, rs, plan.theta, offset, h, plan, center / h - offset) if d == 0 else None
            out.append(Direction(up, inf_mass, low, float_rel))
        return out[0], out[1]

    def _add_low(self, h: float, center: float, tail: float, theta: float) -> PairLower:
        """The add direction's lower bound (where its upper one exceeds the remove direction's)."""
        def build() -> PairLower:
            _, ps, rs, offset, _ = self._parts(h, tail, 1)
            return self._pair(ps, rs, theta, offset, h, None, center / h - offset)

        return cached(("poisson-pld-add-low", self.segments, h, center, tail, self.max_lattice, self.tolerance),
                      build)

    def _tilt(self, ups: list[tuple[int, FArr, int]], target: float) -> Plan:
        """The composition plan of the upper PMF, tilted for queries near lattice index ``target``.

        The saddle-point tilt (the tilted law centred at the target) makes the round-off and
        the window's tails relative to the mass there.  Where the tilted law has a heavy right
        tail (rare steps of large loss, amplified by the tilt) that needs a much larger window
        than a partial tilt, whose round-off near the target is still small: the smallest
        window is taken among the saddle-point tilt and its halves whose round-off estimate
        stays below 2 % of the tolerance.  (Any tilt gives certified bounds; this only chooses
        the cheapest.)
        """
        fam = TiltFamily(ups)
        theta = fam.saddle(target, _THETA_MAX)
        best = saddle = plan_tilted(ups, theta, _TAU, self.max_lattice, target=target)
        # a window within 1.2 x of a Gaussian law's of the untilted spread (+-7 sd) has no heavy
        # tail to shed (a heavy tail also inflates the tilted law's own spread)
        gauss = 14.0 * math.sqrt(fam.mean_var(0.0)[1]) + 16.0
        if theta == 0.0 or best.size <= 1.2 * gauss:
            return best
        for f in (0.5, 0.25):
            if f < 0.5 and best.size <= 2.0 * gauss:
                # a further halving must shed another 30 %, and tilted windows come out above
                # 1.1 x the Gaussian one: not worth its plan (on DP-SGD settings the quarter
                # tilt was taken only from halved windows above 2.8 x)
                break
            try:
                cand = plan_tilted(ups, theta * f, _TAU, self.max_lattice, target=target)
            except WindowTooLarge:
                continue
            if cand.size < 0.7 * best.size and cand.relative_error(target, saddle) <= 0.02 * self.tolerance:
                best = cand
            else:
                break
        return best

    def _lattice(self, h: float, center: float, tail: float) -> _Lattice:
        key = ("poisson-pld", self.segments, h, center, tail, self.max_lattice, self.tolerance)
        return cached(key, lambda: self._build(h, center, tail))

    def _delta_parts(self, eps: float, h: float, center: float, tail: float) -> tuple[float, float, float, float]:
        """(lower, upper, discretisation gap, error-term gap) at eps; gaps of the direction giving the upper."""
        rem, add = self._lattice(h, center, tail)
        assert rem.low is not None
        ups = [upper_bound(rem.up, eps), upper_bound(add.up, eps)]
        if any(u is None for u in ups):  # eps below the usable part of a tilted window: no upper bound
            v, ev = rem.low(eps)
            return max(v - ev - rem.float_rel * abs(v), 0.0), 1.0, 0.0, 1.0
        his = [u + eu + dr.float_rel * abs(u) + dr.inf_mass for dr, (u, eu) in zip((rem, add), ups)]  # type: ignore[misc]
        d = 0 if his[0] >= his[1] else 1  # the direction giving the upper bound
        # the larger direction's delta is at least the remove direction's; the add direction's
        # lower bound is needed only where its upper one is the larger
        low = rem.low if d == 0 else self._add_low(h, center, tail, add.up.theta)
        v, ev = low(eps)
        fl_low = rem.float_rel * abs(v)
        lo = v - ev - fl_low
        if d == 1:
            v0, ev0 = rem.low(eps)
            lo = max(lo, v0 - ev0 - rem.float_rel * abs(v0))
        u, _ = ups[d]  # type: ignore[misc]
        return max(lo, 0.0), min(his[d], 1.0), max(u - v, 0.0), his[d] - u + ev + fl_low

    def _delta_at(self, eps: float, h: float, center: float, tail: float) -> tuple[float, float]:
        lo, hi, _, _ = self._delta_parts(eps, h, center, tail)
        return lo, hi

    def _cumulants(self, theta: float) -> tuple[float, float, float]:
        """K, K', K'' at theta of the composed remove-direction loss (K its cumulant generating function)."""
        k0 = k1 = k2 = 0.0
        for s, q, t in self.segments:
            c0, c1, c2 = _tilted_loss_moments(s, q, theta)
            k0, k1, k2 = k0 + t * c0, k1 + t * c1, k2 + t * c2
        return k0, k1, k2

    def _saddle(self, eps: float) -> tuple[float, float, float]:
        """(theta, K(theta), K''(theta)) with theta >= 0 and K'(theta) = eps: the saddle point of
        the composed remove-direction loss, by Newton on a quadrature over x (proposals only)."""
        theta = 0.0
        for _ in range(30):
            k0, k1, k2 = self._cumulants(theta)
            if k1 >= eps and theta == 0.0:
                return 0.0, k0, k2
            if k2 <= 0.0 or abs(k1 - eps) <= 1e-3 * max(eps, 1e-300):
                break
            theta = min(max(theta + (eps - k1) / k2, 0.5 * theta), 1e4)
        return theta, k0, k2

    def _eps_guess(self, d: float) -> tuple[float, float]:
        """epsilon(d) by the saddle-point (Bahadur-Rao) approximation of the remove direction,
        delta ~ e^{K(theta) - theta K'(theta)} / (theta (theta + 1) sqrt(2 pi K''(theta))) at
        eps = K'(theta), solved for theta by Newton (d log delta / d theta ~ -theta K''),
        within a factor 4 of the Gaussian-DP guess; (eps, its saddle point theta, or nan) (a
        first tilt centre and lattice spacing: no bound rests on it)."""
        gdp = float(_gdp_epsilon(d, self._mu)) if self._mu > 0 else 1.0
        if not (0.0 < gdp < 1e4):
            gdp = 1.0
        theta = self._saddle(gdp)[0]
        if theta < 0.05:
            return gdp, theta
        log_d = math.log(d)
        eps, theta_eps = gdp, math.nan
        for _ in range(20):
            k0, k1, k2 = self._cumulants(theta)
            if k2 <= 0.0:
                return gdp, theta
            eps, theta_eps = k1, theta
            excess = k0 - theta * k1 - math.log(theta * (theta + 1.0) * math.sqrt(2.0 * math.pi * k2)) - log_d
            step = excess / (theta * k2)
            theta = min(max(theta + step, 0.5 * theta), 2.0 * theta)
            if abs(step) <= 1e-3 * theta or theta < 0.05:
                break
        return (eps, theta_eps) if 0.25 * gdp <= eps <= 4.0 * gdp else (gdp, math.nan)

    def _spacing_for(self, eps_guess: float, scale: float = math.inf, theta: float = math.nan) -> float:
        # second-order discretisation: each step's cells bend the tilted law e^{theta l} that
        # weighs the tail at eps by about h^2 theta^2 / 8, theta the saddle point at eps; in
        # epsilon the relative width comes to about c T h^2 (theta + 1) / eps, c = 0.13 - 0.16 on
        # DP-SGD settings with 20 or more expected sampled steps, up to ~0.6 with 1 - 20 and ~1.7
        # below (a few sampled steps: far from a Gaussian law).  0.8 of the tolerance is aimed
        # at; the refinement corrects the spacing from the measured gap.
        eps = max(eps_guess, 1e-3)
        if not theta >= 0.0:
            theta = self._saddle(eps)[0]
        sampled = sum(q * t for _, q, t in self.segments)
        c = 0.14 if sampled >= 20.0 else (0.3 if sampled >= 1.0 else 0.6)
        goal = self.tolerance * min(1.0, scale / eps)
        h = math.sqrt(0.8 * goal * eps / (c * self.steps * (theta + 1.0)))
        return _snap(min(max(h, 1e-14), 0.1 * _MAX_SPACING))

    def _refine(self, query: Callable[[float, float], tuple[float, float]],
                at: Callable[[tuple[float, float]], float], h: float, center: float, tail: float,
                trivial: tuple[float, float], fixed_center: bool, scale: float = math.inf) -> _Refined:
        """Run ``query(h, center)``, then at finer spacings while the bracket misses its goal.

        The goal is a relative width of ``tolerance``, and an absolute width of
        ``tolerance * scale`` (the epsilon brackets of large epsilon: as resolved as an
        accountant of absolute error 5 tolerance, 0.01 by default).

        ``at(bracket)`` is the eps where the delta gap is examined (and, unless
        ``fixed_center``, where the next lattice is tilted).  Every bracket found is certified,
        so their intersection is returned (``trivial`` if no window fits at all), with a note
        saying why the tolerance was missed ("" if it was met).  Uses no mutable state of the
        object (concurrent queries are safe); the caller publishes the outcome.
        """
        best: tuple[float, float] | None = None
        needed = 0
        spacing = math.nan
        note = ""
        lattices = coarsenings = 0
        disc = errs = 0.0
        recentred = False
        while lattices < 8 and coarsenings < 30:
            try:
                res = query(h, center)
            except WindowTooLarge as exc:
                needed = max(needed, exc.needed)
                note = self._memory_note(needed)
                if best is not None:
                    break
                coarsenings += 1  # coarsen until the window fits: certified, only wider
                h = _snap(h * max(1.1 * exc.needed / self.max_lattice, 1.5))
                if h > _MAX_SPACING:
                    break
                continue
            lattices += 1
            spacing = h
            best = res if best is None else (max(best[0], res[0]), min(best[1], res[1]))
            w = (best[1] - best[0]) / best[1] if best[1] > 0 else 0.0
            goal = self.tolerance * min(1.0, scale / best[1]) if best[1] > 0 else self.tolerance
            if w <= goal:
                note = ""
                break
            e = at(best)
            if not fixed_center and center != 0.0 and not recentred and (
                    not math.isfinite(e) or best[0] <= 0.0 or w > 0.5):
                # the tilted window missed the answer (a poor first guess): compose untilted,
                # which is usable at every epsilon, then tilt where it lands
                center, recentred, note = 0.0, True, ""
                continue
            if note or not math.isfinite(e):
                break
            try:
                _, _, disc, errs = self._delta_parts(e, h, center, tail)
            except WindowTooLarge as exc:  # (the add direction's lower bound, built on demand)
                note = self._memory_note(max(needed, exc.needed))
                break
            if errs > disc and not fixed_center and not recentred and abs(e - center) > 1e-9 * e:
                # the error terms dominate, the tilt's centre is away from the answer: re-tilt there
                center, recentred = e, True
                continue
            if disc <= 0.0:  # nothing left to refine: the error terms set the width
                if errs > 0.0:
                    note = self._roundoff_note()
                break
            target = 0.7 * (disc + errs) * goal / w  # delta gap that would meet it
            if errs >= 0.5 * target:
                note = self._roundoff_note()
                break
            # spacing h -> r h moves the discretisation gap to disc r^2 (second order)
            r = min(max(math.sqrt((target - errs) / disc), 0.1), 0.9)
            h_new = _snap(h * r)
            h = h_new if h_new < h else _snap(0.9 * h)
            if not fixed_center:
                center, recentred = e, False
        else:
            if best is not None and not note:
                note = (self._roundoff_note() if errs >= disc else
                        f"the refinement stopped after {lattices} lattices "
                        f"(last spacing {spacing:.3g})")
        return _Refined(trivial if best is None else best, note, spacing, needed)

    def _memory_note(self, n: int) -> str:
        return (f"meeting the tolerance needs a composition window of about {n:,} lattice points "
                f"(~{n * 8 * 6 / 2 ** 20:,.0f} MB peak), above max_lattice={self.max_lattice:,}; "
                "pass a larger max_lattice to tighten it")

    def _roundoff_note(self) -> str:
        return ("the width comes from the error terms (bounds on the round-off of the composition "
                f"over {self.steps} steps and of the cell masses, and the mass left beyond the outermost "
                "cells): no lattice spacing narrows it further")

    def _bracket(self, res: _Refined, quantity: str, at: float, warn: bool) -> PrivacyBracket:
        self.lattice_spacing, self.lattice_needed = res.spacing, res.needed  # reported only
        return PrivacyBracket(
            res.bracket[0], res.bracket[1], quantity=quantity, at=at, tolerance=self.tolerance,
            method=(f"exact Poisson-subsampled Gaussian PLD (loss lattice of spacing "
                    f"{res.spacing:.3g} composed over {self.steps} steps by tilted FFT)"),
            certified=("cell discretisation (connect-the-dots split up, merged cell pair down), "
                       "mass beyond the cells, composition window tails; FFT round-off of the "
                       "tilted composition (bounded per coefficient)"),
            estimated="floating-point error of the cell masses",
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
        res = self._refine(lambda h, c: self._delta_at(eps, h, c, _TAIL), lambda b: eps,
                           self._spacing_for(max(eps, self._mu)), eps, _TAIL, (0.0, 1.0), fixed_center=True)
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
        guess, theta = self._eps_guess(d)
        # slope of sqrt(-2 log delta(eps)) in eps, about 1 / mu for Gaussian-like tails (a
        # proposal for the search only)
        slope = 1.0 / min(max(self._mu, 1e-3), 1e3)
        # the normals' mass left beyond the cells goes to +inf loss in the upper bound: at most
        # 1e-4 of the tolerance of delta (a power of 10, so nearby queries share single steps)
        tail = min(max(10.0 ** math.floor(math.log10(1e-4 * self.tolerance * d)), _TAIL), 1e-12)
        res = self._refine(lambda h, c: invert(lambda e: self._delta_at(e, h, c, tail), d, start=(c, slope)),
                           _mid, self._spacing_for(guess, _EPS_SCALE, theta), guess, tail, (0.0, math.inf),
                           fixed_center=False, scale=_EPS_SCALE)
        if not math.isfinite(res.bracket[1]):
            if not math.isfinite(res.spacing):
                raise DPBoundsError(f"no finite epsilon can be certified at delta={d:g}: no loss lattice "
                                 f"of spacing <= {_MAX_SPACING:g} fits: {res.note}")
            self._raise_unbounded(d, res.spacing, tail)
        return self._bracket(res, "epsilon", d, warn=True)

    def _raise_unbounded(self, d: float, spacing: float, tail: float) -> None:
        lo, hi = 0.0, 1.0
        for center in (1e4, 0.0):  # tilted for eps = 1e4, else untilted (a smaller window)
            try:
                lo, hi = self._delta_at(1e4, spacing, center, tail)
                break
            except WindowTooLarge:
                continue
        if lo >= d:
            raise DPBoundsError(
                f"no finite epsilon can be certified at delta={d:g}: epsilon exceeds 1e4 "
                f"(certified delta(1e4) >= {lo:.3g}; the noise gives almost no privacy over "
                f"{self.steps} steps)")
        raise DPBoundsError(
            f"no finite epsilon can be certified at delta={d:g}: the certified delta bracket "
            f"cannot go below {hi:.3g} here (floating-point error bounds of {self.steps} steps, "
            f"window tails); " + (f"ask for delta >= {10 * hi:.1g}" if 10 * hi < 1 else
                                  "no delta below 1 can be certified at these parameters: use fewer steps or more noise"))


def _check_segment(sigma: Any, q: Any, t: Any, prefix: str) -> tuple[float, float, int]:
    s = V.check_scalar(prefix + "noise_multiplier", sigma, V.Constraint.FINITE_POSITIVE)
    if not (SIGMA_MIN <= s <= SIGMA_MAX):
        raise DPBoundsError(f"{prefix}noise_multiplier must be in [{SIGMA_MIN:g}, {SIGMA_MAX:g}] for the exact "
                            f"Poisson accountant, got {s!r}")
    qa = V.check_rate(prefix + "sample_rate", q)
    steps = V.check_count(prefix + "steps", t, minimum=1, maximum=STEPS_MAX)
    return s, qa, steps


def _tilted_loss_moments(sigma: float, q: float, theta: float) -> tuple[float, float, float]:
    """log E_P[e^{theta L}], and the mean and variance of the remove-direction loss L(x) of one
    step under P tilted by e^{theta L}.

    E_P[e^{theta L} g(L)] = E_Q[e^{(theta + 1) L} g(L)] with Q = N(0, s^2): a Riemann sum over x
    on a grid that follows the tilted integrand's peak (near x = theta + 1 where L is linear).
    """
    lo = -12.0 * sigma
    hi = 1.0 + 12.0 * sigma + max(theta + 1.0, 0.0) * (1.0 if q < 1.0 else sigma * sigma)
    x = np.linspace(lo, hi, 201)
    z = (2.0 * x - 1.0) / (2.0 * sigma * sigma)
    if q == 1.0:
        loss = z
    else:  # as remove_loss: log1p where q e^z is moderate (no cancellation), else the log-sum form
        t = q * np.expm1(np.minimum(z, 700.0))
        with np.errstate(divide="ignore"):
            big = z + np.log(q + (1.0 - q) * np.exp(-np.maximum(z, 0.0)))
        loss = np.where(t < 1e300, np.log1p(t), big)
    lw = (theta + 1.0) * loss - 0.5 * (x / sigma) ** 2
    m = float(np.max(lw))
    w = np.exp(lw - m)
    tot = float(np.sum(w))
    m1 = float(np.sum(w * loss)) / tot
    m2 = float(np.sum(w * (loss - m1) ** 2)) / tot
    log_mgf = m + math.log(tot * (x[1] - x[0]) / (sigma * math.sqrt(2.0 * math.pi)))
    return log_mgf, m1, m2


def _mid(b: tuple[float, float]) -> float:
    """The middle of an epsilon bracket (its upper end while the lower one is 0)."""
    return 0.5 * (b[0] + b[1]) if b[0] > 0.0 else b[1]


def _snap(h: float) -> float:
    """h rounded down to a power of 2^(1/_GRID) (queries at nearby spacings share their single steps)."""
    return float(2.0 ** (math.floor(_GRID * math.log2(h) + 1e-9) / _GRID))
