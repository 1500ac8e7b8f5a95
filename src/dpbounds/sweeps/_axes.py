"""One axis of a sweep: the values a parameter takes, parsed from any of the accepted forms.

Accepted forms (:func:`parse_axis`):

* a number (``1.5``) -- an axis of one value;
* a sequence or 1-D array of numbers (``[0.5, 1, 2]``) -- the values as given;
* a generated spec ``(start, stop, num, scale)`` with ``scale`` ``"lin"`` (evenly spaced,
  ``numpy.linspace``) or ``"log"`` (evenly spaced in log, ``numpy.geomspace``);
* the command line's text forms: ``"start:stop:num:log"`` / ``"start:stop:num:lin"`` (``scale``
  may be left out: ``"start:stop:num"`` is linear), a comma list ``"0.5,1,2"``, or one number.

Integer-valued parameters (:data:`INTEGER_AXES`: rounds, epochs, dataset_size, batch_size,
steps) from a *generated* spec are rounded to the nearest integer (``numpy.rint``, ties to
even) and repeated values are dropped, keeping the order: ``(10, 20, 5, "log")`` for
``rounds`` is ``[10, 12, 14, 17, 20]``, and ``(1, 3, 10, "lin")`` has only the three values
1, 2, 3.  Values the user lists explicitly are never changed: a non-integer one is kept and
reported invalid at its points by the sweep.

Every malformed spec raises :class:`dpbounds.DPBoundsError` naming the axis and what is wrong.
Values may be ``inf`` when listed explicitly (the quantity's own checks decide), never NaN.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbounds._errors import DPBoundsError

__all__ = ["INTEGER_AXES", "MAX_AXIS_LENGTH", "parse_axis"]

#: Parameters that only take integer values: generated specs for them are rounded (see above).
INTEGER_AXES = frozenset({"rounds", "epochs", "dataset_size", "batch_size", "steps"})

#: Longest axis a generated spec may ask for (8e7 bytes of float64; parsing one takes a few such
#: arrays at its peak): a larger ``num`` is almost certainly a typo, and would fail later with a
#: MemoryError instead of a message (integer axes of 1e8 points peak at 3.3 GB while parsing).
MAX_AXIS_LENGTH = 10 ** 7

_SCALES = ("lin", "log")


def _number(name: str, what: str, value: Any) -> float:
    """``value`` as a float; DPBoundsError naming the axis if it is not a real number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, str)):
        raise DPBoundsError(f"axis {name}: {what} must be a real number, got {value!r}")
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        raise DPBoundsError(f"axis {name}: {what} must be a real number, got {value!r}") from None
    if isinstance(value, str) and math.isinf(f) and "inf" not in value.lower():
        # a finite-looking literal such as 1e400 (as the command line's number parser refuses it)
        raise DPBoundsError(f"axis {name}: {what} {value!r} is too large: it overflows a double")
    return f


def _count(name: str, value: Any) -> int:
    """The ``num`` of a generated spec: an integer in [1, MAX_AXIS_LENGTH] (``1e3`` accepted)."""
    if isinstance(value, (bool, np.bool_)):
        raise DPBoundsError(f"axis {name}: num must be a positive integer, got {value!r}")
    if isinstance(value, numbers.Integral):
        n = int(value)
    else:
        f = _number(name, "num", value)
        if not (math.isfinite(f) and f == math.floor(f)):
            raise DPBoundsError(f"axis {name}: num must be a positive integer, got {value!r}")
        n = int(f)
    if n < 1:
        raise DPBoundsError(f"axis {name}: num must be a positive integer, got {value!r}")
    if n > MAX_AXIS_LENGTH:
        raise DPBoundsError(f"axis {name}: num must be at most {MAX_AXIS_LENGTH:.0e}, got {value!r}")
    return n


def _generated(name: str, start: Any, stop: Any, num: Any, scale: Any) -> NDArray[np.float64]:
    lo = _number(name, "start", start)
    hi = _number(name, "stop", stop)
    n = _count(name, num)
    if not isinstance(scale, str) or scale not in _SCALES:
        raise DPBoundsError(f"axis {name}: scale must be 'lin' or 'log', got {scale!r}")
    for what, v in (("start", lo), ("stop", hi)):
        if not math.isfinite(v):
            raise DPBoundsError(f"axis {name}: {what} must be finite, got {v!r}")
    if scale == "log":
        if lo <= 0 or hi <= 0:
            bad = "start" if lo <= 0 else "stop"
            raise DPBoundsError(f"axis {name}: a log axis needs start > 0 and stop > 0, got {bad}={lo if bad == 'start' else hi!r}")
        values = np.geomspace(lo, hi, n)
    else:
        values = np.linspace(lo, hi, n)
    values = np.asarray(values, dtype=np.float64)
    if name in INTEGER_AXES:
        np.rint(values, out=values)
        # drop repeats, keeping the order of first appearance (a decreasing spec stays decreasing):
        # a generated axis is monotone, so repeats are adjacent (no sort, no index array)
        keep = np.empty(values.size, dtype=bool)
        keep[0] = True
        np.not_equal(values[1:], values[:-1], out=keep[1:])
        values = values[keep]
    return values


