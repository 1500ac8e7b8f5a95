"""Adaptive sampling of a curve on [0, 1] for drawing it (private).

A figure draws a curve as a polygon through sampled points.  Uniform points leave visible
corners where the curve bends and waste points where it is straight; here a segment is
bisected while its midpoint lies more than ``tol`` (in the curve's own units) off the chord,
so the drawn polygon is within about ``tol`` of the curve at the midpoints checked.  NaN
values (a bound that does not apply, an expansion that is undefined) stay NaN: the line is
broken there, never drawn through a number.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import NDArray

FArr = NDArray[np.float64]

__all__ = ["sample"]


def sample(func: Callable[[FArr], FArr], tol: float, *, start: int = 65, max_points: int = 4097,
           lo: float = 0.0, hi: float = 1.0) -> tuple[FArr, FArr]:
    """Points ``(x, func(x))`` on [lo, hi], refined where the curve bends.

    ``func`` takes and returns 1-d float arrays (it is called once per refinement round with
    all new points).  Starts from ``start`` uniform points; stops when every checked midpoint is
    within ``tol`` of its chord or the next round would exceed ``max_points``.
    """
    x = np.linspace(lo, hi, start)
    y = np.asarray(func(x), dtype=np.float64)
    todo = np.ones(x.size - 1, dtype=bool)  # segments whose midpoint is still to be checked
    while todo.any() and x.size + int(todo.sum()) <= max_points:
        idx = np.flatnonzero(todo)
        xm = 0.5 * (x[idx] + x[idx + 1])
        ym = np.asarray(func(xm), dtype=np.float64)
        chord = 0.5 * (y[idx] + y[idx + 1])
        # NaN anywhere near: insert the midpoint (it locates where the curve stops applying)
        # but stop refining that segment once it is short
        off = np.abs(ym - chord)
        split = np.where(np.isfinite(off), off > tol, (x[idx + 1] - x[idx]) > (hi - lo) / 2048)
        x = np.insert(x, idx + 1, xm)
        y = np.insert(y, idx + 1, ym)
        # each checked segment became two; keep refining both halves of those that were off
        new_todo = np.zeros(x.size - 1, dtype=bool)
        pos = idx + np.arange(idx.size)  # where the left half of each split segment now starts
        new_todo[pos[split]] = True
        new_todo[pos[split] + 1] = True
        todo = new_todo
    return x, y
