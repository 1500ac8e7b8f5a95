"""The parameter planner: the noise multiplier sigma and the rounds per epoch M that meet a
privacy target with the least noise -- the inverse problem of Section 5 of "Trade-off Functions
for DP-SGD with Subsampling based on Random Allocation: Tight Upper and Lower Bounds".

With N examples, E epochs of random allocation in M rounds each and clipping norm C, the averaged
clipped gradient of a round carries Gaussian noise of standard deviation C sigma M / N (expected
batch N / M).  The privacy target fixes, for each sigma, the smallest admissible M; the planner
tabulates that front over a sigma grid and refines the best sigma by a one-dimensional search
(docs/planner.md).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError, PrecisionWarning

__all__ = ["Plan", "PlanPoint", "plan"]

FArr = NDArray[np.float64]

_ACCOUNTANTS = ("theorem31", "exact")
_OBJECTIVES = ("noise", "batch_size")
_COEFFICIENTS = ("exact", "simplified")

#: Default sigma grids: decade-aligned log grids from 10^-0.5 = 0.316 to 10^1.3 = 19.95 (inside the
#: exact accountant's range [0.3, 20]); decade-aligned so that sigma = 1 is on them exactly.
#: Theorem 3.1 is vectorised (40 points per decade); the exact accountant costs ~10 ms to 1 s per
#: evaluation and ~15 evaluations per sigma (10 points per decade).
_DEFAULT_GRID = {"theorem31": 10.0 ** (np.arange(-20, 53) / 40.0), "exact": 10.0 ** (np.arange(-5, 14) / 10.0)}
#: Fewest rounds per epoch: Theorem 3.1 needs M >= 3, the exact accountant M >= 2.
_ROUNDS_MIN = {"theorem31": 3, "exact": 2}
#: Golden-section fraction 2 - phi.
_GOLD = 0.3819660112501051


@dataclass(frozen=True)
class PlanPoint:
    """One planned configuration: noise multiplier, rounds per epoch, batch size and noise.

    Attributes
    ----------
    sigma : float
        Noise multiplier.
    rounds : int
        M, the smallest admissible number of rounds per epoch at ``sigma``.
    batch_size : float
        Expected batch size N / M.
    noise : float
        Standard deviation C sigma M / N of the noise on the averaged clipped gradient.
    achieved_delta : float
        The certified delta at (sigma, M): Theorem 3.1's delta_min composed over the epochs, or
        the upper end of the exact accountant's bracket of delta(epsilon).
    notes : tuple of str
        What the optimum is bound by, when it is not an interior minimum (the end of the sigma
        range searched, or the fewest rounds allowed).
    """

    sigma: float
    rounds: int
    batch_size: float
    noise: float
    achieved_delta: float
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able fields."""
        return {"sigma": self.sigma, "rounds": self.rounds, "batch_size": self.batch_size,
                "noise": self.noise, "achieved_delta": self.achieved_delta, "notes": list(self.notes)}


def _readonly(a: Any) -> FArr:
    arr = np.array(a, dtype=np.float64)
    arr.setflags(write=False)
    return arr


def _num(v: float) -> float | None:
    return v if math.isfinite(v) else None


