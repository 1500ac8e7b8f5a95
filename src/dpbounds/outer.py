"""Cartesian grids of the Theorem 3.1 quantities, computed axis by axis.

``delta_bound_outer(sigma, rounds)`` is ``delta_bound(sigma[:, None], rounds[None, :])``
computed without broadcasting: the six-term bound of Theorem 3.1 ("Trade-off Functions for
DP-SGD with Subsampling based on Random Allocation: Tight Upper and Lower Bounds") is, with
g = 1/sqrt(M - 1), a polynomial in g whose coefficients depend on sigma only, plus a tail term
that depends on M only.  The exponentials, the error function and the Berry-Esseen
coefficient are evaluated once per sigma, the logarithm and the tail once per M, and each grid
point costs a square root and a few multiply-adds.  The same split serves
``rounds_required_outer`` (sigma-only constants once per row, the root search per point) and
``min_dataset_size_outer``.  See docs/outer.md.

Every value is bit-identical to the elementwise function at the same point (the kernels
perform the elementwise operations in the same order), including the NaN pattern and, for
``delta_bound_outer(..., return_status=True)``, the status bits.
"""
from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np
from numpy.typing import NDArray

from dpbounds import (
    _kernels,  # type: ignore[attr-defined, unused-ignore]
    _ufuncs,  # type: ignore[attr-defined, unused-ignore]
)
from dpbounds._errors import DPBoundsError, numpy_warnings_at_caller
from dpbounds._validation import Constraint, as_float_array, check_choice, check_constraint, check_scalar

__all__ = ["delta_bound_outer", "min_dataset_size_outer", "rounds_required_outer"]

FArr = NDArray[np.float64]
_COEFFICIENTS = ("exact", "simplified")
_VALIDITY_AT = ("delta_min", "target")


# ---- the tile kernels, unvalidated: shared by the public functions below and by dpbounds.sweeps
# (which marks the axis values that break a constraint itself).  The axes are 1-D C-contiguous
# float64 arrays, ``out`` a C-contiguous float64 array of shape (len(sigma), len(other axis));
# the values follow the ufuncs' NaN conventions and equal them bit for bit (tests/special/test_outer.py).
def delta_bound_tiles(sigma: FArr, rounds: FArr, coefficient: str, out: FArr,
                      status: NDArray[np.int8] | None = None) -> FArr:
    """``delta_bound_<coefficient>`` on the grid into ``out``; with ``status`` (int8, the grid's
    shape), the checked kernel (``_delta_bound_checked_<coefficient>``) and its status bits."""
    _kernels.outer_delta_bound(sigma, rounds, coefficient, status is not None, out, status)
    return out


def rounds_required_tiles(sigma: FArr, delta: FArr, coefficient: str, at_target: bool, epochs: float,
                          out: FArr) -> FArr:
    """``rounds_required_<coefficient>[_at_target]`` of the per-epoch target of each total
    ``delta`` over ``epochs`` epochs (``per_epoch_delta``, once per column) on the grid into ``out``."""
    d = np.ascontiguousarray(_ufuncs.per_epoch_delta(delta, epochs), dtype=np.float64)
    _kernels.outer_rounds_required(sigma, d, coefficient, at_target, out)
    return out


def min_dataset_size_tiles(sigma: FArr, rounds: FArr, clip_norm: float, noise_ratio: float, out: FArr) -> FArr:
    """``min_dataset_size`` on the grid into ``out`` (an overflow is ``inf``; no FP flag is raised)."""
    _kernels.outer_min_dataset_size(sigma, rounds, float(clip_norm), float(noise_ratio), out)
    return out


def _axis(name: str, value: Any, constraint: Constraint) -> FArr:
    """One axis of the grid: a 1-D float64 array whose elements obey ``constraint``."""
    arr = as_float_array(name, value)
    if arr.ndim != 1:
        raise DPBoundsError(f"{name} must be a 1-D array (an axis of the grid), got an array of shape {arr.shape}")
    return np.ascontiguousarray(check_constraint(name, arr, constraint))