def _from_text(name: str, text: str) -> NDArray[np.float64]:
    s = text.strip()
    if not s:
        raise DPBoundsError(f"axis {name}: no values given")
    if ":" in s:
        parts = [p.strip() for p in s.split(":")]
        if len(parts) == 3:
            parts.append("lin")
        if len(parts) != 4:
            raise DPBoundsError(f"axis {name}: expected start:stop:num or start:stop:num:lin|log, got {text!r}")
        return _generated(name, parts[0], parts[1], parts[2], parts[3])
    items = [p.strip() for p in s.split(",")]
    if any(not p for p in items):
        raise DPBoundsError(f"axis {name}: empty item in the list {text!r}")
    return _explicit(name, [_number(name, "every value", p) for p in items])


def _explicit(name: str, value: Any) -> NDArray[np.float64]:
    if isinstance(value, np.ndarray) and value.dtype.kind not in "biuf":
        raise DPBoundsError(f"axis {name}: values must be real numbers, got an array of dtype {value.dtype}")
    if not isinstance(value, np.ndarray):
        for v in value:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise DPBoundsError(f"axis {name}: values must be real numbers, got {v!r}")
    elif value.dtype.kind == "b":
        raise DPBoundsError(f"axis {name}: values must be real numbers, got a boolean array")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise DPBoundsError(f"axis {name}: values must be real numbers, got {value!r}") from None
    if arr.ndim != 1:
        raise DPBoundsError(f"axis {name}: values must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise DPBoundsError(f"axis {name}: no values")
    if np.isnan(arr).any():
        raise DPBoundsError(f"axis {name}: values must not be NaN (at index {int(np.flatnonzero(np.isnan(arr))[0])})")
    return arr


def parse_axis(name: str, spec: Any) -> NDArray[np.float64]:
    """The values of sweep axis ``name`` as a 1-D float64 array, from any accepted form.

    Parameters
    ----------
    name : str
        The parameter the axis sweeps (``"sigma"``, ``"rounds"``, ...); it names the axis in
        error messages and decides whether generated values are rounded to integers
        (:data:`INTEGER_AXES`).
    spec : number, sequence, array, tuple or str
        A number; a sequence or 1-D array of numbers; ``(start, stop, num, "lin"|"log")``; or the
        text forms ``"start:stop:num[:lin|log]"``, ``"v1,v2,..."``, ``"v"``.

    Returns
    -------
    numpy.ndarray
        The axis values, in the order given (generated specs: from start to stop).

    Raises
    ------
    DPBoundsError
        Naming the axis: ``num`` not a positive integer (or above 1e7), a log axis with
        ``start <= 0`` or ``stop <= 0``, a non-finite start/stop, an unknown scale, NaN or
        non-numeric values, an empty or multi-dimensional value list.

    Examples
    --------
    >>> from dpbounds.sweeps import parse_axis
    >>> parse_axis("sigma", "0.5:2:4:lin")
    array([0.5, 1. , 1.5, 2. ])
    >>> parse_axis("rounds", (10, 20, 5, "log"))
    array([10., 12., 14., 17., 20.])
    >>> parse_axis("delta", "1e-5,1e-3")
    array([1.e-05, 1.e-03])
    """
    if not isinstance(name, str) or not name:
        raise DPBoundsError(f"axis name must be a non-empty string, got {name!r}")
    if isinstance(spec, np.ndarray):   # (first: the common case, and none of the others is an array)
        if spec.ndim == 0:
            return _explicit(name, spec.reshape(1))
        return _explicit(name, spec)
    if isinstance(spec, str):
        return _from_text(name, spec)
    if isinstance(spec, (bool, np.bool_)):
        raise DPBoundsError(f"axis {name}: values must be real numbers, got {spec!r}")
    if isinstance(spec, numbers.Real):
        return _explicit(name, [spec])
    if isinstance(spec, tuple) and len(spec) == 4 and isinstance(spec[3], str):
        return _generated(name, *spec)
    if isinstance(spec, (list, tuple, range)):
        return _explicit(name, list(spec))
    raise DPBoundsError(f"axis {name}: expected a number, a sequence of numbers, (start, stop, num, 'lin'|'log') "
                        f"or a 'start:stop:num:lin|log' string, got {type(spec).__name__}")
