"""The grid of a sweep: its axes, the order of its points and how it is cut into chunks.

A Cartesian grid over axes ``x0, x1, ..., xk`` holds every combination, in C order: the first
axis varies slowest, so point ``i`` has index ``numpy.unravel_index(i, shape)``.  A zipped
grid holds the points ``(x0[i], x1[i], ...)`` of equally long axes.  Either way the points
have one fixed order, and a chunk is a contiguous range ``[lo, hi)`` of it; the per-point
coordinates of a chunk are generated on demand (:meth:`Grid.coords`), so no array of the
whole grid's coordinates ever exists.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Mapping

import numpy as np
from numpy.typing import NDArray

from dpbounds._errors import DPBoundsError

__all__ = ["Grid", "Layout", "Piece", "take_range"]

FArr = NDArray[np.float64]


def take_range(values: NDArray[np.generic], stride: int, lo: int, hi: int) -> NDArray[np.generic]:
    """Points ``lo..hi-1`` of the sequence in which each of ``values`` repeats ``stride`` times,
    the whole cycling (the coordinate of one axis of a C-order Cartesian grid).

    ``np.repeat``/``np.tile`` over only the values the range touches: one pass over the output,
    however large the stride (the slowest axis of a 10^8-point grid repeats 10^4 times).
    """
    n = values.shape[0]
    q0, q1 = lo // stride, (hi - 1) // stride     # first and last block the range touches
    nb = q1 - q0 + 1
    if stride == 1:
        start = q0 % n
        if start + nb <= n:
            return values[start:start + nb]
        reps = -(-(start + nb) // n)
        return np.tile(values, reps)[start:start + nb]
    vals = values[np.arange(q0, q1 + 1) % n]
    counts = np.full(nb, stride, dtype=np.intp)
    counts[0] = min(hi, (q0 + 1) * stride) - lo
    if nb > 1:
        counts[-1] = hi - q1 * stride
    return np.repeat(vals, counts)


@dataclass(frozen=True)
class Layout:
    """How the points are cut into chunks: units of ``unit`` points, ``step`` units per chunk.

    The element-wise paths use single points as units; the separable (outer) path uses whole
    rows of the first axis, so that each chunk is a block of rows.
    """

    units: int       # number of units
    unit: int        # points per unit
    step: int        # units per chunk

    @property
    def n_chunks(self) -> int:
        return -(-self.units // self.step)

    def bounds(self, i: int) -> tuple[int, int]:
        """Point range ``[lo, hi)`` of chunk ``i``."""
        return i * self.step * self.unit, min((i + 1) * self.step, self.units) * self.unit


@dataclass(frozen=True)
class Piece:
    """Points ``lo..hi-1`` of a grid: ``coords`` (one array per swept axis) broadcast to
    ``shape`` (whose size is ``hi - lo``) in C order."""

    lo: int
    hi: int
    coords: dict[str, FArr]
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Grid:
    """The points of a sweep.

    Attributes
    ----------
    names, values : the swept axes in order (slowest first) and their values.
    fixed : axes the quantity declares but the caller did not give: their default values.
    zipped : True for a point list (``zip=True``), False for a Cartesian grid.
    """

    names: tuple[str, ...]
    values: tuple[FArr, ...]
    fixed: Mapping[str, float]
    zipped: bool

    @staticmethod
    def build(axes: Mapping[str, FArr], fixed: Mapping[str, float], zipped: bool) -> "Grid":
        names = tuple(axes)
        values = tuple(np.ascontiguousarray(axes[n], dtype=np.float64) for n in names)
        if zipped and len({v.shape[0] for v in values}) > 1:
            lengths = ", ".join(f"{n} has {v.shape[0]}" for n, v in zip(names, values))
            raise DPBoundsError(f"zip=True needs axes of equal length: {lengths}")
        return Grid(names, values, dict(fixed), zipped)

    @cached_property   # (read many times a chunk; the grid is immutable)
    def shape(self) -> tuple[int, ...]:
        if self.zipped:
            return (self.values[0].shape[0],) if self.values else (1,)
        return tuple(v.shape[0] for v in self.values)

    @cached_property   # (read many times a chunk; the grid is immutable)
    def size(self) -> int:
        return math.prod(self.shape)

    @cached_property   # (read many times a chunk; the grid is immutable)
    def strides(self) -> tuple[int, ...]:
        """Points between consecutive values of each axis (C order); 1 for every zipped axis."""
        if self.zipped:
            return tuple(1 for _ in self.names)
        out, s = [], 1
        for v in reversed(self.values):
            out.append(s)
            s *= v.shape[0]
        return tuple(reversed(out))

    def per_point(self, j: int, per_value: NDArray[np.generic], lo: int, hi: int) -> NDArray[np.generic]:
        """``per_value`` (one entry per value of axis ``j``) at the points ``lo..hi-1``."""
        if self.zipped:
            return per_value[lo:hi]
        return take_range(per_value, self.strides[j], lo, hi)

    def coords(self, lo: int, hi: int) -> dict[str, FArr]:
        """The coordinates of the points ``lo..hi-1``: one array per swept axis."""
        return {n: self.per_point(j, v, lo, hi) for j, (n, v) in enumerate(zip(self.names, self.values))}  # type: ignore[misc]

    def pieces(self, lo: int, hi: int, min_row: int) -> list[Piece]:
        """The points ``lo..hi-1`` as pieces whose coordinates broadcast instead of repeating.

        In a Cartesian grid whose last axis has at least ``min_row`` values, a range of points
        is a partial row, whole rows and a partial row of that axis: each piece's coordinates
        are the last axis' values (or a slice of them) and, for every other axis, one value
        per row as a column -- no per-point coordinate arrays, and an element-wise function
        broadcasts them to the piece's shape with the same value at every point.  Otherwise
        (zipped grids, short rows, where a row-by-row evaluation would be slower) the range
        is one piece with the coordinates of :meth:`coords`.
        """
        if self.zipped or not self.names or self.values[-1].shape[0] < min_row:
            return [Piece(lo, hi, self.coords(lo, hi), (hi - lo,))]
        last = self.values[-1]
        n_last = last.shape[0]
        # per-row strides of the other axes: each is a multiple of the row length
        row_strides = [s // n_last for s in self.strides[:-1]]
        out: list[Piece] = []
        p = lo
        while p < hi:
            r, c = divmod(p, n_last)
            if c == 0 and hi - p >= n_last:          # whole rows r..r1-1
                r1 = r + (hi - p) // n_last
                q = r1 * n_last
                coords = {n: take_range(v, st, r, r1)[:, None]
                          for n, v, st in zip(self.names, self.values, row_strides)}
                coords[self.names[-1]] = last
                shape: tuple[int, ...] = (r1 - r, n_last)
            else:                                    # part of row r
                q = min(hi, (r + 1) * n_last)
                coords = {n: take_range(v, st, r, r + 1) for n, v, st in zip(self.names, self.values, row_strides)}
                coords[self.names[-1]] = last[c:c + q - p]
                shape = (q - p,)
            out.append(Piece(p, q, coords, shape))  # type: ignore[arg-type]
            p = q
        return out

    def layout(self, chunk_size: int, rows: bool = False) -> Layout:
        """Chunks of ``chunk_size`` points, or (``rows``) of whole rows of the first axis."""
        if not rows:
            return Layout(self.size, 1, chunk_size)
        rest = self.size // self.shape[0]
        return Layout(self.shape[0], rest, max(1, chunk_size // rest))

    def fingerprint_parts(self) -> dict[str, object]:
        """What identifies the grid (for a resume): the axes by name, length and content hash."""
        parts: dict[str, object] = {"zip": self.zipped, "fixed": {k: float(v) for k, v in self.fixed.items()}}
        parts["axes"] = {n: {"num": int(v.shape[0]), "first": float(v[0]), "last": float(v[-1]),
                             "sha256": hashlib.sha256(v.tobytes()).hexdigest()[:16]}
                         for n, v in zip(self.names, self.values)}
        return parts
