"""The registry of what :func:`dpbounds.sweep` can compute: one :class:`Quantity` per name.

Each entry declares its axes (required, or optional with the default of the public function
it mirrors), its options (choices such as the Berry-Esseen coefficient), its output columns and
how one chunk is computed:

* ``kind="ufunc"``: closed forms.  ``compute(args, options, out=None)`` calls the compiled ufuncs of
  :mod:`dpbounds.ufuncs` on whole arrays (the sweep's chunks; dask arrays work too: the ufuncs
  dispatch through ``__array_ufunc__``).  Each axis is checked against the constraint the package's
  ufunc declaration table gives it; ``status(args, options)`` (optional) explains, with the
  package's status bits, the points where the result is NaN or infinite.
* ``kind="point"``: the exact accountants and calibration, which take scalars.
  ``compute(point, options)`` evaluates one point through the public API; a
  :class:`dpbounds.DPBoundsError` there marks that point invalid with its message.
* ``kind="block"``: the Renyi-DP epsilons, point-wise quantities evaluated a block of points
  at a time (:mod:`dpbounds.sweeps._rdp`): ``compute(args, options, stop)`` takes arrays and
  returns the outputs, ``valid`` and ``reasons`` (the error message of each invalid point),
  equal to the point-wise ``compute.point(point, options)`` at every point.

``outer`` optionally names (dotted path) or holds a separable-grid function: called with the
1-D values of ``outer_axes`` (and the options as keywords) it returns the whole Cartesian
block, equal to the element-wise ``compute`` on the broadcast grid.  The sweep engine uses it
automatically when the grid is Cartesian over exactly those axes.

A ``compute`` or ``outer`` with a true ``fills_status`` attribute also takes ``status=``: an
int8 array (of the outputs' shape) it fills with the quantity's status bits in the same pass,
equal to what ``status`` returns at every point whose axes obey their constraints.  The engine
then reads the reasons of the non-finite points from it instead of calling ``status`` on them.
Such an ``outer`` also takes ``out=``: the C-contiguous float64 block to write (and return),
as does one with a true ``takes_out`` attribute.  Any ``outer`` returns a new array or
``out``: the engine writes into it.  An ``outer`` may have a ``finite_where_valid(*axes,
**options)`` that tells, from the axis values that obey their constraints alone, whether
every value of the block is finite (the engine then skips a pass that looks).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from dpbounds import _ufuncs  # type: ignore[attr-defined, unused-ignore]
from dpbounds._errors import PrecisionWarning, status_reasons
from dpbounds._validation import Constraint

__all__ = ["Axis", "Option", "Quantity", "QUANTITIES", "get_quantity", "NONFINITE", "STATUS_BASE"]

#: Reason codes of the element-wise quantities: 0 = valid; 1 + j = axis j (declared order)
#: breaks its constraint; STATUS_BASE + bits = a status value; NONFINITE = a non-finite
#: result that no status bit explains.
STATUS_BASE = 16
NONFINITE = STATUS_BASE + 256

#: What each axis means; shown by ``dpbounds sweep --list`` and the command's help.
AXIS_HELP: dict[str, str] = {
    "sigma": "noise multiplier sigma (noise std / clipping norm)",
    "rounds": "rounds (steps) per epoch M",
    "delta": "target delta",
    "delta_total": "delta over all epochs",
    "epochs": "number of epochs E",
    "a": "type-I error a in [0, 1]",
    "eps": "epsilon of the (eps, delta) curve",
    "epsilon": "epsilon at which delta is computed",
    "mu": "Gaussian-DP mu",
    "sample_rate": "sampling rate q (Poisson) or gamma (without replacement)",
    "steps": "number of steps T",
    "clip_norm": "clipping norm C",
    "noise_ratio": "tolerated per-round noise ratio",
    "target_epsilon": "target epsilon",
    "target_delta": "target delta",
    "dataset_size": "dataset size N",
    "batch_size": "batch size B",
}


@dataclass(frozen=True)
class Axis:
    """A parameter of a quantity: required (``default`` None) or optional with its default."""

    name: str
    default: float | None = None


@dataclass(frozen=True)
class Option:
    """A non-swept argument: one of ``choices`` (the first is the default), or a real number."""

    name: str
    default: Any
    choices: tuple[str, ...] = ()
    help: str = ""
    check: Callable[[str, Any], Any] | None = None   # for real-valued options: validator(name, value)


@dataclass(frozen=True)
class Quantity:
    """One sweepable quantity (see the module docstring)."""

    name: str
    summary: str
    axes: tuple[Axis, ...]
    kind: str                                   # "ufunc", "point" or "block"
    compute: Callable[..., Any]
    outputs: tuple[str, ...]                    # float64 output columns; the first is the main one
    bool_outputs: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
    constraints: tuple[tuple[str, str, str], ...] = ()   # (axis, ufunc, argument) of the declaration table
    status: Callable[..., Any] | None = None
    nonfinite: str = "the result is not finite"
    chunk_size: int = 1 << 20
    public: str = ""                            # the public function the values equal
    outer: str | Callable[..., Any] | None = None
    outer_axes: tuple[str, ...] = ()
    _cache: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        # the cache holds Constraint members, which pickle by value (their lambdas cannot): a
        # worker process rebuilds it from the table on first use
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)

    @property
    def axis_names(self) -> tuple[str, ...]:
        got: tuple[str, ...] | None = self._cache.get("axis_names")   # (read several times a sweep)
        if got is None:
            got = self._cache["axis_names"] = tuple(a.name for a in self.axes)
        return got

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

    def axis_constraints(self) -> tuple[Constraint, ...]:
        """The constraint of each axis (declared order), from the ufunc declaration table."""
        got: tuple[Constraint, ...] | None = self._cache.get("constraints")
        if got is None:
            # the table is imported on first use, as dpbounds._dispatch does
            from dpbounds._ufunc_table import by_name

            table = {ax: next(a.constraint for a in by_name(u).args if a.name == arg)
                     for ax, u, arg in self.constraints}
            got = tuple(table.get(a.name, Constraint.ANY) for a in self.axes)
            self._cache["constraints"] = got
        return got

    def reason_table(self) -> list[str]:
        """Reason text of every code (see :data:`STATUS_BASE`)."""
        got: list[str] | None = self._cache.get("reasons")
        if got is None:
            got = [""] * (NONFINITE + 1)
            for j, (ax, c) in enumerate(zip(self.axes, self.axis_constraints())):
                got[1 + j] = f"{ax.name} must be {c.text}"
            for bits in range(1, 256):
                got[STATUS_BASE + bits] = "; ".join(status_reasons(bits)) or self.nonfinite
            got[NONFINITE] = self.nonfinite
            self._cache["reasons"] = got
        return got


# ---------------------------------------------------------------- element-wise (ufunc) quantities
def _u(name: str) -> Any:
    return getattr(_ufuncs, name)


#: Where a ufunc quantity writes its outputs (name -> array), or None to allocate them.
Out = Mapping[str, Any] | None


def _out(out: Out, name: str) -> Any:
    # out=None is the ufunc's own default (allocate), also for dask arrays
    return None if out is None else out.get(name)


_COEF = Option("coefficient", "exact", ("exact", "simplified"),
               "Berry-Esseen coefficient of Theorem 3.1 ('simplified' is the paper's statement)")


class _DeltaBound:
    """delta_bound; with ``status`` (an int8 array), also its status bits in the same pass.

    With ``status`` it calls the ``_delta_bound_checked_*`` ufunc instead, which differs from
    ``delta_bound_*`` only where sigma is not finite > 0 or rounds not an integer >= 3 (NaN,
    status BAD_INPUT there): exactly the points that break the axes' constraints, which the
    engine overwrites.  Elsewhere the values are the same bits and the status bits are those
    of :func:`_theorem31_status` (tests/sweep/test_sweep_fused.py).
    """

    #: ``compute(args, options, out, status=...)`` fills ``status`` (see :data:`Quantity.compute`)
    fills_status: ClassVar[bool] = True

    def __call__(self, a: Mapping[str, Any], o: Mapping[str, Any], out: Out = None,
                 status: Any = None) -> dict[str, Any]:
        if status is None:
            return {"delta_bound": _u(f"delta_bound_{o['coefficient']}")(a["sigma"], a["rounds"],
                                                                          out=_out(out, "delta_bound"))}
        v, _ = _u(f"_delta_bound_checked_{o['coefficient']}")(a["sigma"], a["rounds"],
                                                               out=(_out(out, "delta_bound"), status))
        return {"delta_bound": v}


_delta_bound = _DeltaBound()


def _theorem31_status(a: Mapping[str, Any], o: Mapping[str, Any]) -> Any:
    # delta = NaN: condition (2) at delta_min, the reading of delta_bound and tradeoff_lower_bound
    return _u(f"theorem31_status_{o['coefficient']}")(a["sigma"], a["rounds"], np.nan)


def _rounds_required(a: Mapping[str, Any], o: Mapping[str, Any], out: Out = None) -> dict[str, Any]:
    # as dpbounds.rounds_required on arrays: the per-epoch target first, then the search
    d = _u("per_epoch_delta")(a["delta"], a["epochs"])
    tail = "_at_target" if o["validity_at"] == "target" else ""
    f = _u(f"rounds_required_{o['coefficient']}{tail}")
    return {"rounds_required": f(a["sigma"], d, out=_out(out, "rounds_required"))}


# ---- separable (outer) forms: the tile kernels of dpbounds.outer (its unvalidated *_tiles
# functions, which its public functions call too), equal to the ufuncs above bit for bit, NaN
# pattern included (tests/special/test_outer.py); the engine marks the axis values that break a constraint
def _outer_axes(*axes: Any) -> tuple[Any, ...]:
    return tuple(np.ascontiguousarray(x, dtype=np.float64) for x in axes)


class _DeltaBoundOuter:
    """The separable delta_bound, into ``out`` if given; with ``status`` (an int8 array of the
    block's shape), also its status bits in the same tile pass (the kernel's checked mode: as
    :class:`_DeltaBound` with ``status``, bit for bit)."""

    #: the outer function fills ``status=`` (see :data:`Quantity.outer`)
    fills_status: ClassVar[bool] = True

    def __call__(self, sigma: Any, rounds: Any, *, coefficient: str, status: Any = None, out: Any = None) -> Any:
        from dpbounds.outer import delta_bound_tiles

        s, m = _outer_axes(sigma, rounds)
        return delta_bound_tiles(s, m, coefficient, np.empty((s.size, m.size)) if out is None else out, status)


_delta_bound_outer = _DeltaBoundOuter()


class _RoundsRequiredOuter:
    """The separable rounds_required, into ``out`` if given."""

    #: the outer function takes ``out=`` (see :data:`Quantity.outer`)
    takes_out: ClassVar[bool] = True

    def __call__(self, sigma: Any, delta: Any, *, coefficient: str, validity_at: str, epochs: float,
                 out: Any = None) -> Any:
        from dpbounds.outer import rounds_required_tiles

        # as the element-wise path: the per-epoch target first (per delta value), then the search
        s, d = _outer_axes(sigma, delta)
        return rounds_required_tiles(s, d, coefficient, validity_at == "target", epochs,
                                     np.empty((s.size, d.size)) if out is None else out)


class _MinDatasetSizeOuter:
    """The separable min_dataset_size, into ``out`` if given."""

    #: the outer function takes ``out=`` (see :data:`Quantity.outer`)
    takes_out: ClassVar[bool] = True

    def __call__(self, sigma: Any, rounds: Any, *, clip_norm: float, noise_ratio: float, out: Any = None) -> Any:
        from dpbounds.outer import min_dataset_size_tiles

        s, m = _outer_axes(sigma, rounds)
        # an overflow is an infinite size, explained in the reason column (the kernel raises no FP flag)
        return min_dataset_size_tiles(s, m, clip_norm, noise_ratio, np.empty((s.size, m.size)) if out is None else out)

    @staticmethod
    def finite_where_valid(sigma: Any, rounds: Any, *, clip_norm: float, noise_ratio: float) -> bool:
        """Whether the block of ``sigma`` x ``rounds`` (values that obey their constraints) is finite
        everywhere: N = (C sigma) M / r is computed left to right with correctly rounded
        operations on positive numbers, so it never decreases when sigma or M grows and is
        largest at the largest pair (where the ufunc gives the kernel's double)."""
        s, m = np.asarray(sigma, dtype=np.float64), np.asarray(rounds, dtype=np.float64)
        if s.size == 0 or m.size == 0:
            return True
        with np.errstate(all="ignore"):
            return bool(np.isfinite(_u("min_dataset_size")(s.max(), m.max(), clip_norm, noise_ratio)))


_rounds_required_outer = _RoundsRequiredOuter()
_min_dataset_size_outer = _MinDatasetSizeOuter()


def _rounds_closed_form(a: Mapping[str, Any], o: Mapping[str, Any], out: Out = None) -> dict[str, Any]:
    f = _u(f"rounds_closed_form_{o['coefficient']}")
    return {"rounds_closed_form": f(a["sigma"], a["delta"], out=_out(out, "rounds_closed_form"))}


def _min_dataset_size(a: Mapping[str, Any], o: Mapping[str, Any], out: Out = None) -> dict[str, Any]:
    return {"min_dataset_size": _u("min_dataset_size")(a["sigma"], a["rounds"], a["clip_norm"], a["noise_ratio"],
                                                        out=_out(out, "min_dataset_size"))}


def _tradeoff_clt(a: Mapping[str, Any], o: Mapping[str, Any], out: Out = None) -> dict[str, Any]:
    f = _u("tradeoff_clt_truncated" if o["truncated"] == "true" else "tradeoff_clt")
    return {"tradeoff_clt": f(a["a"], a["sigma"], a["rounds"], out=_out(out, "tradeoff_clt"))}


def _tradeoff_edgeworth(a: Mapping[str, Any], o: Mapping[str, Any], out: Out = None) -> dict[str, Any]:
    return {"tradeoff_edgeworth": _u("tradeoff_edgeworth")(a["a"], a["sigma"], a["rounds"],
                                                            out=_out(out, "tradeoff_edgeworth"))}


def _edgeworth_status(a: Mapping[str, Any], o: Mapping[str, Any]) -> Any:
    return _u("edgeworth_status")(a["a"], a["sigma"], a["rounds"])


def _tradeoff_lower_bound(a: Mapping[str, Any], o: Mapping[str, Any], out: Out = None) -> dict[str, Any]:
    f = _u(f"tradeoff_lower_bound_{o['coefficient']}")
    return {"tradeoff_lower_bound": f(a["a"], a["sigma"], a["rounds"], out=_out(out, "tradeoff_lower_bound"))}


@dataclass(frozen=True)
class _Simple:
    """``{ufunc: ufunc(*axes)}``: a quantity that is one ufunc of its axes (picklable)."""

    ufunc: str
    args: tuple[str, ...]

    def __call__(self, a: Mapping[str, Any], o: Mapping[str, Any], out: Out = None) -> dict[str, Any]:
        return {self.ufunc: _u(self.ufunc)(*(a[n] for n in self.args), out=_out(out, self.ufunc))}


def _simple(ufunc: str, *args: str) -> _Simple:
    return _Simple(ufunc, args)


def _same(u: str, *axes: str) -> tuple[tuple[str, str, str], ...]:
    return tuple((ax, u, ax) for ax in axes)


_UFUNC_QUANTITIES = (
    Quantity("delta_bound", "delta_min of Theorem 3.1 where it applies", (Axis("sigma"), Axis("rounds")),
             "ufunc", _delta_bound, ("delta_bound",), options=(_COEF,),
             constraints=_same("_delta_bound_checked_exact", "sigma", "rounds"), status=_theorem31_status,
             public="dpbounds.delta_bound", outer=_delta_bound_outer, outer_axes=("sigma", "rounds")),
    Quantity("rounds_required", "smallest rounds M certified by Theorem 3.1 for a target delta",
             (Axis("sigma"), Axis("delta"), Axis("epochs", 1.0)), "ufunc", _rounds_required, ("rounds_required",),
             options=(_COEF, Option("validity_at", "delta_min", ("delta_min", "target"),
                                    "which delta enters condition (2)")),
             constraints=_same("rounds_required_exact", "sigma", "delta") + (("epochs", "per_epoch_delta", "epochs"),),
             nonfinite="no number of rounds up to 2**53 meets the target (Theorem 3.1's conditions fail)",
             public="dpbounds.rounds_required", outer=_rounds_required_outer, outer_axes=("sigma", "delta")),
    Quantity("rounds_closed_form", "closed-form rounds (eq. (4)), an approximation of rounds_required",
             (Axis("sigma"), Axis("delta")), "ufunc", _rounds_closed_form, ("rounds_closed_form",), options=(_COEF,),
             constraints=_same("rounds_closed_form_exact", "sigma", "delta"),
             nonfinite="the number of rounds exceeds the double range", public="dpbounds.rounds_closed_form"),
    Quantity("min_dataset_size", "dataset size N = C sigma M / noise_ratio",
             (Axis("sigma"), Axis("rounds"), Axis("clip_norm", 1.0), Axis("noise_ratio", 0.1)), "ufunc",
             _min_dataset_size, ("min_dataset_size",),
             constraints=_same("min_dataset_size", "sigma", "rounds", "clip_norm", "noise_ratio"),
             nonfinite="the dataset size exceeds the double range", public="dpbounds.min_dataset_size",
             outer=_min_dataset_size_outer, outer_axes=("sigma", "rounds")),
    Quantity("tradeoff_clt", "central-limit trade-off curve of random allocation (an approximation)",
             (Axis("a"), Axis("sigma"), Axis("rounds")), "ufunc", _tradeoff_clt, ("tradeoff_clt",),
             options=(Option("truncated", "false", ("false", "true"), "truncate the integral at z_max"),),
             constraints=_same("tradeoff_clt", "a", "sigma", "rounds"), public="dpbounds.tradeoff_clt"),
    Quantity("tradeoff_edgeworth", "Edgeworth-corrected trade-off curve (an approximation)",
             (Axis("a"), Axis("sigma"), Axis("rounds")), "ufunc", _tradeoff_edgeworth, ("tradeoff_edgeworth",),
             constraints=_same("tradeoff_edgeworth", "a", "sigma", "rounds"), status=_edgeworth_status,
             public="dpbounds.tradeoff_edgeworth"),
    Quantity("tradeoff_lower_bound", "max(1 - a - delta_min, 0) where Theorem 3.1 applies",
             (Axis("a"), Axis("sigma"), Axis("rounds")), "ufunc", _tradeoff_lower_bound, ("tradeoff_lower_bound",),
             options=(_COEF,), constraints=_same("tradeoff_lower_bound_exact", "a", "sigma", "rounds"),
             status=_theorem31_status, public="dpbounds.tradeoff_lower_bound"),
    Quantity("gdp_epsilon", "epsilon(delta) of mu-Gaussian DP", (Axis("delta"), Axis("mu")), "ufunc",
             _simple("gdp_epsilon", "delta", "mu"), ("gdp_epsilon",),
             constraints=_same("gdp_epsilon", "delta", "mu"), public="dpbounds.gdp_epsilon"),
    Quantity("gdp_delta", "delta(eps) of mu-Gaussian DP", (Axis("eps"), Axis("mu")), "ufunc",
             _simple("gdp_delta", "eps", "mu"), ("gdp_delta",),
             constraints=_same("gdp_delta", "eps", "mu"), public="dpbounds.gdp_delta"),
    Quantity("gdp_mu_random_allocation", "asymptotic Gaussian-DP mu of random allocation (an approximation)",
             (Axis("sigma"), Axis("rounds"), Axis("epochs", 1.0)), "ufunc",
             _simple("gdp_mu_random_allocation", "sigma", "rounds", "epochs"), ("gdp_mu_random_allocation",),
             constraints=_same("gdp_mu_random_allocation", "sigma", "rounds", "epochs"),
             public="dpbounds.gdp_mu_random_allocation"),
    Quantity("gdp_mu_poisson", "central-limit Gaussian-DP mu of Poisson subsampling (an approximation)",
             (Axis("sigma"), Axis("sample_rate"), Axis("steps")), "ufunc",
             _simple("gdp_mu_poisson", "sigma", "sample_rate", "steps"), ("gdp_mu_poisson",),
             constraints=_same("gdp_mu_poisson", "sigma", "sample_rate", "steps"), public="dpbounds.gdp_mu_poisson"),
    Quantity("gdp_mu_poisson_drs", "Dong-Roth-Su central-limit mu of Poisson subsampling (an approximation)",
             (Axis("sigma"), Axis("sample_rate"), Axis("steps")), "ufunc",
             _simple("gdp_mu_poisson_drs", "sigma", "sample_rate", "steps"), ("gdp_mu_poisson_drs",),
             constraints=_same("gdp_mu_poisson_drs", "sigma", "sample_rate", "steps"),
             public="dpbounds.gdp_mu_poisson_drs"),
    Quantity("compose_delta", "1 - (1 - delta)^E: delta of a (0, delta) guarantee over E epochs",
             (Axis("delta"), Axis("epochs")), "ufunc", _simple("compose_delta", "delta", "epochs"), ("compose_delta",),
             constraints=_same("compose_delta", "delta", "epochs"), public="dpbounds.compose_delta"),
    Quantity("per_epoch_delta", "per-epoch delta giving delta_total over E epochs",
             (Axis("delta_total"), Axis("epochs")), "ufunc", _simple("per_epoch_delta", "delta_total", "epochs"),
             ("per_epoch_delta",), constraints=_same("per_epoch_delta", "delta_total", "epochs"),
             public="dpbounds.per_epoch_delta"),
)


# ---------------------------------------------------------------- point-wise quantities
def _check_real(name: str, value: Any) -> float:
    from dpbounds import _validation as V

    return float(V.check_open_unit(name, value))


def _rdp_args(p: Mapping[str, float]) -> tuple[float, float, float, float]:
    from dpbounds import _validation as V

    s = float(V.check_finite_positive("sigma", p["sigma"]))
    q = V.check_rate("sample_rate", p["sample_rate"])
    t = float(V.check_rounds("steps", p["steps"], minimum=1))
    d = float(V.check_open_unit("delta", p["delta"]))
    return s, q, t, d


def _rdp_epsilon_poisson(p: Mapping[str, float], o: Mapping[str, Any]) -> dict[str, Any]:
    """One point, through the public accountant (what the block evaluation equals)."""
    from dpbounds.rdp import PoissonGaussian, RDPAccountant

    s, q, t, d = _rdp_args(p)
    orders = "default" if o.get("orders") == "default" else None
    acc = RDPAccountant(orders=orders, conversion=o["conversion"]).compose(PoissonGaussian(s, q, o["mode"]), t)
    eps, order = acc.get_epsilon(d, return_order=True)  # type: ignore[misc]
    return {"rdp_epsilon_poisson": eps, "order": order}


def _rdp_epsilon_wor(p: Mapping[str, float], o: Mapping[str, Any]) -> dict[str, Any]:
    """One point, through the public accountant (what the block evaluation equals)."""
    from dpbounds.rdp import RDPAccountant, SubsampledGaussianWOR

    s, q, t, d = _rdp_args(p)
    # replace-one neighbours: a sum clipped to norm C has sensitivity 2C, so the mechanism's
    # sigma is the noise multiplier / 2 (as `dpbounds rdp` does)
    orders = "default" if o.get("orders") == "default" else None
    acc = RDPAccountant(orders=orders, conversion=o["conversion"]).compose(SubsampledGaussianWOR(s / 2.0, q, o["bound"]), t)
    eps, order = acc.get_epsilon(d, return_order=True)  # type: ignore[misc]
    return {"rdp_epsilon_wor": eps, "order": order}


@dataclass(frozen=True)
class _RdpBlock:
    """A block of points of an RDP quantity at once (:mod:`dpbounds.sweeps._rdp`), equal to ``point``
    at every point; ``compute(args, options, stop)`` returns the outputs, ``valid`` and ``reasons``."""

    kind: str      # "poisson" or "wor"
    output: str
    point: Callable[[Mapping[str, float], Mapping[str, Any]], dict[str, Any]]

    def __call__(self, a: Mapping[str, Any], o: Mapping[str, Any], stop: Callable[[], None] = lambda: None) -> dict[str, Any]:
        from dpbounds.sweeps._rdp import rdp_epsilons

        r = rdp_epsilons(self.kind, a, o, stop)
        return {self.output: r["eps"], "order": r["order"], "valid": r["valid"], "reasons": r["reasons"]}


def _bracket(name: str, br: Any) -> dict[str, Any]:
    return {name: br.upper, "lower": br.lower, "upper": br.upper, "tolerance_met": br.tolerance_met,
            "note": br.note}


def _quiet(f: Callable[[], Any]) -> Any:
    # The bracket's tolerance_met/note columns carry what the PrecisionWarning would say; the
    # sweep warns once at the end for all such points instead of once per point.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrecisionWarning)
        return f()


def _epsilon_random_allocation(p: Mapping[str, float], o: Mapping[str, Any]) -> dict[str, Any]:
    from dpbounds import RandomAllocationAccountant

    acc = RandomAllocationAccountant(p["sigma"], p["rounds"], p["epochs"], tolerance=o["tolerance"])
    return _bracket("epsilon_random_allocation", _quiet(lambda: acc.get_epsilon_bracket(p["delta"])))


def _delta_random_allocation(p: Mapping[str, float], o: Mapping[str, Any]) -> dict[str, Any]:
    from dpbounds import RandomAllocationAccountant

    acc = RandomAllocationAccountant(p["sigma"], p["rounds"], p["epochs"], tolerance=o["tolerance"])
    return _bracket("delta_random_allocation", _quiet(lambda: acc.get_delta_bracket(p["epsilon"])))


def _poisson(p: Mapping[str, float], o: Mapping[str, Any]) -> Any:
    from dpbounds import PoissonAccountant
    from dpbounds import _validation as V

    steps = V.check_count("steps", p["steps"], minimum=1)
    return PoissonAccountant(noise_multiplier=p["sigma"], sample_rate=p["sample_rate"], steps=steps,
                             tolerance=o["tolerance"])


def _epsilon_poisson(p: Mapping[str, float], o: Mapping[str, Any]) -> dict[str, Any]:
    acc = _poisson(p, o)
    return _bracket("epsilon_poisson", _quiet(lambda: acc.get_epsilon_bracket(p["delta"])))


def _delta_poisson(p: Mapping[str, float], o: Mapping[str, Any]) -> dict[str, Any]:
    acc = _poisson(p, o)
    return _bracket("delta_poisson", _quiet(lambda: acc.get_delta_bracket(p["epsilon"])))


def _noise_multiplier(p: Mapping[str, float], o: Mapping[str, Any]) -> dict[str, Any]:
    from dpbounds import _validation as V
    from dpbounds.calibration import calibrate_noise

    n = V.check_count("dataset_size", p["dataset_size"], minimum=1)
    b = V.check_count("batch_size", p["batch_size"], minimum=1)
    s = _quiet(lambda: calibrate_noise(p["target_epsilon"], p["target_delta"], dataset_size=n, batch_size=b,
                                       epochs=p["epochs"], sampling=o["sampling"], accountant=o["accountant"],
                                       tolerance=o["tolerance"]))
    return {"noise_multiplier": s}


_CONVERSION = Option("conversion", "improved", ("improved", "classic"), "RDP -> (eps, delta) conversion")
_ORDERS = Option("orders", "search", ("search", "default"),
                 "RDP orders: 'search' optimises over real orders (as RDPAccountant() does), 'default' takes the "
                 "minimum over TF-Privacy/dp-accounting's fixed list (RDPAccountant(orders='default'))")
_TOLERANCE = Option("tolerance", 2e-3, help="relative width target of the certified bracket", check=_check_real)
_EXACT = ("lower", "upper")

_POINT_QUANTITIES = (
    Quantity("rdp_epsilon_poisson", "Renyi-DP epsilon(delta) of Poisson-subsampled DP-SGD (upper bound)",
             (Axis("sigma"), Axis("sample_rate"), Axis("steps"), Axis("delta")), "block",
             _RdpBlock("poisson", "rdp_epsilon_poisson", _rdp_epsilon_poisson), ("rdp_epsilon_poisson", "order"),
             options=(_CONVERSION, Option("mode", "exact", ("exact", "compat"),
                                          "fractional orders: exact, or the peers' |C(a, i)| series"), _ORDERS),
             chunk_size=64, public="dpbounds.rdp.RDPAccountant"),
    Quantity("rdp_epsilon_wor", "Renyi-DP epsilon(delta) of DP-SGD sampling without replacement (upper bound, "
             "replace-one neighbours)",
             (Axis("sigma"), Axis("sample_rate"), Axis("steps"), Axis("delta")), "block",
             _RdpBlock("wor", "rdp_epsilon_wor", _rdp_epsilon_wor), ("rdp_epsilon_wor", "order"),
             options=(_CONVERSION, Option("bound", "improved", ("improved", "theorem9"),
                                          "the improved bound or Theorem 9"), _ORDERS),
             chunk_size=64, public="dpbounds.rdp.RDPAccountant"),
    Quantity("epsilon_random_allocation", "exact certified epsilon(delta) of random allocation",
             (Axis("sigma"), Axis("rounds"), Axis("epochs", 1.0), Axis("delta")), "point",
             _epsilon_random_allocation, ("epsilon_random_allocation",) + _EXACT, ("tolerance_met",),
             options=(_TOLERANCE,), chunk_size=4, public="dpbounds.RandomAllocationAccountant"),
    Quantity("delta_random_allocation", "exact certified delta(epsilon) of random allocation",
             (Axis("sigma"), Axis("rounds"), Axis("epochs", 1.0), Axis("epsilon")), "point",
             _delta_random_allocation, ("delta_random_allocation",) + _EXACT, ("tolerance_met",),
             options=(_TOLERANCE,), chunk_size=4, public="dpbounds.RandomAllocationAccountant"),
    Quantity("epsilon_poisson", "exact certified epsilon(delta) of Poisson subsampling",
             (Axis("sigma"), Axis("sample_rate"), Axis("steps"), Axis("delta")), "point", _epsilon_poisson,
             ("epsilon_poisson",) + _EXACT, ("tolerance_met",), options=(_TOLERANCE,), chunk_size=4,
             public="dpbounds.PoissonAccountant"),
    Quantity("delta_poisson", "exact certified delta(epsilon) of Poisson subsampling",
             (Axis("sigma"), Axis("sample_rate"), Axis("steps"), Axis("epsilon")), "point", _delta_poisson,
             ("delta_poisson",) + _EXACT, ("tolerance_met",), options=(_TOLERANCE,), chunk_size=4,
             public="dpbounds.PoissonAccountant"),
    Quantity("noise_multiplier", "smallest noise multiplier meeting (target_epsilon, target_delta)",
             (Axis("target_epsilon"), Axis("target_delta"), Axis("dataset_size"), Axis("batch_size"),
              Axis("epochs", 1.0)), "point", _noise_multiplier, ("noise_multiplier",),
             options=(Option("sampling", "random_allocation", ("random_allocation", "poisson", "without_replacement"),
                             "batch sampling scheme"),
                      Option("accountant", "exact", ("exact", "rdp"), "accountant"), _TOLERANCE),
             chunk_size=1, public="dpbounds.calibrate_noise"),
)

#: Every sweepable quantity, by name.
QUANTITIES: dict[str, Quantity] = {q.name: q for q in _UFUNC_QUANTITIES + _POINT_QUANTITIES}


def get_quantity(quantity: str | Quantity) -> Quantity:
    """The registry entry ``quantity`` (a name), or ``quantity`` itself if it is a :class:`Quantity`."""
    from dpbounds._errors import DPBoundsError

    if isinstance(quantity, Quantity):
        return quantity
    if not isinstance(quantity, str) or quantity not in QUANTITIES:
        raise DPBoundsError(f"quantity must be one of {', '.join(QUANTITIES)}; got {quantity!r}")
    return QUANTITIES[quantity]