def _output(out: Any, shape: tuple[int, int], *axes: FArr) -> FArr:
    """``out`` checked (or a new array) for a grid of ``shape``."""
    if out is None:
        return np.empty(shape, dtype=np.float64)
    if not isinstance(out, np.ndarray):
        raise DPBoundsError(f"out must be a numpy array, got {type(out).__name__}")
    if out.shape != shape:
        raise DPBoundsError(f"out must have shape {shape} (len(sigma), len of the second axis), got {out.shape}")
    if out.dtype != np.float64:
        raise DPBoundsError(f"out must have dtype float64, got {out.dtype}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise DPBoundsError("out must be a writeable C-contiguous array")
    for a in axes:
        if np.may_share_memory(out, a):
            raise DPBoundsError("out must not share memory with the axes it is computed from")
    return out


@overload
def delta_bound_outer(sigma: Any, rounds: Any, coefficient: Literal["exact", "simplified"] = ..., *,
                      out: FArr | None = ..., return_status: Literal[False] = ...) -> FArr: ...
@overload
def delta_bound_outer(sigma: Any, rounds: Any, coefficient: Literal["exact", "simplified"] = ..., *,
                      out: FArr | None = ..., return_status: Literal[True]) -> tuple[FArr, NDArray[np.int8]]: ...
def delta_bound_outer(sigma: Any, rounds: Any, coefficient: str = "exact", *,
                      out: FArr | None = None, return_status: bool = False) -> Any:
    """The Theorem 3.1 bound on the Cartesian grid ``sigma`` x ``rounds``.

    ``delta_bound_outer(sigma, rounds, c)[i, j] == dpbounds.delta_bound(sigma[i], rounds[j], c)``:
    the six-term delta_min where Theorem 3.1 applies, NaN where it does not (condition (2) at
    delta_min, M >= 3, sigma >= sqrt(3/ln M)); see :func:`dpbounds.delta_bound`.  The
    sigma-only part of the bound (an exp, an expm1, an erf and the coefficient) is computed
    once per sigma, the M-only part (a log and the tail term) once per M; each point costs a
    square root and about twenty additions, multiplications and comparisons.

    Parameters
    ----------
    sigma : array_like, 1-D
        Noise multipliers (the rows), each finite and > 0.
    rounds : array_like, 1-D
        Rounds per epoch M (the columns), each an integer >= 3.
    coefficient : {"exact", "simplified"}
        The Berry-Esseen coefficient, as in :func:`dpbounds.delta_bound`.
    out : ndarray, optional
        A writeable C-contiguous float64 array of shape ``(len(sigma), len(rounds))`` to fill
        (and return), not sharing memory with ``sigma`` or ``rounds``.
    return_status : bool
        Also return the int8 array of status bits per point: 0 where the theorem applies,
        otherwise the sum of the reasons it does not, from the table
        ``dpbounds.ufuncs.STATUS_BITS`` (4: sigma < sqrt(3/ln M), 8: condition (2) fails);
        the same bits as :func:`dpbounds.theorem31` reports in its ``status``.

    Returns
    -------
    ndarray or (ndarray, ndarray)
        float64 array of shape ``(len(sigma), len(rounds))``, C-contiguous; with
        ``return_status`` also the status array of the same shape.

    Raises
    ------
    DPBoundsError
        If an axis is not 1-D or breaks its constraint (the error names it), or ``out`` is
        not as described.

    Notes
    -----
    Accuracy: every value is bit-identical to :func:`dpbounds.delta_bound` at the same point
    (the kernel performs the same floating-point operations in the same order); the measured
    maximum difference is 0 ulp, with the same NaN pattern and status bits, on seeded random
    grids and at hard points (sigma at the edge sqrt(3/ln M) and where condition (2) flips,
    sigma from 1e-3 to 1e300, M = 3, 4 and up to 2**53 and beyond; tests/special/test_outer.py).  The
    bound itself has relative error <= 1e-14 against a 50-digit evaluation of the six-term
    formula (checked again there at a few points).  Speed (bench/test_bench_outer.py,
    docs/outer.md): about 50x the broadcasting expression on a 1e4 x 1e4 grid, 1.5 to 1.7
    times the time of just writing the output.  Ctrl-C interrupts a long grid within a few
    tens of milliseconds.

    Examples
    --------
    >>> import numpy as np
    >>> from dpbounds.outer import delta_bound_outer
    >>> sigma = np.array([0.8, 1.0, 2.0])
    >>> rounds = np.array([1e3, 1e6, 1e9])
    >>> d = delta_bound_outer(sigma, rounds, "simplified")
    >>> d.shape
    (3, 3)
    >>> print(np.round(d[1], 6))    # sigma = 1: at M = 1000 the theorem does not apply
    [     nan 0.010679 0.000338]
    >>> d, status = delta_bound_outer(sigma, rounds, return_status=True)   # exact coefficient
    >>> status[:, 0].tolist()       # 8: condition (2) fails
    [8, 0, 8]
    >>> import dpbounds
    >>> np.array_equal(d, dpbounds.delta_bound(sigma[:, None], rounds[None, :]), equal_nan=True)
    True
    """
    coefficient = check_choice("coefficient", coefficient, _COEFFICIENTS)
    s = _axis("sigma", sigma, Constraint.FINITE_POSITIVE)
    m = _axis("rounds", rounds, Constraint.INTEGER_GE_3)
    result = _output(out, (s.size, m.size), s, m)
    if not return_status:
        return delta_bound_tiles(s, m, coefficient, result)
    status = np.empty(result.shape, dtype=np.int8)
    delta_bound_tiles(s, m, coefficient, result, status)
    return result, status


def rounds_required_outer(sigma: Any, delta: Any, coefficient: Literal["exact", "simplified"] = "exact",
                          validity_at: Literal["delta_min", "target"] = "delta_min", *, epochs: int = 1,
                          out: FArr | None = None) -> FArr:
    """The smallest number of rounds of Theorem 3.1 on the Cartesian grid ``sigma`` x ``delta``.

    ``rounds_required_outer(sigma, delta, c, v, epochs=E)[i, j] ==
    dpbounds.rounds_required(sigma[i], delta[j], c, v, epochs=E)``: the smallest integer M
    for which Theorem 3.1 certifies f(a) >= 1 - a - delta per epoch (``inf`` where no
    M <= 2**53 qualifies).  The sigma-only constants (an exp, an expm1, an erf and the
    coefficient) are computed once per sigma and reused by the search of every delta; the
    search itself is the elementwise one.

    Parameters
    ----------
    sigma : array_like, 1-D
        Noise multipliers (the rows), each finite and > 0.
    delta : array_like, 1-D
        Target deltas (the columns), each in (0, 1); with ``epochs`` = E > 1 the total over E
        epochs, as in :func:`dpbounds.rounds_required`.
    coefficient : {"exact", "simplified"}
        As in :func:`dpbounds.rounds_required`.
    validity_at : {"delta_min", "target"}
        As in :func:`dpbounds.rounds_required`.
    epochs : int
        Number of epochs E >= 1, one value for the whole grid.
    out : ndarray, optional
        As in :func:`delta_bound_outer`, of shape ``(len(sigma), len(delta))``.

    Returns
    -------
    ndarray
        Integer-valued float64 array of shape ``(len(sigma), len(delta))``.

    Raises
    ------
    DPBoundsError
        If an axis is not 1-D or breaks its constraint, ``epochs`` is not one integer >= 1, or
        ``out`` is not as described.

    Notes
    -----
    Accuracy: bit-identical to :func:`dpbounds.rounds_required` at every point (0 ulp
    measured; tests/special/test_outer.py), hence exactly minimal as documented there.  The saving is
    the sigma-only work only: the search costs 10 to 40 evaluations of delta_min per point, so
    expect a modest speed-up over broadcasting (docs/outer.md).

    Examples
    --------
    >>> import numpy as np
    >>> from dpbounds.outer import rounds_required_outer
    >>> rounds_required_outer(np.array([1.0, 2.0]), np.array([0.01, 0.001]))
    array([[  429713., 42943157.],
           [   59097.,  5898787.]])
    """
    coefficient_ = check_choice("coefficient", coefficient, _COEFFICIENTS)
    at_target = check_choice("validity_at", validity_at, _VALIDITY_AT) == "target"
    s = _axis("sigma", sigma, Constraint.FINITE_POSITIVE)
    d = _axis("delta", delta, Constraint.OPEN_UNIT)
    e = check_scalar("epochs", epochs, Constraint.INTEGER_GE_1)
    result = _output(out, (s.size, d.size), s, d)
    # the per-epoch target depends on delta only: once per column, the ufunc of rounds_required
    return rounds_required_tiles(s, d, coefficient_, at_target, e, result)


def min_dataset_size_outer(sigma: Any, rounds: Any, clip_norm: float = 1.0, noise_ratio: float = 0.1, *,
                           out: FArr | None = None) -> FArr:
    """The smallest dataset size on the Cartesian grid ``sigma`` x ``rounds``.

    ``min_dataset_size_outer(sigma, rounds, C, r)[i, j] ==
    dpbounds.min_dataset_size(sigma[i], rounds[j], C, r)`` = C * sigma[i] * rounds[j] / r, in
    one pass over the output (C * sigma once per row, then a multiply and a divide per point).

    Parameters
    ----------
    sigma : array_like, 1-D
        Noise multipliers (the rows), each finite and > 0.
    rounds : array_like, 1-D
        Rounds per epoch M (the columns), each an integer >= 1.
    clip_norm, noise_ratio : float
        Clipping norm C > 0 and tolerated noise ratio > 0, one value each for the grid.
    out : ndarray, optional
        As in :func:`delta_bound_outer`.

    Returns
    -------
    ndarray
        float64 array of shape ``(len(sigma), len(rounds))``.

    Raises
    ------
    DPBoundsError
        If an axis is not 1-D or breaks its constraint, ``clip_norm`` or ``noise_ratio`` is
        not one finite number > 0, or ``out`` is not as described.

    Notes
    -----
    Accuracy: bit-identical to :func:`dpbounds.min_dataset_size` (the same correctly rounded
    operations in the same order; 0 ulp measured, tests/special/test_outer.py).  Where N exceeds the
    double range it is ``inf`` and numpy's "overflow encountered" warning is issued once, as
    for the elementwise function.

    Examples
    --------
    >>> import numpy as np
    >>> from dpbounds.outer import min_dataset_size_outer
    >>> min_dataset_size_outer(np.array([1.0, 2.0]), np.array([1e3, 1e6]))
    array([[1.e+04, 1.e+07],
           [2.e+04, 2.e+07]])
    """
    s = _axis("sigma", sigma, Constraint.FINITE_POSITIVE)
    m = _axis("rounds", rounds, Constraint.INTEGER_GE_1)
    cn = check_scalar("clip_norm", clip_norm, Constraint.FINITE_POSITIVE)
    nr = check_scalar("noise_ratio", noise_ratio, Constraint.FINITE_POSITIVE)
    result = _output(out, (s.size, m.size), s, m)
    if s.size and m.size:
        # N grows with sigma and M, so it overflows somewhere iff at the largest pair: the
        # ufunc evaluated there warns as the broadcast computation would (numpy's errstate),
        # at the caller's line
        with numpy_warnings_at_caller("min_dataset_size"):
            _ufuncs.min_dataset_size(s.max(), m.max(), cn, nr)
    return min_dataset_size_tiles(s, m, cn, nr, result)
