"""Whole-array argument checks for the validated API: the one vocabulary of constraints.

The raw ufuncs (:mod:`dpbounds.ufuncs`) never raise; the public functions call these
checks first so that bad input produces one :class:`dpbounds.DPBoundsError` (a
``ValueError``) that names the parameter, the rule and (for arrays) how many elements
break it.  Every rule is a member of :class:`Constraint`, declared once with its text and
its element-wise predicate (as numpy.random's ``ConstraintType``); the ufunc declaration
table (:mod:`dpbounds._ufunc_table`) names a constraint per argument, and the validated
wrappers check exactly those.
"""
from __future__ import annotations

import enum
import math
import numbers
from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import NDArray

from dpbounds._errors import DPBoundsError

__all__ = [
    "Constraint",
    "as_float_array",
    "check",
    "check_constraint",
    "check_args",
    "check_finite_positive",
    "check_open_unit",
    "check_closed_unit",
    "check_rounds",
    "check_count",
    "check_rate",
    "check_scalar",
    "single",
    "check_choice",
    "broadcast",
]

FArr = NDArray[np.float64]


def _finite(x: FArr) -> Any:
    return np.isfinite(x)


#: Smallest sigma at which the central-limit trade-off integral and its slope answer: below it
#: their quadrature loses accuracy.  The C core reads this value (tools/gen_ufuncs.py writes it
#: into csrc/dpb_domain.h as DPB_CLT_SIGMA_MIN); tests/project/test_shared_constants.py checks they agree.
CLT_SIGMA_MIN = 0.03


class Constraint(enum.Enum):
    """The rules an argument can be declared to obey: ``(text, predicate)``.

    The predicate takes a float64 array and returns the element-wise mask of elements
    that satisfy the rule; NaN never satisfies any rule except ``ANY``.
    """

    ANY = ("any real number or NaN", lambda x: np.ones(x.shape, dtype=bool))
    REAL = ("a real number (not NaN)", lambda x: ~np.isnan(x))
    NONNEGATIVE = (">= 0", lambda x: x >= 0)
    FINITE_NONNEGATIVE = ("finite and >= 0", lambda x: (x >= 0) & _finite(x))
    FINITE_POSITIVE = ("finite and > 0", lambda x: (x > 0) & _finite(x))
    POSITIVE = ("> 0 (inf allowed: the limit)", lambda x: x > 0)
    OPEN_UNIT = ("in the open interval (0, 1)", lambda x: (x > 0) & (x < 1))
    CLOSED_UNIT = ("in [0, 1]", lambda x: (x >= 0) & (x <= 1))
    HALF_OPEN_UNIT = ("in the half-open interval (0, 1]", lambda x: (x > 0) & (x <= 1))
    ORDER = (">= 1 (inf allowed)", lambda x: x >= 1)
    ORDER_ABOVE_1 = ("> 1", lambda x: x > 1)
    ORDER_TO_1E4 = ("in [1, 1e4] or inf", lambda x: ((x >= 1) & (x <= 1e4)) | (x == np.inf))
    INTEGER_GE_1 = ("an integer >= 1", lambda x: _finite(x) & (x >= 1) & (x == np.floor(x)))
    INTEGER_GE_2 = ("an integer >= 2", lambda x: _finite(x) & (x >= 2) & (x == np.floor(x)))
    INTEGER_GE_3 = ("an integer >= 3", lambda x: _finite(x) & (x >= 3) & (x == np.floor(x)))
    CLT_SIGMA = (f">= {CLT_SIGMA_MIN} and finite (below, the central-limit quadrature loses accuracy)",
                 lambda x: (x >= CLT_SIGMA_MIN) & _finite(x))

    @property
    def text(self) -> str:
        return str(self.value[0])

    def holds(self, arr: FArr) -> NDArray[np.bool_]:
        """Element-wise mask of the elements of ``arr`` that obey the rule (comparisons with NaN
        are False and raise no floating-point warning)."""
        pred: Callable[[FArr], Any] = self.value[1]
        return np.asarray(pred(arr), dtype=bool)


def _is_bool(e: Any) -> bool:
    return isinstance(e, (bool, np.bool_))


