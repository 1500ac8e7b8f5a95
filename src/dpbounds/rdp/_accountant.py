"""The analytical moments accountant (docs/rdp.md).

The accountant of section 3.3 of "Subsampled Rényi Differential Privacy and Analytical
Moments Accountant".  Composition is kept symbolically as (mechanism, count) pairs; the
composed RDP curve sum_i c_i eps_i(alpha) is evaluated only at the orders that the 1-D
search asks for.  Every order gives a valid (eps, delta) bound, so the search can only
make the result tighter, never invalid.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._protocol import PrivacyAccountant, initial_steps
from dpbounds.rdp._mechanisms import (
    _QUAD_MAX_NODES,
    ALPHA_MAX,
    Mechanism,
    PoissonGaussian,
    SubsampledGaussianWOR,
    check_work,
    short_number,
)
from dpbounds.rdp._outward import _EPS as _OUT_EPS
from dpbounds.rdp._outward import _LOGDELTA as _OUT_LOGDELTA
from dpbounds.rdp._outward import delta_at

__all__ = ["RDPAccountant", "DEFAULT_ORDERS"]

#: The order list of TF-Privacy / dp-accounting (``DEFAULT_RDP_ORDERS``), for fixed-orders comparisons.
DEFAULT_ORDERS: tuple[float, ...] = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + [float(x) for x in range(11, 64)] + [128.0, 256.0, 512.0, 1024.0]
)

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
#: Relative improvement of the objective (log delta) that the scan above the first local
#: minimum must bring to replace it: far above the refinement's rounding noise, far below any
#: difference that matters (a factor exp(1e-9 |log delta|) on delta).
_SCAN_MARGIN = 1e-9

#: Largest fixed-orders list: each query holds a few float64 arrays of this length per mechanism.
ORDERS_MAX = 10 ** 6


class RDPAccountant(PrivacyAccountant):
    """Analytical moments accountant: symbolic composition, conversion by 1-D optimisation.

    Follows the package's accountant protocol: ``step(noise_multiplier=, sample_rate=)`` records
    one Poisson-subsampled Gaussian step (add/remove neighbours, as Opacus' RDP accountant);
    ``get_epsilon(delta)`` is a float; ``get_epsilon_bracket(delta)`` returns a
    :class:`~dpbounds.PrivacyBracket` whose lower end is 0 (RDP gives upper bounds only).
    ``compose(mechanism, count)`` adds any mechanism of :mod:`dpbounds.rdp` directly.

    Parameters
    ----------
    orders : None, "default" or array_like, optional
        ``None`` (default): optimise over real orders alpha in [1 + 1e-6, max_order] (a log-spaced
        scan, extended while the optimum sits at its edge, then golden-section refinement and
        the neighbouring integers).  ``"default"`` or an array: fixed-orders mode, the minimum
        over exactly those orders (``"default"`` = TF-Privacy/dp-accounting's list), for
        like-for-like comparison with peers.  At most 1e6 orders (memory cap; more raise
        DPBoundsError naming ``orders``).
    conversion : {"improved", "classic"}
        RDP -> (eps, delta) conversion (docs/rdp.md).  "improved" (Balle et al. 2020) is never
        worse than "classic" (Mironov 2017).
    max_order : float
        Largest order considered by the continuous search (default 1e4).
    noise_multiplier, sample_rate : float, optional
        With ``steps`` or ``epochs``, start with that many Poisson-subsampled Gaussian steps
        (as :class:`~dpbounds.PoissonAccountant`); otherwise record them with ``step()``.
    steps : int, optional
    epochs : float, optional
        Instead of ``steps``: steps = int(epochs / sample_rate) (Opacus' rule).
    dataset_size, batch_size : int, optional
        Instead of ``sample_rate``: sample_rate = batch_size / dataset_size.

    Notes
    -----
    Unusable orders are skipped: an order at which the composed curve is NaN (a mechanism
    cannot evaluate it -- e.g. the Poisson-subsampled Gaussian at a fractional order whose
    quadrature would need more than 1e6 nodes, cost ~ alpha / sigma^2, or the without-replacement
    bounds above order 1e6) takes no part in the
    minimum.  The result stays a valid bound (every order gives one; skipping orders can only
    loosen it), and it says so: ``get_epsilon_bracket``/``get_delta_bracket`` name the number of
    orders skipped in ``method``.  If no order is usable, :class:`~dpbounds.DPBoundsError` is
    raised (rather than a vacuous ``inf``).

    Mechanisms under different neighbouring relations (Poisson: add/remove; without
    replacement: replace-one) must not be mixed in one guarantee; the accountant does not
    police this (docs/rdp.md, neighbouring relations).
    """

    def __init__(self, orders: None | str | Iterable[float] = None, conversion: str = "improved",
                 max_order: float = 1e4, *, noise_multiplier: float | None = None,
                 sample_rate: float | None = None, steps: int | None = None, epochs: float | None = None,
                 dataset_size: int | None = None, batch_size: int | None = None) -> None:
        super().__init__()
        self._step_mech: PoissonGaussian | None = None  # the mechanism of the last step() (reused)
        self.conversion = V.check_choice("conversion", conversion, ("improved", "classic"))
        if orders is None:
            self.orders: NDArray[np.float64] | None = None
        else:
            o = np.asarray(DEFAULT_ORDERS if isinstance(orders, str) and orders == "default" else orders,
                           dtype=np.float64).ravel()
            V.check("orders", o, V.Constraint.ORDER_ABOVE_1.holds(o), V.Constraint.ORDER_ABOVE_1.text)
            if o.size == 0:
                raise DPBoundsError("orders must not be empty")
            if o.size > ORDERS_MAX:  # each query evaluates every mechanism at every order
                raise DPBoundsError(f"orders must hold at most {ORDERS_MAX:,} orders (the memory cap), got {o.size:,}")
            self.orders = o
        mo = V.check_scalar("max_order", max_order, V.Constraint.REAL)
        if not (2.0 <= mo <= ALPHA_MAX):
            raise DPBoundsError(f"max_order must be in [2, {short_number(ALPHA_MAX)}], got {max_order!r}")
        self.max_order = mo
        self._terms: dict[object, tuple[Mechanism, float]] = {}
        start = initial_steps(noise_multiplier, sample_rate, steps, epochs, dataset_size, batch_size)
        if start is not None:
            s0, q0, n0 = start
            self._record(s0, q0, n0)
            self._add(PoissonGaussian(s0, q0), float(n0))

    mechanism = "rdp"

    # ---------------------------------------------------------------- protocol
    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one Poisson-subsampled Gaussian step (consecutive equal steps are grouped)."""
        super().step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)
        s, q, _ = self._history[-1]
        mech = self._step_mech
        if mech is None or (mech.sigma, mech.q) != (s, q):
            mech = self._step_mech = PoissonGaussian(s, q)
        self._add(mech, 1.0)

    def _options(self) -> dict[str, object]:
        orders = None if self.orders is None else [float(o) for o in self.orders]
        return {"orders": orders, "conversion": self.conversion, "max_order": self.max_order}

    def state_dict(self) -> dict[str, object]:
        """Plain JSON-able state (covers histories recorded with ``step()``)."""
        stepped = sum(n for _, _, n in self._history)
        composed = sum(c for _, c in self._terms.values())
        if composed != stepped:
            raise DPBoundsError("state_dict() covers histories recorded with step(); this accountant also "
                             "has mechanisms added with compose()")
        return super().state_dict()

    def load_state_dict(self, state: dict[str, object]) -> None:
        super().load_state_dict(state)
        self._terms = {}
        for s, q, n in self._history:
            self.compose(PoissonGaussian(s, q), n)

    def get_epsilon_bracket(self, delta: float) -> PrivacyBracket:
        """[0, epsilon(delta)]: RDP conversion gives an upper bound only (``method`` names skipped orders)."""
        d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
        obj = self._objective("eps", d)
        v, a = self._minimise(obj)
        return PrivacyBracket(0.0, v, quantity="epsilon", at=d, tolerance=math.inf,
                              method=f"RDP ({self.conversion} conversion, order {a:.4g}{_skipped(obj)}); upper bound only",
                              certified="the RDP bounds of each mechanism and the conversion", warn=False)

    def get_delta_bracket(self, epsilon: float) -> PrivacyBracket:
        """[0, delta(epsilon)]: RDP conversion gives an upper bound only (``method`` names skipped orders)."""
        e = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_NONNEGATIVE)
        obj = self._objective("delta", e)
        v, a = self._minimise(obj, scan_all=True)
        dv = self._delta_at(a, float(e))
        return PrivacyBracket(0.0, dv, quantity="delta", at=float(epsilon), tolerance=math.inf,
                              method=f"RDP ({self.conversion} conversion, order {a:.4g}{_skipped(obj)}); upper bound only",
                              certified="the RDP bounds of each mechanism and the conversion", warn=False)

    # ---------------------------------------------------------------- composition
    def compose(self, mechanism: Mechanism, count: float = 1) -> "RDPAccountant":
        """Add ``count`` adaptive compositions of ``mechanism``; returns ``self``."""
        if not isinstance(mechanism, Mechanism):
            raise DPBoundsError(f"mechanism must be a dpbounds.rdp mechanism, got {mechanism!r}")
        # fractional counts are allowed: RDP composes linearly in the count (partial epochs)
        c = V.check_scalar("count", count, V.Constraint.FINITE_NONNEGATIVE)
        self._add(mechanism, c)
        return self

    def _add(self, mechanism: Mechanism, c: float) -> None:
        entry = self._terms.get(mechanism.key)
        self._terms[mechanism.key] = (mechanism, c) if entry is None else (entry[0], entry[1] + c)

    @property
    def mechanisms(self) -> list[tuple[Mechanism, float]]:
        """The symbolic composition: a list of (mechanism, count)."""
        return list(self._terms.values())

    def copy(self) -> "RDPAccountant":
        new = RDPAccountant(orders=self.orders, conversion=self.conversion, max_order=self.max_order)
        new._terms = dict(self._terms)
        new._history = [list(h) for h in self._history]
        return new

    def rdp(self, alpha: float | NDArray[np.float64]) -> float | NDArray[np.float64]:
        """The composed RDP curve sum_i c_i eps_i(alpha) at real alpha in [1, inf]."""
        a = V.check_constraint("alpha", alpha, V.Constraint.ORDER)
        out: float | NDArray[np.float64] = V.scalar_or_array(self._rdp(a))
        return out

    def _rdp(self, a: NDArray[np.float64]) -> NDArray[np.float64]:
        # inf * 0 and inf - inf are NaN (the order is skipped); c * v beyond the doubles is inf,
        # its right value (an order useless for the conversion, not an error)
        with np.errstate(invalid="ignore", over="ignore"):
            return self._rdp_quiet(a)

    def _rdp_quiet(self, a: NDArray[np.float64]) -> NDArray[np.float64]:
        """The composed curve; the caller silences numpy's overflow and invalid warnings."""
        tot: NDArray[np.float64] | None = None
        for m, c in self._terms.values():
            if c == 0:
                continue
            # an order above what a mechanism evaluates (the integer-order tables stop at ALPHA_MAX)
            # is unusable: NaN, skipped like the other unusable orders, not an error about alpha
            over = np.isfinite(a) & (a > m._max_order())
            if over.any():
                r = np.where(over, np.nan, np.asarray(m.rdp(np.where(over, 2.0, a)), dtype=np.float64))
            else:
                r = np.asarray(m.rdp(a), dtype=np.float64)
            v = c * r
            # 0 + x is x for every x but -0.0 (which stays -0.0 here, as 0 + -0.0 = 0.0 would
            # not): the same doubles as adding to zeros, one array fewer
            tot = v if tot is None else tot + v
        if tot is None:
            return np.zeros(np.shape(a))
        return tot + 0.0

    # ---------------------------------------------------------------- conversion
    def _objective(self, kind: str, target: float) -> "_Objective":
        # rounded towards the safe side (rdp/_outward.py, compiled): each order's value is never
        # below the exact conversion of the composed curve at that order
        f = (_OUT_EPS if kind == "eps" else _OUT_LOGDELTA)[self.conversion]
        t = float(target)
        curve = self._rdp_quiet

        def value(a: NDArray[np.float64]) -> NDArray[np.float64]:
            return f(a, curve(a), t)  # type: ignore[no-any-return]

        return _Objective(value, "delta" if kind == "eps" else "epsilon", target)

    def _delta_at(self, a: float, epsilon: float) -> float:
        """delta at the order the search chose, evaluated in the linear domain (rdp/_outward.py)."""
        aa = np.array([a])
        return float(delta_at(aa, self._rdp(aa), np.float64(epsilon), self.conversion)[0])

    def _minimise(self, obj: "_Objective", scan_all: bool = False) -> tuple[float, float]:
        # the objective evaluates the composed curve without numpy's warnings (see _rdp)
        with np.errstate(invalid="ignore", over="ignore"):
            v_, a_ = self._search(obj, scan_all)
        if obj.usable == 0:
            # the orders (given, or the search's) are what fails, whatever delta or epsilon asked
            # for; both are named so that the message says which query it was
            raise DPBoundsError(
                f"orders must include a usable one: no usable order for {obj.target_name} = {obj.target!r}, "
                f"the composed RDP curve is NaN at all {obj.skipped} orders tried "
                "(e.g. fractional orders of the Poisson-subsampled Gaussian beyond its quadrature cap "
                f"of {short_number(_QUAD_MAX_NODES)} nodes, cost ~ alpha / sigma^2, or orders above "
                f"{short_number(ALPHA_MAX)} for the without-replacement bounds); give integer orders up to "
                f"{short_number(ALPHA_MAX)} (orders=...)")
        return v_, a_

    def _search(self, obj: "_Objective", scan_all: bool) -> tuple[float, float]:
        if not self._terms:
            return float(obj(np.array([2.0]))[0]), 2.0
        if self.orders is not None:
            # refused before any work where the orders would take too long (10^6 fractional orders
            # of the Poisson-subsampled Gaussian ran for minutes)
            for m, c in self._terms.values():
                if c != 0:
                    check_work("orders", m.work(self.orders), f"{m!r} at these {self.orders.size:,} orders")
            v = obj(self.orders)
            i = int(np.argmin(v))
            return float(v[i]), float(self.orders[i])
        hi = min(256.0, self.max_order)
        best_v, best_a = math.inf, 2.0
        while True:
            grid = 1.0 + np.geomspace(1e-6, hi - 1.0, 56)
            grid = np.unique(np.concatenate([grid, np.arange(2.0, min(hi, 12.0) + 1.0)]))
            v = obj(grid)
            i = int(np.argmin(v))
            if v[i] < best_v:
                best_v, best_a = float(v[i]), float(grid[i])
            if i < grid.size - 1 or hi >= self.max_order or not math.isfinite(best_v):
                break
            hi = min(hi * 4.0, self.max_order)
        if not math.isfinite(best_v):
            return best_v, best_a
        best_v, best_a = self._refine(obj, grid, best_v, best_a)
        if not scan_all or hi >= self.max_order:
            return best_v, best_a
        # scan_all: the orders above the scan too.  The delta objective needs it: its
        # total-variation branch sqrt(1 - e^{-eps(alpha)}) increases with alpha, so the objective
        # (the min of that and the conversion) has a local minimum at alpha -> 1 besides the
        # conversion's own, which can lie far above (PoissonGaussian(1e6, 1), epsilon 0.0059:
        # 7e-7 at alpha = 1 + 1e-6, 1e-30 at 1e4).  The epsilon objective is 0 wherever that
        # branch applies (an interval at alpha -> 1) and the quasi-convex conversion elsewhere,
        # so its first local minimum is already global.
        # integer orders (the spacing is > 1 up here): the mechanisms evaluate them in closed
        # form, fractional orders of the subsampled mechanisms cost up to 1 s at 1e4
        upper = 1.0 + np.geomspace(hi - 1.0, self.max_order - 1.0,
                                   max(8, int(math.ceil(8 * math.log(self.max_order / hi, 4.0)))))
        upper = np.unique(np.concatenate([np.round(upper[:-1]), [self.max_order]]))
        v = obj(upper)
        i = int(np.argmin(v))
        # only a clear improvement (beyond the refinement's rounding noise) replaces the optimum,
        # so where the first local minimum is global the scan of the upper orders leaves it as it is
        if float(v[i]) < best_v - _SCAN_MARGIN * max(1.0, abs(best_v)):
            best_v, best_a = self._refine(obj, np.concatenate([grid, upper]), float(v[i]), float(upper[i]))
        return best_v, best_a

    def _refine(self, obj: Callable[[NDArray[np.float64]], NDArray[np.float64]], grid: NDArray[np.float64],
                best_v: float, best_a: float) -> tuple[float, float]:
        """Golden-section refinement of the grid optimum best_a between its grid neighbours."""
        grid = np.unique(grid)
        j = int(np.searchsorted(grid, best_a))
        lo_a = float(grid[max(j - 1, 0)])
        hi_a = float(grid[min(j + 1, grid.size - 1)])
        # golden-section on [lo_a, hi_a] (the objective is quasi-convex in alpha: section 3.3 of the
        # analytical moments accountant paper)
        x1 = hi_a - _GOLDEN * (hi_a - lo_a)
        x2 = lo_a + _GOLDEN * (hi_a - lo_a)
        f1, f2 = float(obj(np.array([x1]))[0]), float(obj(np.array([x2]))[0])
        for _ in range(60):
            if hi_a - lo_a <= 1e-9 * hi_a:
                break
            if f1 <= f2:
                hi_a, x2, f2 = x2, x1, f1
                x1 = hi_a - _GOLDEN * (hi_a - lo_a)
                f1 = float(obj(np.array([x1]))[0])
            else:
                lo_a, x1, f1 = x1, x2, f2
                x2 = lo_a + _GOLDEN * (hi_a - lo_a)
                f2 = float(obj(np.array([x2]))[0])
        cand = np.array([x1, x2, max(math.floor(best_a), 2.0), math.ceil(best_a)])
        cv = obj(cand)
        k = int(np.argmin(cv))
        if cv[k] < best_v:
            best_v, best_a = float(cv[k]), float(cand[k])
        # interpolated (integer-order) curves put the optimum at an integer: report it exactly when
        # the search converged to within 1e-6 of one and it is as good up to rounding (1e-13)
        r = float(round(best_a))
        if r != best_a and abs(best_a - r) < 1e-6 and r > 1:
            vr = float(obj(np.array([r]))[0])
            if vr <= best_v * (1 + 1e-13):
                best_v, best_a = vr, r
        return best_v, best_a

    def get_epsilon(self, delta: float, return_order: bool = False) -> float | tuple[float, float]:  # type: ignore[override]
        """Smallest eps such that the composition is (eps, delta)-DP per the RDP conversion.

        Minimises the conversion objective over alpha (docs/rdp.md); any order gives a
        valid bound, so an imperfect search can only loosen, never invalidate, the result.
        Orders where the composed curve is NaN are skipped (see the class Notes;
        :meth:`get_epsilon_bracket` says how many); none usable raises DPBoundsError.
        """
        d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
        v, a = self._minimise(self._objective("eps", d))
        return (v, a) if return_order else v

    def get_delta(self, epsilon: float, return_order: bool = False) -> float | tuple[float, float]:  # type: ignore[override]
        """Smallest delta such that the composition is (epsilon, delta)-DP per the RDP conversion.

        As :meth:`get_epsilon`, and then scans the orders up to ``max_order`` above the optimum
        found: the delta objective has a local minimum near alpha = 1 (its total-variation
        bound) besides the conversion's own.
        """
        e = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_NONNEGATIVE)
        v, a = self._minimise(self._objective("delta", e), scan_all=True)
        dv = self._delta_at(a, e)
        return (dv, a) if return_order else dv

    # ---------------------------------------------------------------- limits of a run
    # (the noise multiplier is calibrated by dpbounds.calibrate_noise(..., accountant="rdp"))
    @staticmethod
    def _dpsgd(sigma: float, rate: float, steps: float, sampling: str, bound: str, mode: str,
               orders: None | str | Iterable[float], conversion: str) -> "RDPAccountant":
        acc = RDPAccountant(orders=orders, conversion=conversion)
        if sampling == "poisson":
            mech: Mechanism = PoissonGaussian(sigma, rate, mode)
        else:
            mech = SubsampledGaussianWOR(sigma, rate, bound)
        return acc.compose(mech, steps)

    @staticmethod
    def max_steps(epsilon: float, delta: float, sigma: float, rate: float, *,
                  sampling: str = "poisson", bound: str = "improved", mode: str = "exact",
                  orders: None | str | Iterable[float] = None, conversion: str = "improved",
                  steps_max: float = 1e12) -> float:
        """Largest integer number of steps with eps(delta) <= epsilon (0 if none; inf above ``steps_max``)."""
        target = _calib_args(epsilon, delta, 1.0, rate, sampling)
        steps_max = V.check_scalar("steps_max", steps_max, V.Constraint.FINITE_POSITIVE)

        def ok(k: float) -> bool:
            return float(RDPAccountant._dpsgd(sigma, rate, k, sampling, bound, mode, orders,
                                              conversion).get_epsilon(delta)) <= target  # type: ignore[arg-type]

        if not ok(1.0):
            return 0.0
        if ok(steps_max):
            return math.inf
        lo, hi = 1.0, 2.0
        while ok(hi):
            lo, hi = hi, hi * 2.0
        while hi - lo > 1:
            mid = math.floor((lo + hi) / 2)
            if ok(mid):
                lo = mid
            else:
                hi = mid
        return float(lo)

    @staticmethod
    def max_sampling_rate(epsilon: float, delta: float, sigma: float, steps: float, *,
                          sampling: str = "poisson", bound: str = "improved", mode: str = "exact",
                          orders: None | str | Iterable[float] = None, conversion: str = "improved",
                          rtol: float = 1e-6) -> float:
        """Largest sampling rate (to relative ``rtol``, rounded down) with eps(delta) <= epsilon (0 if none)."""
        target = _calib_args(epsilon, delta, steps, 0.5, sampling)
        rtol = V.check_scalar("rtol", rtol, V.Constraint.OPEN_UNIT)

        def ok(r: float) -> bool:
            return float(RDPAccountant._dpsgd(sigma, r, steps, sampling, bound, mode, orders,
                                              conversion).get_epsilon(delta)) <= target  # type: ignore[arg-type]

        if ok(1.0):
            return 1.0
        lo, hi = 1e-12, 1.0
        if not ok(lo):
            return 0.0
        while hi / lo > 1 + rtol:
            mid = math.sqrt(lo * hi)
            if ok(mid):
                lo = mid
            else:
                hi = mid
        return lo

    def __repr__(self) -> str:
        parts = ", ".join(f"{m!r} x {c:g}" for m, c in self.mechanisms)
        return f"RDPAccountant(steps={len(self)}, [{parts}], conversion={self.conversion!r})"


