"""Evaluation of one chunk of a sweep: the element-wise, separable (outer) and point-wise paths.

Every engine calls the functions here on the same chunks, so the engines agree bit for bit:
the local and process engines call :func:`evaluate_chunk`; the dask engine runs the same
ufunc calls on dask arrays and then :func:`finish` on each block.

Invalid points are kept.  A point whose axis values break a constraint of the package's
declaration table gets NaN outputs and the reason "<axis> must be <rule>"; a point where an
element-wise result is NaN or infinite gets the reason from the quantity's status bits (or
its ``nonfinite`` text) and keeps the value the kernel returned; a point-wise quantity that
raises :class:`dpbounds.DPBoundsError` at a point gets NaN outputs and the error's message.
"""
from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import NDArray

from dpbounds.sweep._grid import Grid, Layout
from dpbounds.sweep._quantities import NONFINITE, STATUS_BASE, Quantity

__all__ = ["ChunkResult", "Plan", "evaluate_chunk", "finish", "resolve_outer"]

FArr = NDArray[np.float64]


@dataclass(frozen=True)
class Plan:
    """Everything needed to evaluate any chunk of a sweep (picklable, sent once to each worker)."""

    quantity: Quantity
    options: Mapping[str, Any]
    grid: Grid
    layout: Layout
    path: str                                      # "elementwise", "outer" or "point"
    axis_codes: tuple[NDArray[np.int16] | None, ...]  # per swept axis: code per value (None: all valid)
    outer: Callable[..., Any] | None = None

    @property
    def n_chunks(self) -> int:
        return self.layout.n_chunks


@dataclass
class ChunkResult:
    """The outputs of the points ``lo..hi-1``.

    ``codes`` (element-wise quantities) are reason codes into ``Quantity.reason_table()``, or
    None when every point is valid; ``reasons`` (point-wise quantities) are the strings.
    """

    lo: int
    hi: int
    values: dict[str, NDArray[Any]]
    valid: NDArray[np.bool_]
    codes: NDArray[np.int16] | None = None
    reasons: NDArray[np.object_] | None = None

    def reason_strings(self, table: list[str]) -> NDArray[np.object_]:
        """The reason of every point as an object array of str ("" where valid)."""
        if self.reasons is not None:
            return self.reasons
        out = np.empty(self.hi - self.lo, dtype=object)
        out.fill("")
        if self.codes is not None:
            nz = np.flatnonzero(self.codes)
            out[nz] = np.asarray(table, dtype=object)[self.codes[nz]]
        return out


def resolve_outer(spec: str | Callable[..., Any]) -> Callable[..., Any]:
    """The outer function named by a dotted path (``"package.module.function"``), or ``spec`` itself."""
    if callable(spec):
        return spec
    module, _, name = spec.rpartition(".")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def axis_codes(quantity: Quantity, grid: Grid) -> tuple[NDArray[np.int16] | None, ...]:
    """Per swept axis, the reason code of each value (1 + declared index where the value breaks
    the axis' constraint), or None when all its values are valid (the common case: then no
    per-point check is needed at all)."""
    constraints = dict(zip(quantity.axis_names, quantity.axis_constraints()))
    out: list[NDArray[np.int16] | None] = []
    for name, values in zip(grid.names, grid.values):
        ok = constraints[name].holds(values)
        if ok.all():
            out.append(None)
        else:
            out.append(np.where(ok, 0, 1 + quantity.axis_names.index(name)).astype(np.int16))
    return tuple(out)


def _constraint_codes(plan: Plan, lo: int, hi: int) -> NDArray[np.int16] | None:
    """Per point, the code of the first axis (declared order) that breaks its constraint."""
    if all(c is None for c in plan.axis_codes):
        return None
    declared = plan.quantity.axis_names
    order = sorted((declared.index(n), j) for j, n in enumerate(plan.grid.names))
    code = np.zeros(hi - lo, dtype=np.int16)
    for _, j in reversed(order):   # the first failing axis in declared order wins
        c = plan.axis_codes[j]
        if c is not None:
            per = plan.grid.per_point(j, c, lo, hi)
            code = np.where(per != 0, per, code)
    return code