def as_float_array(name: str, value: Any, expected: str = "a real number or array of real numbers") -> FArr:
    """``value`` as a float64 array; ``DPBoundsError`` naming ``name`` if it is not numeric.

    Not numeric: strings and bytes (numpy would parse ``"1.5"``), ``None`` (numpy would read it
    as NaN), complex numbers (numpy would drop the imaginary part with only a ComplexWarning),
    integers beyond the double range (``10**400``, numpy's OverflowError), and bools (``True``
    passed as a noise multiplier or a count is a bug, not the number 1; numpy would read it as
    1).  A masked array is refused too: numpy would compute at its masked elements as if they
    were data, so the caller passes ``np.ma.filled(x, value)`` or ``x.compressed()``, whichever
    they mean.  ``expected`` is what the message says the parameter must be.
    """
    if isinstance(value, np.ma.MaskedArray):
        raise DPBoundsError(f"{name} must be {expected}, got a masked array (masked arrays are refused: pass "
                            "np.ma.filled(x, fill) or x.compressed(), whichever is meant)")
    try:
        raw = value if isinstance(value, np.ndarray) else np.asarray(value)
        if raw.dtype.kind == "b" or (raw.dtype.kind == "O" and any(_is_bool(e) for e in raw.ravel().tolist())):
            raise DPBoundsError(f"{name} must be {expected}, got {value!r} (a bool is not read as 0 or 1)")
        if raw.dtype.kind == "O":
            if not all(isinstance(e, numbers.Real) for e in raw.ravel().tolist()):
                raise TypeError
        elif raw.dtype.kind not in "iuf":
            raise TypeError
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, DPBoundsError):
            raise
        raise DPBoundsError(f"{name} must be {expected}, got {value!r}") from None
    return arr


def check(name: str, arr: NDArray[np.float64], ok: NDArray[np.bool_] | np.bool_, rule: str) -> None:
    """Raise ``ValueError`` if any element of ``arr`` fails ``ok`` (NaN always fails)."""
    ok = np.asarray(ok)
    if ok.all():
        return
    bad = ~ok
    if arr.ndim == 0:
        raise DPBoundsError(f"{name} must be {rule}, got {float(arr)!r}")
    idx = np.unravel_index(int(np.flatnonzero(bad)[0]), arr.shape)
    raise DPBoundsError(
        f"{name} must be {rule}: {int(bad.sum())} of {arr.size} elements are not "
        f"(first: {float(arr[idx])!r} at index {tuple(int(i) for i in idx)})"
    )


def check_constraint(name: str, value: Any, constraint: Constraint) -> FArr:
    """``value`` as a float64 array, after checking that every element obeys ``constraint``."""
    arr = as_float_array(name, value)
    if constraint is not Constraint.ANY:
        check(name, arr, constraint.holds(arr), constraint.text)
    return arr


def check_args(constraints: Mapping[str, Constraint], **values: Any) -> tuple[FArr, ...]:
    """Check each argument against its declared constraint and broadcast them together.

    ``constraints`` maps each name in ``values`` to its rule (a ufunc's declaration gives
    them); the error names the first bad argument, or every shape if they do not broadcast.
    """
    return broadcast(**{k: check_constraint(k, v, constraints[k]) for k, v in values.items()})


def check_finite_positive(name: str, value: Any) -> FArr:
    return check_constraint(name, value, Constraint.FINITE_POSITIVE)


def check_open_unit(name: str, value: Any) -> FArr:
    """0 < value < 1 (deltas, sampling rates)."""
    return check_constraint(name, value, Constraint.OPEN_UNIT)


def check_closed_unit(name: str, value: Any) -> FArr:
    """0 <= value <= 1 (type-I error rates a)."""
    return check_constraint(name, value, Constraint.CLOSED_UNIT)


_INTEGER_GE = {1: Constraint.INTEGER_GE_1, 2: Constraint.INTEGER_GE_2, 3: Constraint.INTEGER_GE_3}


def check_rounds(name: str, value: Any, minimum: int = 3) -> FArr:
    """Integer-valued, finite and >= ``minimum`` (counts and rounds, as float64 arrays).

    The common minimums are the table's ``INTEGER_GE_*`` constraints; other minimums (lattice
    sizes) use the same rule with their own bound.
    """
    constraint = _INTEGER_GE.get(minimum)
    if constraint is not None:
        return check_constraint(name, value, constraint)
    arr = as_float_array(name, value)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(arr) & (arr >= minimum) & (arr == np.floor(arr))
    check(name, arr, ok, f"an integer >= {minimum}")
    return arr