class _Objective:
    """The conversion objective of one query; NaN orders (unusable) count as +inf and are tallied.

    The tally belongs to this query only (a fresh object per call), so answers do not depend on
    earlier calls.
    """

    def __init__(self, value: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                 target_name: str, target: float) -> None:
        self._value = value
        self.target_name, self.target = target_name, float(target)  # the query's parameter, for errors
        self.skipped = 0  # orders evaluated to NaN
        self.usable = 0   # orders evaluated to a number (inf included)

    def __call__(self, a: NDArray[np.float64]) -> NDArray[np.float64]:
        v = self._value(a)
        nan = np.isnan(v)
        k = int(np.count_nonzero(nan))
        self.skipped += k
        self.usable += v.size - k
        return np.where(nan, np.inf, v) if k else v


def _skipped(obj: _Objective) -> str:
    return f"; {obj.skipped} unusable (NaN) order evaluations skipped" if obj.skipped else ""


def _calib_args(epsilon: float, delta: float, steps: float, rate: float, sampling: str) -> float:
    V.check_choice("sampling", sampling, ("poisson", "wor"))
    target = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_POSITIVE)
    V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
    V.check_scalar("steps", steps, V.Constraint.FINITE_POSITIVE)
    V.check_scalar("rate", rate, V.Constraint.HALF_OPEN_UNIT)
    return target

