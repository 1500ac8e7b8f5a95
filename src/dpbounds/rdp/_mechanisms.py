"""Mechanism descriptions for :class:`dpbounds.rdp.RDPAccountant` (docs/rdp.md).

A mechanism is an immutable description with a vectorised ``rdp(alpha)`` (alpha a float
array, every element in [1, inf]) and a hashable ``key`` so that the accountant can merge
identical mechanisms symbolically.  Integer-order bounds (the without-replacement bounds)
keep a per-object table of their integer-order curve and interpolate the CGF in between
(Corollary 10 of "Subsampled Rényi Differential Privacy and Analytical Moments
Accountant"), so repeated evaluations cost O(1) per order.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Hashable

import numpy as np
from numpy.typing import NDArray

from dpbounds import (
    _kernels,  # type: ignore[attr-defined, unused-ignore]
    _ufuncs,  # type: ignore[attr-defined, unused-ignore]
)
from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError

__all__ = [
    "Mechanism",
    "Gaussian",
    "Laplace",
    "RandomizedResponse",
    "PoissonGaussian",
    "SubsampledGaussianWOR",
    "SubsampledWOR",
    "Custom",
]

#: bound name -> the C core's DPB_WOR_* value the kernels take (read from C)
_BOUNDS = dict(_ufuncs.WOR_BOUNDS)

#: largest order the RDP kernels evaluate: above it they answer NaN (read from C)
ALPHA_MAX = float(_ufuncs.RDP_ALPHA_MAX)

#: most quadrature nodes of one real-order evaluation: the C core answers NaN above it (read from C)
_QUAD_MAX_NODES = float(_ufuncs.RDP_QUAD_MAX_NODES)


def short_number(x: float) -> str:
    """A power of ten as messages write it: 1e6, not 1e+06."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"

#: Most work one evaluation of a curve at a set of orders may take, in units of one quadrature
#: node of the Poisson-subsampled Gaussian (about 50 ns): about 20 s.  More is refused before
#: it starts, naming the orders (rdp.poisson_gaussian, rdp.subsampled_gaussian_wor and the
#: accountant's fixed orders; tests/rdp/test_rdp_compiled.py::test_work_limit_refuses_a_million_fractional_orders_at_once).
WORK_MAX = 4e8


def _quad_nodes(a: Any, s: Any) -> Any:
    """Nodes of the real-order quadrature (the count dpb_rdp_poisson_quad_log computes)."""
    # (sigma clipped at 10, where 0.9 pi sigma > 5 already: 0.9 pi sigma overflowed at sigma ~ 1.8e308)
    d = np.minimum(0.9 * np.pi * np.minimum(s, 10.0), 5.0)
    h = np.minimum(2 * np.pi * d / (80.0 + 0.5 * d * d), 0.2)
    # alpha / sigma beyond the doubles (sigma subnormal) is an inf count: over the cap, refused
    with np.errstate(over="ignore"):
        return np.ceil((np.maximum(a / s, 0.0) + 80.0) / h)


