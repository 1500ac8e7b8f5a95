"""What the harnesses feed the API: doubles, shapes, dtypes and text drawn from the fuzzer's bytes.

Every draw goes through :class:`Draw`, a thin layer over ``atheris.FuzzedDataProvider`` that
mixes three sources, so that coverage guidance can reach both the rejection branches and the
numerical branches behind them:

* the hard doubles (NaN, +-inf, +-0.0, the smallest subnormal, the largest double, 2**53 and
  its neighbours, the edges of the documented domains);
* values shaped like the parameter (``kind``: a noise multiplier is drawn log-uniformly over
  the range where the package computes, a delta in (0, 1), a count as an integer), most of
  the time;
* any double at all (``ConsumeFloat``: NaN and infinities included) the rest of the time.

Arrays get a random number of dimensions (0-3, empty axes included), a dtype among float64,
float32, float16, the integers, bool, complex, object and plain Python lists/tuples, and shapes
that usually broadcast against each other and sometimes do not.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

__all__ = ["Draw", "HARD_DOUBLES", "KINDS"]

HARD_DOUBLES: tuple[float, ...] = (
    math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
    1e-300, 1e-200, 1e-100, 1e-15, 1e-9, 2.0 ** -53, 1.0 - 2.0 ** -53, 1.0, 1.0 + 2.0 ** -52, -1.0,
    0.5, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 0.037, 0.07, 0.0685, 0.0915, 0.3, 0.5, 20.0, 50.0, 1e4, 1e6,
    1e9, 1e15, 2.0 ** 53 - 1, 2.0 ** 53, 2.0 ** 53 + 2, 1e300, 1.7976931348623157e308, -1.7976931348623157e308,
)

#: kind -> (log10 lo, log10 hi, integer?, sign): the range a parameter is usually drawn from.
KINDS: dict[str, tuple[float, float, bool, float]] = {
    "any": (-12.0, 12.0, False, 0.0),        # sign drawn too
    "x": (-2.0, 2.0, False, 0.0),            # arguments of the normal functions, both signs
    "sigma": (-1.5, 2.0, False, 1.0),        # noise multipliers
    "positive": (-6.0, 6.0, False, 1.0),
    "unit": (-15.0, 0.0, False, 1.0),        # deltas, rates, type-I errors (folded into (0, 1))
    "rounds": (0.4, 15.0, True, 1.0),        # counts M >= 3 up to 1e15
    "count": (0.0, 6.0, True, 1.0),          # small counts
    "order": (0.0, 4.0, False, 1.0),         # Renyi orders >= 1
    "eps": (-4.0, 2.0, False, 1.0),
    "mu": (-3.0, 1.5, False, 1.0),
}

_DTYPES = ("float64", "float64", "float32", "float16", "int64", "int32", "uint8", "bool",
           "complex128", "object", "list", "tuple")


class Draw:
    """Typed draws from one fuzzer input (deterministic in the input bytes)."""

    def __init__(self, data: bytes) -> None:
        import atheris  # the harnesses run under atheris; the regression tests never build a Draw

        self.fdp = atheris.FuzzedDataProvider(data)

    # ------------------------------------------------------------------ scalars
    def int(self, lo: int, hi: int) -> int:
        return int(self.fdp.ConsumeIntInRange(lo, hi))

    def bool(self) -> bool:
        return bool(self.fdp.ConsumeBool())

    def pick(self, seq: Sequence[Any]) -> Any:
        return seq[self.int(0, len(seq) - 1)]

    def double(self, kind: str = "any") -> float:
        """One double: hard value (1/8), arbitrary (1/8), or shaped like ``kind`` (3/4)."""
        mode = self.int(0, 7)
        if mode == 0:
            return float(self.pick(HARD_DOUBLES))
        if mode == 1:
            return float(self.fdp.ConsumeFloat())
        lo, hi, integer, sign = KINDS[kind]
        v = 10.0 ** self.fdp.ConsumeFloatInRange(lo, hi)
        if kind == "unit":
            v = min(v, 1.0 - 2.0 ** -53) if self.int(0, 3) else 1.0 - v  # both ends of (0, 1)
        elif kind == "order":
            v = 1.0 + (v - 1.0)
            if self.int(0, 2) == 0:
                v = float(round(v))
        elif kind == "rounds":
            v = float(max(3, round(v)))
        if integer:
            v = float(round(v))
        if sign == 0.0 and self.bool():
            v = -v
        return v

    def scalar(self, kind: str = "any") -> Any:
        """A scalar in one of the forms users pass: float, int, numpy scalar, 0-d array, bool."""
        v = self.double(kind)
        form = self.int(0, 9)
        if form <= 4:
            return v
        if form == 5 and math.isfinite(v) and v == math.floor(v) and abs(v) < 2.0 ** 63:
            return int(v)
        if form == 6:
            return np.float64(v)
        if form == 7:
            return np.array(v)
        if form == 8:
            return np.float32(v)
        return self.pick((True, False, int(self.fdp.ConsumeInt(2)), 10 ** 400, "1.5", None, 1 + 1j, [v]))

    # ------------------------------------------------------------------ arrays
    def shape(self, base: tuple[int, ...] | None = None) -> tuple[int, ...]:
        """A shape: usually broadcastable against ``base`` (a suffix with some axes set to 1)."""
        if base is None or self.int(0, 7) == 0:
            return tuple(self.int(0, 4) for _ in range(self.int(0, 3)))
        keep = self.int(0, len(base))
        tail = base[len(base) - keep:]
        return tuple(1 if self.int(0, 3) == 0 else n for n in tail)

    def array(self, kind: str = "any", shape: tuple[int, ...] | None = None) -> Any:
        """An array-like of ``shape`` (drawn if None) in a drawn dtype/container."""
        if shape is None:
            shape = self.shape()
        n = int(np.prod(shape)) if shape else 1
        n = min(n, 64)
        vals = [self.double(kind) for _ in range(n)]
        size = int(np.prod(shape)) if shape else 1
        flat = np.resize(np.array(vals if vals else [0.0]), size)
        arr = flat.reshape(shape)
        dt = self.pick(_DTYPES)
        with np.errstate(all="ignore"):
            if dt in ("list", "tuple"):
                out = arr.tolist()
                return tuple(out) if dt == "tuple" and isinstance(out, list) else out
            if dt == "object":
                obj = arr.astype(object)
                if obj.size and self.int(0, 5) == 0:  # an element that is not a number
                    obj.flat[self.int(0, obj.size - 1)] = self.pick(("1.5", None, 1 + 2j, [1.0]))
                return obj
            if dt.startswith(("int", "uint")):
                info = np.iinfo(dt)
                arr = np.nan_to_num(arr, nan=0.0, posinf=info.max, neginf=info.min)
                return np.clip(np.round(arr), info.min, info.max).astype(dt)
            if dt == "complex128":
                return arr.astype(dt) + (1j * self.double("x") if self.bool() else 0.0)
            return arr.astype(dt)

    def value(self, kind: str = "any", shape: tuple[int, ...] | None = None) -> Any:
        """A scalar (1/2) or an array (1/2) shaped like ``kind``."""
        return self.scalar(kind) if self.bool() else self.array(kind, shape)

    # ------------------------------------------------------------------ text
    def text(self, max_len: int = 12) -> str:
        return str(self.fdp.ConsumeUnicodeNoSurrogates(self.int(0, max_len)))