@dataclass(frozen=True, eq=False)
class Plan:
    """Result of :func:`plan`: the Pareto front over sigma and the optimum.

    Attributes
    ----------
    dataset_size, epochs : int
        N and E.
    clip_norm : float
        C.
    delta : float
        Target delta (the total over the E epochs).
    epsilon : float or None
        Target epsilon (``accountant="exact"``; ``None`` for Theorem 3.1, which certifies
        f >= 1 - a - delta, i.e. epsilon = 0).
    accountant, coefficient, objective : str
        How the target was checked (the coefficient is Theorem 3.1's; with the exact accountant
        it serves the comparison column ``theorem31_rounds``) and what was optimised.
    rtol, tolerance : float
        Relative resolution of the optimum's sigma; relative width of the exact accountant's
        brackets (NaN for Theorem 3.1).
    sigma : ndarray
        The sigma grid (ascending).
    rounds : ndarray
        Smallest admissible integer M <= N at each sigma (NaN where there is none; see
        ``reasons``).
    batch_size, noise, achieved_delta : ndarray
        N / M, C sigma M / N and the certified delta at (sigma, M) (NaN where there is no M).
    reasons : tuple of str
        Why a sigma has no admissible M ('' where it has one).
    theorem31_rounds : ndarray or None
        With the exact accountant: the M that Theorem 3.1 needs for the same delta (it certifies
        (0, delta), hence (epsilon, delta) for every epsilon >= 0), for comparison; inf where it
        certifies none.  None for ``accountant="theorem31"``.
    optimum : PlanPoint or None
        The best configuration found (None if no sigma of the grid admits an M).
    method : str
        A one-line description of the check and the optimisation.
    """

    dataset_size: int
    epochs: int
    clip_norm: float
    delta: float
    epsilon: float | None
    accountant: str
    coefficient: str
    objective: str
    rtol: float
    tolerance: float
    sigma: FArr
    rounds: FArr
    batch_size: FArr
    noise: FArr
    achieved_delta: FArr
    reasons: tuple[str, ...]
    theorem31_rounds: FArr | None
    optimum: PlanPoint | None
    method: str

    @property
    def admissible(self) -> NDArray[np.bool_]:
        """True at the sigmas that have an admissible M <= N."""
        return np.isfinite(self.rounds)

    @property
    def batch_gain(self) -> FArr | None:
        """Exact accountant: theorem31_rounds / rounds, how many times larger a batch the exact
        accountant allows than Theorem 3.1 at the same sigma (None for Theorem 3.1)."""
        if self.theorem31_rounds is None:
            return None
        with np.errstate(invalid="ignore"):
            return np.asarray(self.theorem31_rounds / self.rounds, dtype=np.float64)

    def target(self) -> str:
        """The privacy target in words."""
        over = f"over {self.epochs} epoch{'s' if self.epochs != 1 else ''}"
        if self.accountant == "theorem31":
            return f"f(a) >= 1 - a - {self.delta:g} {over} (Theorem 3.1, coefficient '{self.coefficient}')"
        return f"({self.epsilon:g}, {self.delta:g})-DP {over} (exact random-allocation accountant)"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able fields (non-finite numbers as None)."""
        gain = self.batch_gain
        return {
            "dataset_size": self.dataset_size, "epochs": self.epochs, "clip_norm": self.clip_norm,
            "delta": self.delta, "epsilon": self.epsilon, "accountant": self.accountant,
            "coefficient": self.coefficient, "objective": self.objective, "rtol": self.rtol,
            "tolerance": _num(self.tolerance), "method": self.method, "target": self.target(),
            "front": [
                {"sigma": float(s), "rounds": None if not math.isfinite(m) else int(m),
                 "batch_size": _num(float(b)), "noise": _num(float(z)), "achieved_delta": _num(float(d)),
                 "reason": r,
                 **({} if self.theorem31_rounds is None or gain is None else
                    {"theorem31_rounds": _num(float(self.theorem31_rounds[i])), "batch_gain": _num(float(gain[i]))})}
                for i, (s, m, b, z, d, r) in enumerate(zip(self.sigma, self.rounds, self.batch_size, self.noise,
                                                           self.achieved_delta, self.reasons))],
            "optimum": None if self.optimum is None else self.optimum.to_dict(),
        }

    def table(self) -> str:
        """The front and the optimum as aligned text."""
        lines = [f"plan: N = {self.dataset_size}, E = {self.epochs}, C = {self.clip_norm:g}; target {self.target()}",
                 f"      {self.method}"]
        exact = self.theorem31_rounds is not None
        head = f"{'sigma':>9} {'M':>13} {'batch N/M':>11} {'noise CsM/N':>12} {'delta at M':>11}"
        if exact:
            head += f" {'M Thm 3.1':>13} {'batch gain':>10}"
        lines.append(head)
        gain = self.batch_gain
        for i in range(self.sigma.size):
            s = float(self.sigma[i])
            if not math.isfinite(self.rounds[i]):
                lines.append(f"{s:9.4g} {'-':>13}  {self.reasons[i]}")
                continue
            row = (f"{s:9.4g} {int(self.rounds[i]):13d} {self.batch_size[i]:11.4g} {self.noise[i]:12.4g}"
                   f" {self.achieved_delta[i]:11.4g}")
            if exact and self.theorem31_rounds is not None and gain is not None:
                t = float(self.theorem31_rounds[i])
                row += f" {t:13.6g} {gain[i]:10.4g}" if math.isfinite(t) else f" {'none':>13} {'-':>10}"
            lines.append(row)
        o = self.optimum
        if o is None:
            lines.append("optimum: none -- no sigma of the grid admits an M <= N")
        else:
            what = "least noise" if self.objective == "noise" else "largest batch"
            lines.append(f"optimum ({what}, sigma refined to rtol {self.rtol:g}): sigma = {o.sigma:.6g}, "
                         f"M = {o.rounds}, batch N/M = {o.batch_size:.6g}, noise = {o.noise:.6g}, "
                         f"delta at M = {o.achieved_delta:.4g}")
            lines.extend(f"  note: {n}" for n in o.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.table()


class _Theorem31:
    """Admissibility by Theorem 3.1 (f >= 1 - a - delta over E epochs, per-epoch delta composed)."""

    def __init__(self, n: int, delta: float, epochs: int, coefficient: str) -> None:
        self.n, self.delta, self.epochs = n, delta, epochs
        # checked by plan() against _COEFFICIENTS
        self.coefficient = cast(Literal["exact", "simplified"], coefficient)

    def rounds_many(self, sigma: FArr) -> FArr:
        from dpbounds.allocation_bound import rounds_required

        return np.asarray(rounds_required(sigma, self.delta, coefficient=self.coefficient, epochs=self.epochs),
                          dtype=np.float64).reshape(sigma.shape)

    def point(self, sigma: float) -> tuple[float, float, str]:
        """(M, certified delta at M, reason): the smallest admissible M <= N, or NaN and why."""
        m = float(self.rounds_many(np.array([sigma]))[0])
        if not math.isfinite(m):
            return math.nan, math.nan, "Theorem 3.1 certifies the target for no M <= 2^53"
        if m > self.n:
            return (math.nan, math.nan, f"Theorem 3.1 needs M = {m:.6g} rounds > dataset_size = {self.n} "
                    "(fewer than one example per round)")
        return m, self.achieved(sigma, m), ""

    def achieved(self, sigma: float, m: float) -> float:
        from dpbounds.allocation_bound import delta_bound
        from dpbounds.epochs import compose_delta

        return float(compose_delta(delta_bound(sigma, m, coefficient=self.coefficient), self.epochs))

    def admits(self, sigma: float, m: float) -> bool:
        # the three conditions of rounds_required are monotone in M: M admits iff M >= M_min
        return bool(self.rounds_many(np.array([sigma]))[0] <= m)


class _Exact:
    """Admissibility by the exact random-allocation accountant: certified delta(epsilon) <= delta."""

    def __init__(self, n: int, delta: float, epsilon: float, epochs: int, tolerance: float) -> None:
        from dpbounds.accountant._params import ROUNDS_MAX, SIGMA_MAX, SIGMA_MIN

        self.n, self.delta, self.epsilon, self.epochs, self.tolerance = n, delta, epsilon, epochs, tolerance
        self.sigma_range = (SIGMA_MIN, SIGMA_MAX)
        self.m_max = int(min(n, ROUNDS_MAX))
        self.capped = n > ROUNDS_MAX
        self._seen: dict[tuple[float, int], float] = {}
        #: some bracket straddled the target delta: its upper end decided (conservatively) against
        #: an M that its lower end would admit
        self.undecided = False

    def achieved(self, sigma: float, m: float) -> float:
        """Upper end of the certified bracket of delta(epsilon) after E epochs of M rounds."""
        from dpbounds.accountant import RandomAllocationAccountant

        key = (sigma, int(m))
        if key not in self._seen:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrecisionWarning)  # the upper end stays certified
                acc = RandomAllocationAccountant(sigma, int(m), epochs=self.epochs, tolerance=self.tolerance)
                bracket = acc.get_delta_bracket(self.epsilon)
            self.undecided |= bracket.lower <= self.delta < bracket.upper
            self._seen[key] = bracket.upper
        return self._seen[key]

    def admits(self, sigma: float, m: float) -> bool:
        return self.achieved(sigma, m) <= self.delta

    def _guess(self, sigma: float) -> int:
        """M from the Gaussian-DP asymptotics, mu^2 = E (e^{1/sigma^2} - 1) / (M - 1) (a start only)."""
        from dpbounds.gdp import gdp_delta

        lo, hi = 1e-8, 1e3  # mu with gdp_delta(epsilon, mu) = delta, by bisection in log mu
        for _ in range(60):
            mid = math.sqrt(lo * hi)
            if float(gdp_delta(self.epsilon, mid)) > self.delta:
                hi = mid
            else:
                lo = mid
        m = 1.0 + self.epochs * math.expm1(min(1.0 / (sigma * sigma), 700.0)) / (lo * lo)
        return int(min(max(m, 2.0), float(self.m_max)))

    def point(self, sigma: float) -> tuple[float, float, str]:
        from dpbounds.calibration import _largest_count

        lo_s, hi_s = self.sigma_range
        if not lo_s <= sigma <= hi_s:
            return math.nan, math.nan, f"sigma outside the exact accountant's range [{lo_s:g}, {hi_s:g}]"
        lo, hi = _ROUNDS_MIN["exact"], self.m_max  # hi >= 2: plan() requires dataset_size >= 2
        d_hi = self.achieved(sigma, hi)
        if d_hi > self.delta:
            limit = "M = N" if not self.capped else "M = 1e9 (the exact accountant's largest)"
            return (math.nan, math.nan, f"not even {limit} meets the target: certified "
                    f"delta({self.epsilon:g}) = {d_hi:.4g} > {self.delta:g}")
        # the largest M that is NOT admissible, plus one; M = lo - 1 stands for "none" without an
        # evaluation (the smallest M are the costliest to evaluate, so they are evaluated only if
        # the search goes there).  The bisection ends on two evaluated neighbours: M - 1 fails.
        m = _largest_count(lambda k: k < lo or not self.admits(sigma, k), self._guess(sigma), lo - 1, hi - 1,
                           "number of rounds") + 1
        return float(m), self.achieved(sigma, m), ""


#: Longest sigma grid :func:`plan` accepts: each grid point is a search over M (about 20
#: evaluations of the bound; about a second each with the exact accountant), and the front holds
#: six arrays of the grid's length.  A longer grid is refused before any work.
MAX_SIGMA_GRID = 100_000


def _sigma_grid(sigma: Any, accountant: str) -> FArr:
    if sigma is None:
        return np.array(_DEFAULT_GRID[accountant], dtype=np.float64)
    if np.size(sigma) > MAX_SIGMA_GRID:
        raise DPBoundsError(f"sigma: a grid of at most {MAX_SIGMA_GRID:,} values (each is a search over the "
                            f"rounds), got {np.size(sigma):,}")
    arr = V.check_finite_positive("sigma", sigma)
    if arr.ndim > 1:
        raise DPBoundsError(f"sigma must be a number or a 1-d grid, got an array of shape {arr.shape}")
    return np.unique(arr.reshape(-1))  # ascending; a repeated value would only repeat a row


def plan(dataset_size: int, *, delta: float | None = None, epsilon: float | None = None, epochs: int = 1,
         clip_norm: float = 1.0, accountant: str = "theorem31", coefficient: str = "exact",
         sigma: Any = None, objective: str = "noise", rtol: float = 1e-4, tolerance: float = 2e-3) -> Plan:
    """Plan DP-SGD with random allocation: the sigma and M with the least noise that meet a privacy target.

    For each noise multiplier sigma of a grid, the smallest integer number of rounds per epoch
    M <= N that meets the target (the front), the expected batch size N / M and the noise
    standard deviation C sigma M / N on the averaged clipped gradient; then the sigma that
    minimises the noise (or maximises the batch size), refined between grid points by a
    golden-section search in log sigma and finished by bisection to the smallest sigma that
    still admits the optimal M.  This is the inverse of Section 5 of "Trade-off Functions for
    DP-SGD with Subsampling based on Random Allocation: Tight Upper and Lower Bounds".

    Parameters
    ----------
    dataset_size : int
        N, the number of examples (an integer >= 2; ``1.14e7`` is accepted, ``1.5e0`` is not).
    delta : float
        Target delta in (0, 1), the total over the ``epochs``.
    epsilon : float, optional
        Target epsilon >= 0 -- only with ``accountant="exact"``, where it is required.
        ``epsilon=0`` asks for f >= 1 - a - delta, the form Theorem 3.1 certifies.
    epochs : int
        E >= 1 whole epochs.
    clip_norm : float
        C > 0 (scales the noise only).
    accountant : {"theorem31", "exact"}
        ``"theorem31"``: M admits when Theorem 3.1 certifies f(a) >= 1 - a - delta_epoch per
        epoch (:func:`dpbounds.rounds_required` with ``epochs``; E epochs compose to
        f >= (1 - delta_epoch)^E - a).  ``"exact"``: M admits when the upper end of the exact
        random-allocation accountant's certified bracket of delta(epsilon) after E epochs is
        <= delta (:class:`dpbounds.RandomAllocationAccountant`; sigma in [0.3, 20]).
    coefficient : {"exact", "simplified"}
        Theorem 3.1's Berry-Esseen coefficient (see :func:`dpbounds.delta_bound`);
        ``"simplified"`` reproduces the paper's Table 1.  With the exact accountant it is used
        for the comparison column ``theorem31_rounds``.
    sigma : float or array_like, optional
        The grid (sorted ascending, repeats dropped; at most ``MAX_SIGMA_GRID`` = 100,000
        values).  Default: a log grid from 0.316 to 19.95,
        decade-aligned so that it contains 1 (40 points per decade for Theorem 3.1, 10 for the
        exact accountant, whose evaluations are costlier).
    objective : {"noise", "batch_size"}
        Minimise C sigma M / N (default), or maximise N / M (ties: the smaller sigma).
    rtol : float
        Relative resolution of the optimum's sigma, in (0, 1).
    tolerance : float
        Relative width of the exact accountant's brackets (the upper end decides).

    Returns
    -------
    Plan
        The front (``sigma``, ``rounds``, ``batch_size``, ``noise``, ``achieved_delta``,
        ``reasons``) and the ``optimum``.

    Notes
    -----
    Guarantees, by construction: at every front point M admits and M - 1 does not (M is the
    exact minimum for Theorem 3.1, whose conditions are monotone in M; the exact accountant's
    bisection ends on two evaluated neighbours, so its minimality assumes only that the
    certified delta(epsilon) decreases in M, as it does for random allocation).  The optimum is
    the best of every point evaluated (grid and search), so it is no worse than any front
    point; its sigma admits its M and sigma / (1 + rtol) does not admit that M (unless the
    optimum sits at the lower end of the grid or at the fewest rounds, which ``optimum.notes``
    says).  The optimisation is local: it refines around the best grid point.

    Examples
    --------
    The paper's worked point (Table 1, which uses the simplified coefficient): sigma = 1 and
    delta = 0.01 in one epoch need M = 1140369 rounds; with N = 1.14e7 the batch is ~10 and
    the noise ~0.1.

    >>> import dpbounds
    >>> p = dpbounds.plan(11_400_000, delta=0.01, coefficient="simplified")
    >>> i = list(p.sigma).index(1.0)
    >>> int(p.rounds[i]), round(float(p.batch_size[i]), 2), round(float(p.noise[i]), 4)
    (1140369, 10.0, 0.1)

    The least noise is a little below sigma = 1:

    >>> o = p.optimum
    >>> round(o.sigma, 4), o.rounds, round(o.noise, 5)
    (0.9837, 1155883, 0.09974)
    """
    accountant = V.check_choice("accountant", accountant, _ACCOUNTANTS)
    coefficient = V.check_choice("coefficient", coefficient, _COEFFICIENTS)
    objective = V.check_choice("objective", objective, _OBJECTIVES)
    n = V.check_count("dataset_size", dataset_size, minimum=2)
    e = V.check_count("epochs", epochs, minimum=1)
    if delta is None:
        raise DPBoundsError("delta is required: the target delta in (0, 1), the total over the epochs")
    d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
    c = V.check_scalar("clip_norm", clip_norm, V.Constraint.FINITE_POSITIVE)
    r = V.check_scalar("rtol", rtol, V.Constraint.OPEN_UNIT)
    tol = V.check_scalar("tolerance", tolerance, V.Constraint.OPEN_UNIT)
    grid = _sigma_grid(sigma, accountant)
    eps: float | None
    target: _Theorem31 | _Exact
    if accountant == "theorem31":
        if epsilon is not None:
            raise DPBoundsError("epsilon is for accountant='exact' only: Theorem 3.1 certifies "
                                "f >= 1 - a - delta, i.e. (0, delta)-DP")
        eps = None
        target = _Theorem31(n, d, e, coefficient)
        method = (f"Theorem 3.1, coefficient '{coefficient}'"
                  + (" (the paper's Table 1)" if coefficient == "simplified" else
                     " (exact third absolute moment; the paper's Table 1 uses 'simplified')"))
    else:
        if epsilon is None:
            raise DPBoundsError("epsilon is required with accountant='exact' (epsilon=0 asks for "
                                "f >= 1 - a - delta, Theorem 3.1's form)")
        eps = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_NONNEGATIVE)
        target = _Exact(n, d, eps, e, tol)
        method = (f"exact random-allocation accountant (upper end of the certified bracket of "
                  f"delta({eps:g}), tolerance {tol:g}); Theorem 3.1 column: coefficient '{coefficient}'")
    method += f"; objective: {'least noise C sigma M / N' if objective == 'noise' else 'largest batch N / M'}"

    search = _Search(target, n, c, objective)
    search.front(grid)
    front = [search.evaluate(s) for s in grid.tolist()]
    m_front = np.array([p[0] for p in front])
    optimum = search.optimise(grid, r, accountant)

    t31: FArr | None = None
    if isinstance(target, _Exact) and target.undecided:
        method += ("; NOTE: a certified bracket of delta contained the target, so an M may be larger than the "
                   "smallest the true delta admits (each M shown is admissible; a smaller tolerance decides)")
    if accountant == "exact":
        t31 = _readonly(_Theorem31(n, d, e, coefficient).rounds_many(grid))
    with np.errstate(invalid="ignore"):
        batch = n / m_front
        noise = c * grid * m_front / n
    return Plan(
        dataset_size=n, epochs=e, clip_norm=c, delta=d, epsilon=eps, accountant=accountant,
        coefficient=coefficient, objective=objective, rtol=r,
        tolerance=tol if accountant == "exact" else math.nan,
        sigma=_readonly(grid), rounds=_readonly(m_front), batch_size=_readonly(batch), noise=_readonly(noise),
        achieved_delta=_readonly([p[1] for p in front]), reasons=tuple(p[2] for p in front),
        theorem31_rounds=t31, optimum=optimum, method=method)


class _Search:
    """The evaluations of one plan() call: (M, certified delta, reason) per sigma, and the search."""

    def __init__(self, target: _Theorem31 | _Exact, n: int, c: float, objective: str) -> None:
        self.target, self.n, self.c, self.objective = target, n, c, objective
        self.seen: dict[float, tuple[float, float, str]] = {}

    def front(self, grid: FArr) -> None:
        t = self.target
        if isinstance(t, _Theorem31):  # one vectorised call for the whole grid
            for s, m in zip(grid.tolist(), t.rounds_many(grid).tolist()):
                self.seen[s] = (m, t.achieved(s, m), "") if math.isfinite(m) and m <= self.n else t.point(s)
        else:
            for s in grid.tolist():
                self.evaluate(s)

    def evaluate(self, s: float) -> tuple[float, float, str]:
        if s not in self.seen:
            self.seen[s] = self.target.point(s)
        return self.seen[s]

    def key(self, s: float) -> tuple[float, float]:
        """What is minimised (inf where there is no M), then sigma (ties: the smaller sigma)."""
        m = self.evaluate(s)[0]
        if not math.isfinite(m):
            return (math.inf, s)
        return (self.c * s * m / self.n if self.objective == "noise" else m, s)

    def best(self) -> float:
        return min(self.seen, key=self.key)

    def optimise(self, grid: FArr, rtol: float, accountant: str) -> PlanPoint | None:
        """Golden-section refinement around the best grid point, then the smallest sigma for its M."""
        sig = grid.tolist()
        keys = [self.key(s) for s in sig]
        i = min(range(len(sig)), key=lambda k: keys[k])
        if not math.isfinite(keys[i][0]):
            return None
        # bracket [la, lc] around lb in log sigma, key(lb) no larger than at the ends; at a grid
        # end the bracket starts with la == lb (or lb == lc) and can only move inwards
        la, lb, lc = (math.log(sig[max(i - 1, 0)]), math.log(sig[i]), math.log(sig[min(i + 1, len(sig) - 1)]))
        kb = keys[i]
        while lc - la > math.log1p(rtol):
            if lc - lb >= lb - la:
                lx = lb + _GOLD * (lc - lb)
                kx = self.key(math.exp(lx))
                if kx < kb:
                    la, lb, kb = lb, lx, kx
                else:
                    lc = lx
            else:
                lx = lb - _GOLD * (lb - la)
                kx = self.key(math.exp(lx))
                if kx < kb:
                    lc, lb, kb = lb, lx, kx
                else:
                    la = lx
        best = self.best()
        m_best = self.evaluate(best)[0]
        # The objective is a step function of sigma (M is an integer); on the step of M it is least
        # at the smallest sigma that still admits M.  Bisect in log sigma down to the nearest
        # evaluated sigma below, which does not admit M (it has a larger M or none: else it
        # would be the better point).
        below = [s for s in self.seen if s < best]
        if below:
            bad, good = max(below), best
            while good / bad > 1.0 + rtol:
                mid = math.sqrt(bad * good)
                if self.target.admits(mid, m_best):
                    good = mid
                else:
                    bad = mid
            self.evaluate(good)
            best = self.best()
        m, achieved, _ = self.evaluate(best)
        notes = []
        if len(sig) == 1:
            notes.append("the grid is one sigma: the optimum is that sigma's front point, not a search")
        elif i == 0 and best < sig[1]:
            notes.append(f"the best grid point is the grid's first ({sig[0]:g}): a smaller sigma may do better")
        elif i == len(sig) - 1 and best > sig[-2]:
            notes.append(f"the best grid point is the grid's last ({sig[-1]:g}): a larger sigma may do better")
        if m <= _ROUNDS_MIN[accountant]:
            notes.append(f"M is the fewest rounds allowed ({_ROUNDS_MIN[accountant]}): the target would "
                         "allow fewer, larger batches")
        return PlanPoint(sigma=best, rounds=int(m), batch_size=self.n / m, noise=self.c * best * m / self.n,
                         achieved_delta=achieved, notes=tuple(notes))