def single(name: str, value: Any, rule: str) -> Any:
    """The one value of a scalar-only parameter, before its rule is checked.

    A 0-d array is a scalar (numpy's convention) and is unwrapped.  Refused with a
    :class:`DPBoundsError` naming ``name``: an array or sequence of any size, one element
    included (an array where the function describes one mechanism, one query or one size is a
    bug, and numpy would otherwise raise its own ``TypeError`` or silently broadcast), and a
    ``bool`` (``True`` passed as a rate or a count is a bug, not the number 1; numpy's reading
    of bools as integers is kept only by the raw ufuncs of :mod:`dpbounds.ufuncs`), and a masked
    array (its mask would be ignored).  ``rule`` is the parameter's rule, quoted when a bool is
    refused.
    """
    if isinstance(value, np.ma.MaskedArray) or value is np.ma.masked:
        raise DPBoundsError(f"{name} must be a single number, got a masked array")
    v = value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
    if isinstance(v, (bool, np.bool_)):
        raise DPBoundsError(f"{name} must be {rule}, got {value!r}")
    if isinstance(v, (numbers.Number, str, bytes)) or v is None:
        return v
    try:
        shape: tuple[int, ...] | None = np.shape(v)
    except ValueError:  # a ragged sequence
        shape = None
    if shape != ():
        what = f"an array of shape {shape}" if isinstance(v, np.ndarray) else \
            f"a {type(v).__name__}" + ("" if shape is None else f" of shape {shape}")
        raise DPBoundsError(f"{name} must be a single number, got {what}")
    return v


def check_count(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    """One integer in [``minimum``, ``maximum``] (a size, a count), as an exact Python ``int``.

    Accepts Python and numpy integers, and floats (or 0-d arrays) whose value is an integer
    (``1e4``), since sizes are often written in float notation.  Rejects arrays and ``bool``
    (:func:`single`).  Python and numpy integers are converted without a detour through
    float, so large values stay exact.
    """
    rule = f"an integer >= {minimum}" if maximum is None else f"an integer in [{minimum}, {maximum}]"
    v = single(name, value, rule)
    if not isinstance(v, numbers.Real):
        raise DPBoundsError(f"{name} must be {rule}, got {value!r}")
    if isinstance(v, numbers.Integral):
        n = int(v)
    else:
        f = float(v)
        if not (math.isfinite(f) and f == math.floor(f)):
            raise DPBoundsError(f"{name} must be {rule}, got {value!r}")
        n = int(f)
    if n < minimum or (maximum is not None and n > maximum):
        raise DPBoundsError(f"{name} must be {rule}, got {value!r}")
    return n


def check_rate(name: str, value: Any) -> float:
    """One probability in the half-open interval (0, 1] (a sampling rate; 1 = always), as a float."""
    return check_scalar(name, value, Constraint.HALF_OPEN_UNIT)


def check_scalar(name: str, value: Any, constraint: Constraint) -> float:
    """One number obeying ``constraint`` (a parameter of a scalar-only function), as a Python float.

    The check every scalar-only parameter goes through: arrays (of any size; 0-d arrays are
    scalars) and ``bool`` are refused by :func:`single`, non-numbers by :func:`as_float_array`,
    then the rule is checked as for arrays.
    """
    v = single(name, value, constraint.text)
    arr = as_float_array(name, v, "a real number")
    if constraint is not Constraint.ANY:
        check(name, arr, constraint.holds(arr), constraint.text)
    return float(arr)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise DPBoundsError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return str(value)


def broadcast(**arrays: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """``np.broadcast_arrays`` with an error that names the mismatched parameters."""
    try:
        return tuple(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{v.shape}" for k, v in arrays.items())
        raise DPBoundsError(f"shapes do not broadcast together: {shapes}") from None


def scalar_or_array(result: NDArray[np.float64]) -> Any:
    """Return a Python float for 0-d results, the array otherwise."""
    return float(result) if np.ndim(result) == 0 else result


__all__.append("scalar_or_array")
