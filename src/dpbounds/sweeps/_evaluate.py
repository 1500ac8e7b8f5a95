"""Evaluation of one chunk of a sweep: the element-wise, separable (outer) and point-wise paths.

Every engine calls :func:`evaluate_chunk` on the same chunks (the dask engine as one task per
chunk), so the engines agree bit for bit.

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

from dpbounds.sweeps._grid import Grid, Layout
from dpbounds.sweeps._interrupt import Interrupts
from dpbounds.sweeps._quantities import NONFINITE, STATUS_BASE, Quantity

__all__ = ["Abandoned", "ChunkResult", "Plan", "evaluate_chunk", "finish", "finish_values", "put_reasons",
           "reason_codes", "resolve_outer", "put_reasons_at", "PUT_CODES", "STATUS_BANDS"]

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
    ``deferred``: the codes were not computed; :func:`reason_codes` gives them from ``valid``
    when they are asked for.  A deferred chunk's ``valid`` may be None: it is then
    ``numpy.isfinite`` of the main output (which is NaN wherever an axis breaks its
    constraint), computed when it is read.
    """

    lo: int
    hi: int
    values: dict[str, NDArray[Any]]
    valid: NDArray[np.bool_] | None   # None (deferred chunks only): numpy.isfinite of the main output
    codes: NDArray[np.int16] | None = None
    reasons: NDArray[np.object_] | None = None
    deferred: bool = False   # element-wise chunk evaluated without its reasons (see evaluate_chunk)

    def valid_mask(self) -> NDArray[np.bool_]:
        """``valid``, computed when the chunk left it to be read (``numpy.isfinite`` of the main output)."""
        if self.valid is not None:
            return self.valid
        main: NDArray[np.float64] = next(iter(self.values.values()))   # the main output comes first
        return np.isfinite(main)

    def reason_strings(self, table: list[str]) -> NDArray[np.object_]:
        """The reason of every point as an object array of str ("" where valid)."""
        if self.reasons is not None:
            return self.reasons
        out = np.empty(self.hi - self.lo, dtype=object)
        out.fill("")
        if self.codes is not None:
            put_reasons(out, self.codes, np.asarray(table, dtype=object))
        return out


#: Most distinct codes :func:`put_reasons_at` writes with one vectorised store each (the rest
#: are gathered point by point).
PUT_CODES = 16


def put_reasons(dest: NDArray[np.object_], codes: NDArray[np.int16], table: NDArray[np.object_]) -> None:
    """``dest[i] = table[codes[i]]`` wherever ``codes[i]`` is not 0 (``dest`` keeps its other entries)."""
    idx = np.flatnonzero(codes)
    if idx.size:
        put_reasons_at(dest, idx, codes[idx], table)


def put_reasons_at(dest: NDArray[np.object_], idx: NDArray[np.intp], codes: NDArray[np.int16],
                   table: NDArray[np.object_]) -> None:
    """``dest[idx[i]] = table[codes[i]]`` wherever ``codes[i]`` is not 0.

    A grid's invalid points have few distinct reasons, so each distinct code is one vectorised
    store of one string at its points (no object pointer is gathered per point), cheaper than a
    gather and scatter per point, which remains for the codes beyond the first
    :data:`PUT_CODES`.
    """
    left = np.array(codes, dtype=np.int16)
    for _ in range(PUT_CODES):
        nz = left != 0
        i = int(np.argmax(nz)) if nz.size else 0
        if not nz.size or not nz[i]:
            return
        c = int(left[i])
        hit = left == c
        np.put(dest, idx[hit], table[c])
        left[hit] = 0
    rest = np.flatnonzero(left)
    if rest.size:
        dest[idx[rest]] = table[left[rest]]


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
    declared = quantity.axis_names
    constraints = dict(zip(declared, quantity.axis_constraints()))
    out: list[NDArray[np.int16] | None] = []
    for name, values in zip(grid.names, grid.values):
        ok = constraints[name].holds(values)
        if ok.all():
            out.append(None)
        else:
            out.append(np.where(ok, 0, 1 + declared.index(name)).astype(np.int16))
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


