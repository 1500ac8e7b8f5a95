"""The driver of :func:`dpbounds.sweep`: plan the grid, run an engine, write, tally, report."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError, PrecisionWarning, warn
from dpbounds.sweeps._axes import parse_axis
from dpbounds.sweeps._engines import ENGINES, run_engine
from dpbounds.sweeps._evaluate import ChunkResult, Plan, axis_codes, resolve_outer
from dpbounds.sweeps._grid import Grid
from dpbounds.sweeps._interrupt import deferred_interrupts
from dpbounds.sweeps._progress import make_progress
from dpbounds.sweeps._quantities import Quantity, get_quantity
from dpbounds.sweeps._writers import MemoryWriter, make_writer

__all__ = ["plan_sweep", "run_sweep", "Tally", "count_chunk", "warn_imprecise"]


@dataclass
class Tally:
    """What a sweep produced: points computed now, skipped (resumed), invalid, imprecise."""

    points: int = 0
    skipped: int = 0
    invalid: int = 0
    imprecise: int = 0


def _options(q: Quantity, given: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for o in q.options:
        value = given.get(o.name, o.default)
        if o.choices:
            if isinstance(value, bool):   # truncated=True reads naturally; the choices are text
                value = "true" if value else "false"
            out[o.name] = V.check_choice(o.name, value, o.choices)
        else:
            out[o.name] = float(o.check(o.name, value)) if o.check is not None else value
    return out


#: Fewest rows of a separable kernel's chunk for an in-memory sweep with the default chunk size:
#: the kernel prepares the columns (the M-only part, a log and a tail term per column) once per
#: call, which at 2^20 points per chunk on a grid of long rows (10^4 values: 104 rows a chunk)
#: cost more than a third of the whole sweep; from 2048 rows on it is a few percent.
OUTER_MEMORY_ROWS = 2048


def plan_sweep(quantity: str | Quantity, axes: Mapping[str, Any], *, chunk_size: int | None = None,
               zipped: bool = False, in_memory: bool = False) -> Plan:
    """The evaluation plan of ``quantity`` over ``axes`` (axis specs and options mixed, as ``sweep`` takes them).

    ``in_memory`` (the result is returned, not written): with the default chunk size, the
    separable path takes chunks of at least :data:`OUTER_MEMORY_ROWS` rows (the chunks of a file
    stay at the quantity's chunk size: they are what a resume continues from).
    """
    q = get_quantity(quantity)
    names = q.axis_names
    option_names = tuple(o.name for o in q.options)
    for key in axes:
        if key not in names and key not in option_names:
            opts = f"; its options: {', '.join(option_names)}" if option_names else ""
            raise DPBoundsError(f"{q.name} has no axis or option {key!r} (its axes: {', '.join(names)}{opts})")
    missing = [a.name for a in q.axes if a.default is None and a.name not in axes]
    if missing:
        raise DPBoundsError(f"{q.name} needs the axis {', '.join(missing)} (its axes: {', '.join(names)})")
    swept = {k: parse_axis(k, v) for k, v in axes.items() if k in names}
    fixed = {a.name: float(a.default) for a in q.axes if a.name not in swept and a.default is not None}
    grid = Grid.build(swept, fixed, bool(zipped))
    options = _options(q, {k: v for k, v in axes.items() if k in option_names})
    size = q.chunk_size if chunk_size is None else V.check_count("chunk_size", chunk_size, minimum=1)
    if q.kind in ("point", "block"):
        path = "point"
    elif (q.outer is not None and not grid.zipped and len(grid.names) == len(q.outer_axes)
          and set(grid.names) == set(q.outer_axes)):
        path = "outer"
    else:
        path = "elementwise"
    rows = path == "outer"
    if path == "outer" and in_memory and chunk_size is None:
        size = max(size, OUTER_MEMORY_ROWS * (grid.size // grid.shape[0]))
    elif (q.kind == "block" and in_memory and chunk_size is None and not grid.zipped and grid.size
          and grid.size // grid.shape[0] <= size):
        # whole rows of the first axis, as many as fit in the chunk: a block quantity shares work
        # between the points of one first-axis value (the Renyi-DP curves without replacement
        # build one table per sigma), which a chunk boundary inside a row does twice -- a third
        # more time for a 12 x 12 grid at 64 points a chunk.  (A file's chunks stay at the
        # quantity's chunk size: they are what a resume continues from.)
        rows = True
    layout = grid.layout(size, rows=rows)
    codes = axis_codes(q, grid) if q.kind == "ufunc" else ()
    outer = resolve_outer(q.outer) if path == "outer" and q.outer is not None else None
    return Plan(q, options, grid, layout, path, codes, outer)


def run_sweep(quantity: str | Quantity, *, out: str | os.PathLike[str] | None = None, chunk_size: int | None = None,
              progress: bool | None = None, engine: str = "local", zipped: bool = False, resume: bool = False,
              overwrite: bool = False, workers: int | None = None,
              axes: Mapping[str, Any], count_invalid: bool = True) -> tuple[Any, Tally]:
    """:func:`sweep`, returning also the :class:`Tally` (the command line prints it).

    ``count_invalid=False``: the tally's ``invalid`` stays 0 (a pass over ``valid`` per chunk
    that :func:`sweep` does not need; the imprecise points are counted either way).
    """
    V.check_choice("engine", engine, ENGINES)
    if progress not in (None, True, False):
        raise DPBoundsError(f"progress must be None, True or False, got {progress!r}")
    if overwrite not in (True, False):
        raise DPBoundsError(f"overwrite must be True or False, got {overwrite!r}")
    if workers is not None:
        workers = V.check_count("workers", workers, minimum=1)
    plan = plan_sweep(quantity, axes, chunk_size=chunk_size, zipped=zipped, in_memory=out is None)
    q = plan.quantity
    tally = Tally()
    # SIGINT, SIGTERM and SIGHUP wait for the engine's next check (_interrupt.py); the writer
    # is closed inside the block, so a sweep stopped by a signal has saved its finished chunks
    # before the signal takes effect
    with deferred_interrupts() as interrupts:
        writer = make_writer(plan, out, bool(resume), bool(overwrite))
        try:
            tally.skipped = plan.layout.bounds(writer.start - 1)[1] if writer.start > 0 else 0
            bar = make_progress(progress, plan.grid.size, f"sweep {q.name}", initial=tally.skipped)
            buffers = writer.buffers if isinstance(writer, MemoryWriter) and plan.path != "point" else None
            chunks = run_engine(engine, plan, writer.start, workers, buffers, interrupts)
            try:
                for res in chunks:
                    writer.write(res)
                    count_chunk(tally, res, count_invalid)
                    bar.update(res.hi - res.lo)
                interrupts.check()   # the engine stopped early: a signal came
            finally:
                try:
                    close = getattr(chunks, "close", None)   # the engine's generator: ends its workers
                    if close is not None:
                        close()
                finally:
                    bar.close()
        finally:
            writer.close()
    warn_imprecise(q, tally)
    return writer.result(), tally


def count_chunk(tally: Tally, res: ChunkResult, invalid: bool = True) -> None:
    """Add one chunk's points to the tally (``invalid=False``: all but the invalid ones)."""
    n = res.hi - res.lo
    tally.points += n
    imprecise = "tolerance_met" in res.values
    if not (invalid or imprecise):
        return
    valid = res.valid_mask()
    if invalid:
        tally.invalid += n - int(np.count_nonzero(valid))
    if imprecise:
        tally.imprecise += int(np.count_nonzero(valid & ~res.values["tolerance_met"]))


def warn_imprecise(q: Quantity, tally: Tally) -> None:
    """One PrecisionWarning for all the points whose certified bracket missed its tolerance."""
    if tally.imprecise:
        warn(f"{q.name}: at {tally.imprecise} of {tally.points} points the certified bracket is wider "
             "than the tolerance (see the tolerance_met and reason columns)", PrecisionWarning)