def poisson_work(a: Any, s: Any, q: Any, compat: bool = False) -> float:
    """Work units of the Poisson-subsampled Gaussian at orders ``a`` (broadcast with sigma, q):
    quadrature nodes at fractional orders (capped: beyond it the kernel answers NaN at once),
    one per binomial term (alpha terms) at integer orders; the compat series adds up to 16384
    terms of three lgamma each at fractional orders."""
    a, s, q = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(s, dtype=np.float64),
                                  np.asarray(q, dtype=np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        live = np.isfinite(a) & (a >= 1.0) & (q > 0) & (q < 1) & (s <= 1e100)
        frac = live & ((a != np.floor(a)) | (a == 1.0))
        nodes = np.where(frac, _quad_nodes(a, s), 0.0)
        nodes = np.where(nodes <= _QUAD_MAX_NODES, nodes, 0.0)
        if compat:
            nodes = nodes + np.where(frac, 5e4, 0.0)
        terms = np.where(live & ~frac, np.minimum(a, ALPHA_MAX), 0.0)
        return float(np.sum(nodes) + np.sum(terms))


def wor_work(a: Any) -> float:
    """Work units of the without-replacement bounds at orders ``a``: O(order) terms of ~5 ns each
    (a tenth of a unit) per order, ceil(alpha) for a fractional one."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        fin = np.isfinite(a) & (a >= 1.0)
        return float(np.sum(np.where(fin, np.ceil(np.minimum(a, ALPHA_MAX)), 0.0))) * 0.2


def check_work(name: str, work: float, what: str) -> None:
    """Refuse, naming the parameter, an evaluation estimated beyond WORK_MAX."""
    if work > WORK_MAX:
        raise DPBoundsError(
            f"{name} must ask for at most {WORK_MAX:.0e} units of work (a unit: one quadrature node of the "
            f"Poisson-subsampled Gaussian, ~50 ns; the limit is about 20 s), but {what} would need about "
            f"{work:.2g}; give fewer or smaller orders (integer orders need no quadrature)")


class Mechanism:
    """Base class: ``rdp(alpha)`` gives the RDP curve, ``neighbouring`` its relation."""

    neighbouring: str = "add/remove or replace-one (as the sensitivity is defined)"
    #: True when the curve is only defined at integer orders and interpolated in between
    integer_interpolated: bool = False

    @property
    def key(self) -> Hashable:  # pragma: no cover - overridden
        return id(self)

    def rdp(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:  # pragma: no cover
        raise NotImplementedError

    def _max_order(self) -> float:
        """The largest finite order ``rdp`` evaluates (above it, DPBoundsError naming alpha)."""
        return math.inf

    def work(self, alpha: NDArray[np.float64]) -> float:
        """Estimated cost of ``rdp(alpha)`` in the units of WORK_MAX (closed forms: next to nothing)."""
        return 0.01 * float(np.size(alpha))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mechanism) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


class Gaussian(Mechanism):
    """Gaussian mechanism, ``sigma`` = noise std / L2 sensitivity: eps(a) = a/(2 sigma^2)."""

    def __init__(self, sigma: float) -> None:
        self.sigma = V.check_scalar("sigma", sigma, V.Constraint.FINITE_POSITIVE)

    @property
    def key(self) -> Hashable:
        return ("gaussian", self.sigma)

    def rdp(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(_ufuncs.rdp_gaussian(alpha, self.sigma))

    def __repr__(self) -> str:
        return f"Gaussian(sigma={self.sigma!r})"


class Laplace(Mechanism):
    """Laplace mechanism with scale ``b`` (L1 sensitivity 1)."""

    def __init__(self, b: float) -> None:
        self.b = V.check_scalar("b", b, V.Constraint.FINITE_POSITIVE)

    @property
    def key(self) -> Hashable:
        return ("laplace", self.b)

    def rdp(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(_ufuncs.rdp_laplace(alpha, self.b))

    def __repr__(self) -> str:
        return f"Laplace(b={self.b!r})"


class RandomizedResponse(Mechanism):
    """Binary randomized response, truthful with probability ``p``."""

    def __init__(self, p: float) -> None:
        self.p = V.check_scalar("p", p, V.Constraint.OPEN_UNIT)

    @property
    def key(self) -> Hashable:
        return ("rr", self.p)

    def rdp(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(_ufuncs.rdp_randomized_response(alpha, self.p))

    def __repr__(self) -> str:
        return f"RandomizedResponse(p={self.p!r})"


class PoissonGaussian(Mechanism):
    """Poisson-subsampled Gaussian (rate ``q``, add/remove neighbours).

    The moments are those of Mironov, Talwar and Zhang, "Rényi Differential Privacy of the
    Sampled Gaussian Mechanism" (2019); derivation and the two modes in docs/rdp.md.

    ``mode="exact"`` evaluates the exact divergence at real orders; ``"compat"`` uses the
    |C(a,i)| series of TF-Privacy / dp-accounting / Opacus at fractional orders.
    """

    neighbouring = "add/remove"

    def __init__(self, sigma: float, q: float, mode: str = "exact") -> None:
        self.sigma = V.check_scalar("sigma", sigma, V.Constraint.FINITE_POSITIVE)
        self.q = V.check_scalar("q", q, V.Constraint.CLOSED_UNIT)
        self.mode = V.check_choice("mode", mode, ("exact", "compat"))
        self._f = _ufuncs.rdp_poisson_gaussian_exact if mode == "exact" else _ufuncs.rdp_poisson_gaussian_compat

    @property
    def key(self) -> Hashable:
        return ("poisson_gaussian", self.sigma, self.q, self.mode)

    def rdp(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self._f(alpha, self.sigma, self.q))

    def work(self, alpha: NDArray[np.float64]) -> float:
        return poisson_work(alpha, self.sigma, self.q, self.mode == "compat")

    def __repr__(self) -> str:
        return f"PoissonGaussian(sigma={self.sigma!r}, q={self.q!r}, mode={self.mode!r})"


class _IntegerTable(Mechanism):
    """Integer-order curve cached in a table, CGF-interpolated in between (Corollary 10)."""

    integer_interpolated = True
    neighbouring = "replace-one"

    def __init__(self) -> None:
        # empty until the first evaluation builds it, so that every order, [1, 2] included, is
        # read from a computed entry
        self._table = np.full(0, np.nan)
        self._far: dict[int, float] = {}   # orders beyond the table evaluated alone (_far_values)

    def _compute(self, n: int) -> NDArray[np.float64]:  # table[j] for j < n  # pragma: no cover
        raise NotImplementedError

    def _base(self, alpha: NDArray[np.float64]) -> NDArray[np.float64] | None:
        return None

    def _at_inf(self) -> float:
        return math.inf

    def _ensure(self, amax: float) -> None:
        need = int(math.ceil(amax)) + 1
        if need > self._table.shape[0]:
            # doubling amortises growth; not beyond _DENSE_MAX unless asked (the cost is O(n^2))
            n = min(max(need, 2 * self._table.shape[0], 66), max(need, _DENSE_MAX))
            self._table = self._compute(n)

    def _max_order(self) -> float:
        return ALPHA_MAX

    def _compute_at(self, orders: NDArray[np.float64]) -> NDArray[np.float64] | None:
        """The curve at the given integer orders alone (None: only whole tables can be built)."""
        return None

    def _at_orders(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        """The integer-order curve at ``idx``: from the table, or order by order far above it."""
        imax = int(np.max(idx)) if idx.size else 2
        n = self._table.shape[0]
        if imax < n:
            return self._table[idx]
        # The table grows by doubling: O(m^2) work up to order m, shared by every order below it.
        # Orders far beyond it (a fixed list such as 128, 256, 512, 1024, or the scan of a search)
        # are evaluated alone where that is cheaper, O(order) each, and always above _DENSE_MAX
        # (a whole table up to 1e6 takes hours).  They are the table's values bit for bit.
        dense = min(imax, max(65, 2 * n - 1))
        high = idx > dense
        far = np.unique(idx[high])
        vals = None
        if far.size and (imax >= _DENSE_MAX
                         or 8.0 * float(np.sum(far, dtype=np.float64)) < float(imax) ** 2 - float(dense) ** 2):
            vals = self._far_values(far)
        if vals is None:
            self._ensure(float(imax))
            return self._table[idx]
        self._ensure(float(dense))
        out = np.empty(idx.shape)
        out[~high] = self._table[idx[~high]]
        out[high] = vals[np.searchsorted(far, idx[high])]
        return out

    def _far_values(self, orders: NDArray[np.intp]) -> NDArray[np.float64] | None:
        """The curve at sorted distinct integer orders beyond the table, kept for the next queries
        (up to _FAR_KEEP of them: a query asks for a few); None where only whole tables exist."""
        known = self._far
        missing = [int(o) for o in orders if int(o) not in known]
        if missing:
            vals = self._compute_at(np.asarray(missing, dtype=np.float64))
            if vals is None:
                return None
            if len(known) + len(missing) > _FAR_KEEP:
                fresh = dict(zip(missing, (float(v) for v in vals)))
                return np.array([known[int(o)] if int(o) in known else fresh[int(o)] for o in orders])
            known.update(zip(missing, (float(v) for v in vals)))
        return np.array([known[int(o)] for o in orders])

    def _fast_base(self) -> float | None:
        """For the compiled path: NaN (no base clamp), the base Gaussian's sigma, or None (a base
        only Python can evaluate)."""
        return math.nan

    def work(self, alpha: NDArray[np.float64]) -> float:
        # the integer orders beyond the table, O(order) each (those in it cost nothing)
        a = np.asarray(alpha, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            need = np.unique(np.ceil(a[np.isfinite(a) & (a >= self._table.shape[0] - 1)]))
        return wor_work(need) + 0.01 * float(a.size)

    def rdp(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        a = np.asarray(alpha, dtype=np.float64)
        fb = self._fast_base()
        if a.size and fb is not None and float(np.max(a)) < self._table.shape[0] - 1:
            # orders inside the table (NaN and inf fail the test above): one compiled pass
            # (_kernels.table_interp), the same doubles as the steps below
            out = np.asarray(_kernels.table_interp(a, self._table, fb, self._at_inf()), dtype=np.float64)
            return out if out.ndim else out[()]
        fin = np.isfinite(a)
        amax = float(np.max(a[fin])) if fin.any() else 2.0
        if amax > ALPHA_MAX:
            raise DPBoundsError(f"alpha must be <= {ALPHA_MAX:g} for integer-order bounds, got {amax!r}")
        af = np.where(fin, a, 2.0)
        lo = np.clip(np.floor(af), 2, None).astype(np.intp)
        hi = np.clip(np.ceil(af), 2, None).astype(np.intp)
        both = self._at_orders(np.concatenate([lo.ravel(), hi.ravel()]))
        out = np.asarray(_ufuncs.rdp_interp(af, both[:lo.size].reshape(lo.shape), both[lo.size:].reshape(hi.shape)),
                         dtype=np.float64)
        base = self._base(af)
        if base is not None:
            out = np.minimum(out, base)
        out = np.where(fin, out, self._at_inf())
        return out if out.ndim else out[()]


#: Most orders beyond the table kept per object (_IntegerTable._far_values)
_FAR_KEEP = 4096

#: The per-object table (built whole: O(n^2) work for the without-replacement bounds, 1 s at
#: n = 1e4) never grows to this order; orders at or above it, and orders far above the table
#: where that is cheaper, are evaluated order by order where a mechanism can: O(order) each where
#: the improved bound's certificate skips the Pearson-Vajda terms (small sigma), O(order^2) where
#: it does not (large sigma, as one table up to that order)
_DENSE_MAX = 20000


class SubsampledGaussianWOR(_IntegerTable):
    """Gaussian on a without-replacement subsample (ratio ``gamma``), replace-one.

    Bounds of "Subsampled Rényi Differential Privacy and Analytical Moments Accountant"
    (Theorem 9, Theorem 27 and a lower bound); see docs/rdp.md.

    ``sigma`` is noise std / replace-one sensitivity (2C for a clipped sum with clip norm C).
    ``bound``: ``"improved"`` (Theorem 27, Pearson-Vajda; default), ``"theorem9"`` or
    ``"lower"`` (a lower bound: never use it for accounting).
    """

    def __init__(self, sigma: float, gamma: float, bound: str = "improved") -> None:
        super().__init__()
        self.sigma = V.check_scalar("sigma", sigma, V.Constraint.FINITE_POSITIVE)
        self.gamma = V.check_scalar("gamma", gamma, V.Constraint.CLOSED_UNIT)
        self.bound = V.check_choice("bound", bound, tuple(_BOUNDS))
        self._b = _BOUNDS[bound]

    @property
    def key(self) -> Hashable:
        return ("wor_gaussian", self.sigma, self.gamma, self.bound)

    def _compute(self, n: int) -> NDArray[np.float64]:
        t = np.full(n, np.nan)
        t[2:] = _kernels.wor_gaussian(np.arange(2, n, dtype=np.float64), self.sigma, self.gamma, self._b)
        return t

    def _compute_at(self, orders: NDArray[np.float64]) -> NDArray[np.float64]:
        # each order on its own is the same computation as in the table (bit for bit)
        return np.asarray(_kernels.wor_gaussian(orders, self.sigma, self.gamma, self._b), dtype=np.float64)

    def rdp(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        a = np.asarray(alpha, dtype=np.float64)
        if self.bound == "lower":   # exact at real orders (no interpolation)
            return np.asarray(_kernels.wor_gaussian(a, self.sigma, self.gamma, self._b))
        return super().rdp(a)

    def _base(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(_ufuncs.rdp_gaussian(alpha, self.sigma))

    def _fast_base(self) -> float | None:
        return self.sigma

    def _at_inf(self) -> float:
        return math.inf if self.gamma > 0 else 0.0

    def __repr__(self) -> str:
        return f"SubsampledGaussianWOR(sigma={self.sigma!r}, gamma={self.gamma!r}, bound={self.bound!r})"


class SubsampledWOR(_IntegerTable):
    """Any base mechanism on a without-replacement subsample (Theorem 9, or the improved bound).

    ``base`` is a :class:`Mechanism`, or a callable ``f(alpha_array) -> rdp_array`` (replace-one).
    ``bound="improved"`` is valid only for mechanisms satisfying WBK19's condition (one
    worst-case pair for all Renyi and Pearson-Vajda divergences, tight RDP): the Gaussian and
    Laplace mechanisms; for other bases the caller is responsible.
    """

    def __init__(self, base: Mechanism | Callable[[Any], Any], gamma: float,
                 bound: str = "theorem9", eps_inf: float | None = None) -> None:
        super().__init__()
        if bound not in ("theorem9", "improved"):
            raise DPBoundsError(f"bound must be 'theorem9' or 'improved', got {bound!r}")
        if not (isinstance(base, Mechanism) or callable(base)):
            raise DPBoundsError(f"base must be a dpbounds.rdp mechanism or a callable, got {base!r}")
        self.base = base
        self._f: Callable[[Any], Any] = base.rdp if isinstance(base, Mechanism) else base
        self.gamma, self.bound = V.check_scalar("gamma", gamma, V.Constraint.CLOSED_UNIT), bound
        if eps_inf is not None:
            eps_inf = V.check_scalar("eps_inf", eps_inf, V.Constraint.NONNEGATIVE)
        if eps_inf is None:
            with np.errstate(all="ignore"):
                try:
                    eps_inf = float(np.asarray(self._f(np.array([np.inf])), dtype=np.float64).ravel()[0])
                except Exception:  # noqa: BLE001 - any failure means "unknown": use inf (conservative)
                    eps_inf = math.inf
            if not eps_inf == eps_inf:
                eps_inf = math.inf
        self.eps_inf = float(eps_inf)

    @property
    def key(self) -> Hashable:
        bk = self.base.key if isinstance(self.base, Mechanism) else id(self.base)
        return ("wor", bk, self.gamma, self.bound, self.eps_inf)

    def _compute(self, n: int) -> NDArray[np.float64]:
        extra = 1 if self.bound == "improved" else 0
        orders = np.arange(2, n + extra, dtype=np.float64)
        e = np.zeros(n + extra)
        e[2:] = np.asarray(self._f(orders), dtype=np.float64)
        return np.asarray(_kernels.wor_table(e, self.eps_inf, self.gamma, _BOUNDS[self.bound]))[:n]

    def _base(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self._f(alpha), dtype=np.float64)

    def _fast_base(self) -> float | None:
        return None

    def _at_inf(self) -> float:
        if self.gamma == 0:
            return 0.0
        if math.isinf(self.eps_inf):
            return math.inf
        return math.log1p(self.gamma * math.expm1(self.eps_inf))

    def __repr__(self) -> str:
        return f"SubsampledWOR({self.base!r}, gamma={self.gamma!r}, bound={self.bound!r})"


class Custom(Mechanism):
    """A user-supplied RDP curve ``func(alpha_array) -> rdp_array`` (must be a valid bound at every real order)."""

    def __init__(self, func: Callable[[Any], Any], name: str = "custom") -> None:
        if not callable(func):
            raise DPBoundsError(f"func must be callable (alpha array -> rdp array), got {func!r}")
        self.func, self.name = func, name

    @property
    def key(self) -> Hashable:
        return ("custom", id(self.func))

    def rdp(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self.func(alpha), dtype=np.float64)

    def __repr__(self) -> str:
        return f"Custom({self.name!r})"