def _args_at(plan: Plan, lo: int, idx: NDArray[np.intp]) -> dict[str, Any]:
    """The quantity's arguments at the points ``lo + idx`` (grid coordinates and fixed axes)."""
    grid = plan.grid
    args: dict[str, Any] = dict(grid.fixed)
    g = lo + idx
    for j, (n, v) in enumerate(zip(grid.names, grid.values)):
        args[n] = v[g] if grid.zipped else v[(g // grid.strides[j]) % v.shape[0]]
    return args


def finish(plan: Plan, lo: int, hi: int, values: dict[str, FArr], recompute: bool = False) -> NDArray[np.int16] | None:
    """Reason codes of the element-wise points ``lo..hi-1`` whose raw ufunc outputs are ``values``
    (None: all valid).  Updates ``values`` in place: NaN where an axis breaks its constraint.

    ``recompute`` (the outer path): re-evaluate the non-finite points element-wise, so that
    they carry exactly the element-wise path's value.
    """
    q = plan.quantity
    codes = _constraint_codes(plan, lo, hi)
    if codes is not None:
        bad = codes != 0
        for k in q.outputs:
            values[k][bad] = np.nan
    main = values[q.outputs[0]]
    nonfinite = ~np.isfinite(main)
    if codes is not None:
        nonfinite &= codes == 0
    if nonfinite.any():
        idx = np.flatnonzero(nonfinite)
        args = _args_at(plan, lo, idx)
        if recompute:
            sub = q.compute(args, plan.options)
            for k in q.outputs:
                values[k][idx] = sub[k]
        if codes is None:
            codes = np.zeros(hi - lo, dtype=np.int16)
        if q.status is not None:
            st = np.asarray(q.status(args, plan.options)).astype(np.int16)
            codes[idx] = np.where(st != 0, STATUS_BASE + st, NONFINITE)
        else:
            codes[idx] = NONFINITE
    return codes


def _result(lo: int, hi: int, values: dict[str, NDArray[Any]], codes: NDArray[np.int16] | None,
            valid: NDArray[np.bool_] | None = None) -> ChunkResult:
    if valid is None:
        valid = np.empty(hi - lo, dtype=bool)
    if codes is None:
        valid.fill(True)
    else:
        np.equal(codes, 0, out=valid)
    return ChunkResult(lo, hi, values, valid, codes=codes)


#: Points per block inside an element-wise chunk: the coordinates and temporaries of a block
#: stay in cache (and in reused heap memory), however large the chunk.
BLOCK = 1 << 15


def _elementwise(plan: Plan, lo: int, hi: int, out: Mapping[str, NDArray[Any]] | None) -> ChunkResult:
    q = plan.quantity
    n = hi - lo
    values = {k: (out[k] if out is not None else np.empty(n)) for k in q.outputs}
    codes: NDArray[np.int16] | None = None
    for b0 in range(lo, hi, BLOCK):
        b1 = min(hi, b0 + BLOCK)
        args: dict[str, Any] = dict(plan.grid.fixed)
        args.update(plan.grid.coords(b0, b1))
        dest = {k: v[b0 - lo:b1 - lo] for k, v in values.items()}
        q.compute(args, plan.options, out=dest)
        c = finish(plan, b0, b1, dest)
        if c is not None:
            if codes is None:
                codes = np.zeros(n, dtype=np.int16)
            codes[b0 - lo:b1 - lo] = c
    return _result(lo, hi, values, codes, None if out is None else out.get("valid"))


def _outer(plan: Plan, lo: int, hi: int) -> ChunkResult:
    q, grid = plan.quantity, plan.grid
    assert plan.outer is not None
    rest = plan.layout.unit
    r0, r1 = lo // rest, hi // rest
    arrays = {n: v for n, v in zip(grid.names, grid.values)}
    arrays[grid.names[0]] = grid.values[0][r0:r1]
    # the axes the caller left at their defaults are passed by name, as the options are
    block = np.asarray(plan.outer(*(arrays[n] for n in q.outer_axes), **plan.options, **plan.grid.fixed),
                       dtype=np.float64)
    perm = [q.outer_axes.index(n) for n in grid.names]
    values = {q.outputs[0]: np.array(np.transpose(block, perm), dtype=np.float64, order="C").reshape(-1)}
    return _result(lo, hi, values, finish(plan, lo, hi, values, recompute=True))


# catch_warnings changes process-wide state: point evaluations in threads (the dask engine
# without a distributed client) take turns so the filters are always restored correctly
_POINT_LOCK = threading.Lock()


def _point(plan: Plan, lo: int, hi: int) -> ChunkResult:
    q = plan.quantity
    n = hi - lo
    coords = plan.grid.coords(lo, hi)
    values: dict[str, NDArray[Any]] = {k: np.full(n, np.nan) for k in q.outputs}
    values.update({k: np.zeros(n, dtype=bool) for k in q.bool_outputs})
    valid = np.zeros(n, dtype=bool)
    reasons = np.empty(n, dtype=object)
    reasons.fill("")
    for i in range(n):
        point = dict(plan.grid.fixed)
        point.update({k: float(v[i]) for k, v in coords.items()})
        try:
            with _POINT_LOCK:
                r = q.compute(point, plan.options)
        except ValueError as exc:   # DPBoundsError (a ValueError): this point is outside the domain
            reasons[i] = str(exc)
            continue
        for k in q.outputs + q.bool_outputs:
            values[k][i] = r[k]
        valid[i] = True
        reasons[i] = r.get("note", "")
    return ChunkResult(lo, hi, values, valid, reasons=reasons)


def evaluate_chunk(plan: Plan, i: int, out: Mapping[str, NDArray[Any]] | None = None) -> ChunkResult:
    """The outputs of chunk ``i`` of ``plan``.

    ``out`` (element-wise path only): arrays of the chunk's length the outputs and ``valid``
    are written into (the in-memory result's own slices: no copy).
    """
    lo, hi = plan.layout.bounds(i)
    if plan.path == "point":
        return _point(plan, lo, hi)
    if plan.path == "outer":
        return _outer(plan, lo, hi)
    return _elementwise(plan, lo, hi, out)