def _constraint_codes_at(plan: Plan, lo: int, idx: NDArray[np.intp]) -> NDArray[np.int16]:
    """:func:`_constraint_codes` at the points ``lo + idx`` only (0 where every axis is valid)."""
    grid = plan.grid
    declared = plan.quantity.axis_names
    order = sorted((declared.index(n), j) for j, n in enumerate(grid.names))
    code = np.zeros(idx.shape[0], dtype=np.int16)
    g = lo + idx
    for _, j in reversed(order):   # the first failing axis in declared order wins
        c = plan.axis_codes[j]
        if c is not None:
            per = c[g] if grid.zipped else c[(g // grid.strides[j]) % c.shape[0]]
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


def finish(plan: Plan, lo: int, hi: int, values: dict[str, FArr], recompute: bool = False,
           status: NDArray[np.int8] | None = None, finite: NDArray[np.bool_] | None = None,
           out: NDArray[np.int16] | None = None) -> NDArray[np.int16] | None:
    """Reason codes of the element-wise points ``lo..hi-1`` whose raw ufunc outputs are ``values``
    (None: all valid).  Updates ``values`` in place: NaN where an axis breaks its constraint.

    ``status``: the quantity's status bits of these points, computed in the same pass as
    ``values`` (a ``fills_status`` kernel; read only where every axis obeys its constraint);
    without it the non-finite points' arguments are gathered and ``Quantity.status`` is
    called on them.  ``recompute`` (the outer path without ``status``): re-evaluate the
    non-finite points element-wise, so that they carry exactly the element-wise path's value.
    ``finite``: ``numpy.isfinite`` of the main output, if the caller has it already.
    ``out``: an int16 array of the points' length that the codes may be written into (the
    caller compares the returned array with it).
    """
    q = plan.quantity
    codes = _constraint_codes(plan, lo, hi)
    broken = None
    if codes is not None:
        broken = codes != 0
        for k in q.outputs:
            values[k][broken] = np.nan
    # (the points just set to NaN are excluded below in any case)
    nonfinite = np.logical_not(np.isfinite(values[q.outputs[0]]) if finite is None else finite)
    if broken is not None:
        nonfinite &= ~broken
    if not nonfinite.any():
        return codes
    if status is not None:
        # STATUS_BASE + bits at the non-finite points, 0 elsewhere, by whole-block arithmetic on
        # data in cache: a few cheap passes instead of a table look-up (a gather) per point.
        # The bits are 1..255 as uint8, so STATUS_BASE + 0 marks exactly the non-finite
        # points no bit explains.
        c = np.empty(hi - lo, dtype=np.int16) if out is None else out
        np.add(status.view(np.uint8), STATUS_BASE, dtype=np.int16, out=c)
        np.multiply(c, nonfinite, out=c)
        unexplained = c == STATUS_BASE
        if unexplained.any():
            c[unexplained] = NONFINITE
        if codes is not None:
            c += codes   # codes is 0 at the non-finite points, c is 0 at the others
        return c
    idx = np.flatnonzero(nonfinite)
    if codes is None:
        codes = np.zeros(hi - lo, dtype=np.int16)
    args = _args_at(plan, lo, idx)
    if recompute:
        sub = q.compute(args, plan.options)
        for k in q.outputs:
            values[k][idx] = sub[k]
    if q.status is not None:
        st = np.asarray(q.status(args, plan.options)).astype(np.int16)
        codes[idx] = np.where(st != 0, STATUS_BASE + st, NONFINITE)
    else:
        codes[idx] = NONFINITE
    return codes


def _recompute_nonfinite(plan: Plan, lo: int, hi: int, values: dict[str, FArr], finite: NDArray[np.bool_]) -> bool:
    """Re-evaluate element-wise the non-finite points of a block from a kernel whose non-finite
    values may differ from the element-wise path's (a separable kernel without status bits);
    ``finite``: ``isfinite`` of the main output.  Whether any point was re-evaluated."""
    q = plan.quantity
    if finite.all():
        return False
    idx = np.flatnonzero(~finite)
    sub = q.compute(_args_at(plan, lo, idx), plan.options)
    for k in q.outputs:
        values[k][idx] = sub[k]
    return True


def finish_values(plan: Plan, lo: int, hi: int, values: dict[str, FArr], valid: NDArray[np.bool_],
                  finite_in_valid: bool = False) -> None:
    """:func:`finish` without the reasons: NaN where an axis breaks its constraint, and ``valid``
    (the same points as ``finish``'s zero codes: finite, with every axis inside its constraint).
    ``finite_in_valid``: ``valid`` holds ``isfinite`` of the main output already."""
    q = plan.quantity
    codes = _constraint_codes(plan, lo, hi)
    if not finite_in_valid:
        np.isfinite(values[q.outputs[0]], out=valid)
    if codes is not None:
        broken = codes != 0
        for k in q.outputs:
            values[k][broken] = np.nan
        valid &= ~broken


def _nan_where_broken(plan: Plan, lo: int, hi: int, values: dict[str, FArr]) -> None:
    """NaN in every output where an axis breaks its constraint (as :func:`finish_values`)."""
    codes = _constraint_codes(plan, lo, hi)
    if codes is not None:
        broken = codes != 0
        for k in plan.quantity.outputs:
            values[k][broken] = np.nan


def reason_codes(plan: Plan, lo: int, hi: int,
                 valid: NDArray[np.bool_]) -> tuple[NDArray[np.intp], NDArray[np.int16]] | None:
    """The invalid points of ``lo..hi-1`` of a deferred chunk (``valid``: theirs) and their reason
    codes, as :func:`finish` would have given them: ``(idx, codes)``, ``idx`` the points' offsets
    from ``lo`` (increasing); None when every point is valid.

    Only the invalid points are looked at: the first axis (declared order) that breaks its
    constraint, else (the value is not finite) the status bits -- of the fused kernel evaluated
    at those points alone, or, for a separable kernel with status bits, on sub-grids that hold
    them (the kernels are element-wise exact: the same bits as the whole grid's evaluation), or
    of the quantity's status function -- else :data:`NONFINITE`.
    """
    if valid.all():
        return None
    idx = np.flatnonzero(np.logical_not(valid))
    if all(c is None for c in plan.axis_codes):
        codes = np.zeros(idx.shape[0], dtype=np.int16)
        rest = None
    else:
        codes = _constraint_codes_at(plan, lo, idx)
        rest = np.flatnonzero(codes == 0)
    pts = idx if rest is None else idx[rest]
    if pts.size == 0:
        return idx, codes
    q = plan.quantity
    if plan.path == "outer" and _fills_status(plan.outer):
        if rest is None:
            mask = np.logical_not(valid)
        else:
            mask = np.zeros(hi - lo, dtype=bool)
            mask[pts] = True
        st = _outer_status_at(plan, lo, hi, mask).view(np.uint8).astype(np.int16)
    elif _fills_status(q.compute):
        # the fused kernel at those points alone, with its status bits (read as uint8, as finish does)
        status = np.empty(pts.size, dtype=np.int8)
        q.compute(_args_at(plan, lo, pts), plan.options, status=status)
        st = status.view(np.uint8).astype(np.int16)
    elif q.status is not None:
        st = np.asarray(q.status(_args_at(plan, lo, pts), plan.options)).astype(np.int16)
    else:
        st = np.zeros(pts.size, dtype=np.int16)
    got = np.where(st != 0, STATUS_BASE + st, NONFINITE).astype(np.int16)
    if rest is None:
        codes = got
    else:
        codes[rest] = got
    return idx, codes


#: Row bands of the sub-grids :func:`_outer_status_at` evaluates: invalid points mostly fill a
#: staircase-shaped corner of a grid, which a few bands of rows, each with its own columns,
#: cover closely.
STATUS_BANDS = 8


def _outer_status_at(plan: Plan, lo: int, hi: int, rest: NDArray[np.bool_]) -> NDArray[np.int8]:
    """The separable kernel's status bits at the points of ``rest`` (a mask of the whole rows
    ``lo..hi-1``), in their order: from sub-grids of the rows and columns that hold them --
    bands of rows, each with the columns of its points."""
    grid, q = plan.grid, plan.quantity
    assert plan.outer is not None
    r0 = lo // plan.layout.unit
    shape = ((hi - lo) // plan.layout.unit,) + grid.shape[1:]
    perm = [q.outer_axes.index(n) for n in grid.names]
    kwargs = {**plan.options, **grid.fixed}
    if len(shape) != 2:   # (no such separable quantity yet) the whole rows again
        values = {n: (v[r0:r0 + shape[0]] if j == 0 else v) for j, (n, v) in enumerate(zip(grid.names, grid.values))}
        block = np.empty(tuple(values[n].shape[0] for n in q.outer_axes), dtype=np.int8)
        plan.outer(*(values[n] for n in q.outer_axes), **kwargs, status=block)
        return np.transpose(block, perm).reshape(-1)[rest]
    mask = rest.reshape(shape)
    rows = np.flatnonzero(mask.any(axis=1))
    parts = []
    for band in np.array_split(rows, min(STATUS_BANDS, rows.size)):
        sub = mask[band]
        cols = np.flatnonzero(sub.any(axis=0))
        a, b = grid.values[0][r0 + band], grid.values[1][cols]
        status = np.empty((a.size, b.size) if perm == [0, 1] else (b.size, a.size), dtype=np.int8)
        plan.outer(*((a, b) if perm == [0, 1] else (b, a)), **kwargs, status=status)
        # the band's points in C order: the order of the points of rest in these rows
        parts.append((status if perm == [0, 1] else status.T)[sub[:, cols]])
    return np.concatenate(parts)


def _result(lo: int, hi: int, values: dict[str, NDArray[Any]], codes: NDArray[np.int16] | None,
            valid: NDArray[np.bool_] | None = None) -> ChunkResult:
    if valid is None:
        valid = np.empty(hi - lo, dtype=bool)
    if codes is None:
        valid.fill(True)
    else:
        np.equal(codes, 0, out=valid)
    return ChunkResult(lo, hi, values, valid, codes=codes)


#: Points per block inside an element-wise chunk: the temporaries of a block (the finiteness
#: mask, the status bits: 1/8 of the values) stay in cache and in reused heap memory, however
#: large the chunk.  Larger blocks cost fewer Python-level steps per point (2^15 -> 2^17 saved
#: ~0.5 ns/pt, about 1 % of the kernel, on the 10^7-point grid of
#: bench/report_sweep_overhead.py); smaller ones waste less when a chunk starts with the status
#: pass on an all-valid grid (at most 1/8 of a 2^20-point chunk here).
BLOCK = 1 << 17

#: Shortest last axis of a Cartesian grid that is evaluated row by row (the other axes
#: broadcast as columns, so no coordinate array is generated; see :meth:`Grid.pieces`):
#: numpy calls the kernel's inner loop once per row, which costs more than generating the
#: coordinates when rows are very short.
ROW_MIN = 64


def _fills_status(f: Any) -> bool:
    """Whether ``f`` (a quantity's ``compute`` or ``outer``) fills ``status=`` (see
    :mod:`dpbounds.sweeps._quantities`)."""
    return bool(getattr(f, "fills_status", False))


def _evaluate_block(plan: Plan, b0: int, b1: int, dest: Mapping[str, NDArray[Any]],
                    status: NDArray[np.int8] | None) -> None:
    """The quantity's outputs (and, given ``status``, its status bits) of the points ``b0..b1-1``."""
    q = plan.quantity
    for p in plan.grid.pieces(b0, b1, ROW_MIN):
        args: dict[str, Any] = dict(plan.grid.fixed)
        args.update(p.coords)
        piece = {k: v[p.lo - b0:p.hi - b0].reshape(p.shape) for k, v in dest.items()}
        if status is None:
            q.compute(args, plan.options, out=piece)
        else:
            q.compute(args, plan.options, out=piece, status=status[p.lo - b0:p.hi - b0].reshape(p.shape))


def _elementwise(plan: Plan, lo: int, hi: int, out: Mapping[str, NDArray[Any]] | None,
                 reasons: bool = True) -> ChunkResult:
    q = plan.quantity
    n = hi - lo
    values = {k: (out[k] if out is not None else np.empty(n)) for k in q.outputs}
    valid = out["valid"] if out is not None and "valid" in out else np.empty(n, dtype=bool)
    if not reasons:
        for b0 in range(lo, hi, BLOCK):
            b1 = min(hi, b0 + BLOCK)
            dest = {k: v[b0 - lo:b1 - lo] for k, v in values.items()}
            _evaluate_block(plan, b0, b1, dest, None)
            finish_values(plan, b0, b1, dest, valid[b0 - lo:b1 - lo])
        return ChunkResult(lo, hi, values, valid, deferred=True)
    # A kernel that fills the status bits in the same pass is a little slower than the plain
    # one (its argument checks, the extra output), and the bits are needed only where a
    # result is not finite.  So a block is evaluated by the plain kernel while the previous
    # block was all finite, and again with the status bits if it is not; invalid points come
    # in regions, so a block is rarely evaluated twice.  Either way the values are the same.
    # A chunk starts with the status pass: one block of plain kernel time lost per chunk on an
    # all-valid grid, none on a grid whose every block has invalid points.
    m = min(n, BLOCK)
    status_buf = np.empty(m, dtype=np.int8) if _fills_status(q.compute) else None
    finite_buf = np.empty(m, dtype=bool)
    # each block's codes and validity are written while the block is in cache; the codes of
    # all-valid blocks are zeroed only if the chunk has invalid points elsewhere
    codes = np.empty(n, dtype=np.int16)
    clean: list[tuple[int, int]] = []
    any_invalid = False
    with_status = True
    main = q.outputs[0]
    for b0 in range(lo, hi, BLOCK):
        b1 = min(hi, b0 + BLOCK)
        i0, i1 = b0 - lo, b1 - lo
        dest = {k: v[i0:i1] for k, v in values.items()}
        st = None if status_buf is None else status_buf[:i1 - i0]
        _evaluate_block(plan, b0, b1, dest, st if with_status else None)
        finite = np.isfinite(dest[main], out=finite_buf[:i1 - i0])
        if st is not None:
            all_finite = bool(finite.all())
            if not with_status and not all_finite:
                _evaluate_block(plan, b0, b1, dest, st)   # the same values, and now the status bits
            with_status = not all_finite
        block_codes = codes[i0:i1]
        c = finish(plan, b0, b1, dest, status=st if with_status else None, finite=finite, out=block_codes)
        if c is None:
            valid[i0:i1] = True
            clean.append((i0, i1))
            continue
        if c is not block_codes:
            block_codes[...] = c
        np.equal(block_codes, 0, out=valid[i0:i1])
        any_invalid = True
    if not any_invalid:
        return ChunkResult(lo, hi, values, valid)
    for i0, i1 in clean:
        codes[i0:i1] = 0
    return ChunkResult(lo, hi, values, valid, codes=codes)


def _finite_where_valid(plan: Plan, r0: int, r1: int, kwargs: Mapping[str, Any]) -> bool:
    """Whether the separable kernel says its block (rows ``r0..r1-1`` of the grid's first axis)
    is finite wherever the axes obey their constraints (its ``finite_where_valid``, if any)."""
    hint = getattr(plan.outer, "finite_where_valid", None)
    if hint is None:
        return False
    grid = plan.grid
    ok = {}
    for j, (n, v, codes) in enumerate(zip(grid.names, grid.values, plan.axis_codes)):
        if j == 0:
            v = v[r0:r1]
            codes = None if codes is None else codes[r0:r1]
        ok[n] = v if codes is None else v[codes == 0]
    return bool(hint(*(ok[n] for n in plan.quantity.outer_axes), **kwargs))


def _outer(plan: Plan, lo: int, hi: int, out: Mapping[str, NDArray[Any]] | None, reasons: bool = True) -> ChunkResult:
    q, grid = plan.quantity, plan.grid
    assert plan.outer is not None
    rest = plan.layout.unit
    r0, r1 = lo // rest, hi // rest
    arrays = {n: v for n, v in zip(grid.names, grid.values)}
    arrays[grid.names[0]] = grid.values[0][r0:r1]
    axes = [arrays[n] for n in q.outer_axes]
    shape = tuple(a.shape[0] for a in axes)
    perm = [q.outer_axes.index(n) for n in grid.names]
    main = q.outputs[0]
    # the axes the caller left at their defaults are passed by name, as the options are
    kwargs: dict[str, Any] = {**plan.options, **plan.grid.fixed}
    fused = _fills_status(plan.outer)
    if fused and reasons:
        status_block = np.empty(shape, dtype=np.int8)
        kwargs["status"] = status_block
    if out is not None and perm == sorted(perm) and (fused or getattr(plan.outer, "takes_out", False)):
        # the block is already in the grid's order: the kernel writes the result's own slice
        kwargs["out"] = out[main].reshape(shape)
    block = np.asarray(plan.outer(*axes, **kwargs), dtype=np.float64)
    # a copy only where the block is not already in the grid's order
    values = {main: np.ascontiguousarray(np.transpose(block, perm)).reshape(-1)}
    if not reasons:
        # the values only, the reasons when asked for: a fused kernel without its status bits
        # gives the element-wise values (but where an axis breaks its constraint, set to NaN
        # below), any other separable kernel is corrected where its result is not finite
        if fused or _finite_where_valid(plan, r0, r1, {**plan.options, **plan.grid.fixed}):
            # nothing to correct: valid is isfinite of the values once the broken axes' points are
            # NaN, computed when it is read (a pass over the values and a new array)
            _nan_where_broken(plan, lo, hi, values)
            return ChunkResult(lo, hi, values, None, deferred=True)
        valid = np.empty(hi - lo, dtype=bool) if out is None or "valid" not in out else out["valid"]
        np.isfinite(values[main], out=valid)
        redone = _recompute_nonfinite(plan, lo, hi, values, valid)
        finish_values(plan, lo, hi, values, valid, finite_in_valid=not redone)
        return ChunkResult(lo, hi, values, valid, deferred=True)
    status = np.ascontiguousarray(np.transpose(status_block, perm)).reshape(-1) if fused else None
    codes = finish(plan, lo, hi, values, recompute=not fused, status=status)
    return _result(lo, hi, values, codes, None if out is None else out.get("valid"))


# catch_warnings changes process-wide state: point evaluations in threads (the dask engine
# without a distributed client) take turns so the filters are always restored correctly
_POINT_LOCK = threading.Lock()


class Abandoned(Exception):
    """A signal came while a point-wise chunk was being evaluated: the chunk is dropped."""


def _block(plan: Plan, lo: int, hi: int, stop: Interrupts | None = None) -> ChunkResult:
    q = plan.quantity
    n = hi - lo
    args: dict[str, Any] = {k: np.full(n, v) for k, v in plan.grid.fixed.items()}
    args.update(plan.grid.coords(lo, hi))

    def check() -> None:
        if stop is not None and stop.requested:
            raise Abandoned

    r = q.compute(args, plan.options, check)
    values = {k: np.asarray(r[k], dtype=np.float64) for k in q.outputs}
    return ChunkResult(lo, hi, values, np.asarray(r["valid"], dtype=bool), reasons=r["reasons"])


def _point(plan: Plan, lo: int, hi: int, stop: Interrupts | None = None) -> ChunkResult:
    q = plan.quantity
    if q.kind == "block":
        return _block(plan, lo, hi, stop)
    n = hi - lo
    coords = plan.grid.coords(lo, hi)
    values: dict[str, NDArray[Any]] = {k: np.full(n, np.nan) for k in q.outputs}
    values.update({k: np.zeros(n, dtype=bool) for k in q.bool_outputs})
    valid = np.zeros(n, dtype=bool)
    reasons = np.empty(n, dtype=object)
    reasons.fill("")
    for i in range(n):
        if stop is not None and stop.requested:
            raise Abandoned
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


def evaluate_chunk(plan: Plan, i: int, out: Mapping[str, NDArray[Any]] | None = None,
                   stop: Interrupts | None = None, reasons: bool = True) -> ChunkResult:
    """The outputs of chunk ``i`` of ``plan``.

    ``out`` (element-wise and outer paths): arrays of the chunk's length the outputs and
    ``valid`` are written into (the in-memory result's own slices: no copy); the outer path
    writes its output there when its kernel takes ``out=`` and the block is in the grid's order.
    ``stop`` (point-wise quantities, whose chunks may take seconds): :class:`Abandoned` is
    raised between two points once it is set.  ``reasons=False`` (element-wise and outer
    paths): the values and ``valid`` only, the chunk marked ``deferred`` -- the in-memory
    result computes the reasons when they are read (:func:`reason_codes`), which for a
    separable kernel is most of the sweep's time otherwise.
    """
    lo, hi = plan.layout.bounds(i)
    if plan.path == "point":
        return _point(plan, lo, hi, stop)
    if plan.path == "outer":
        return _outer(plan, lo, hi, out, reasons)
    return _elementwise(plan, lo, hi, out, reasons)
