"""Corpus entries for the recorded findings: inputs that make a harness repeat a finding's call.

    python fuzz/seeds.py            # write fuzz/corpus/<harness>/finding-<name> (needs atheris)
    python fuzz/seeds.py --check    # check the committed ones, write nothing

A harness turns its input bytes into arguments through ``fuzz/_inputs.py``'s :class:`Draw`, which
reads them with atheris' ``FuzzedDataProvider``: integers in a range from the *end* of the input
(one byte per 8 bits of the range, most significant first), booleans, floats, probabilities and
text from the *front*.  :class:`Encoder` writes bytes in that layout, and :class:`Steer` is a Draw
that, instead of reading, takes from a script the value each draw of the harness should produce
and writes the bytes that produce it.  A seed (:data:`SEEDS`) is such a script: the harness's
choice of family or function, then the finding's arguments in the order the harness draws them.

Not every double is reachable in every draw: a value shaped like ``kind`` is ``10 ** x`` with ``x``
from a 64-bit fraction, an arbitrary double (``ConsumeFloat``) is at least about 1e289 in
magnitude.  The hard doubles (``HARD_DOUBLES``) and ``ConsumeFloat``'s specials are exact; any
other value becomes the nearest reachable double, so that seed sits next to its finding (the
listed call shows where).  ``--check`` replays every input through the real Draw and compares
the calls the harness makes (``fuzz/_contract.attempt``'s descriptions) with the steered run's,
checks that the finding's call is among them and that the harness reports nothing.
"""
from __future__ import annotations

import argparse
import math
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _inputs import _DTYPES, HARD_DOUBLES, KINDS, Draw  # noqa: E402

CORPUS = HERE / "corpus"
PREFIX = "finding-"
DBL_MAX = sys.float_info.max
DBL_MIN = sys.float_info.min
# ConsumeFloat's first byte 0..10 selects these (then 9 bytes are skipped); above 10 a regular float
FLOAT_SPECIALS = (0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, DBL_MIN, -DBL_MIN, DBL_MAX, -DBL_MAX)
_TWO64 = 2 ** 64
_DIVISOR = float(_TWO64 - 1)            # FuzzedDataProvider's probability divisor: 2**64 as a double


class SeedError(ValueError):
    """A script asks for something the harness's draws cannot produce."""


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _same(a: Any, b: Any) -> bool:
    """The same value: floats bit for bit (NaN included), arrays element for element, else ==."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype \
            and a.shape == b.shape and bool(np.all((a == b) | (a != a) & (b != b)))
    if isinstance(a, float) and isinstance(b, float):
        return _bits(a) == _bits(b)
    if callable(a) and isinstance(b, str):
        return getattr(a, "__name__", None) == b
    return type(a) is type(b) and bool(a == b)


@dataclass(frozen=True)
class Index:
    """A script value for ``pick``: the element at this index (for elements not easily named)."""
    i: int


@dataclass(frozen=True)
class Probability:
    """A script value for a raw ``d.fdp.ConsumeProbability()`` of the harness."""
    p: float


class Encoder:
    """The bytes of one FuzzedDataProvider input, built in the order the provider reads them."""

    def __init__(self) -> None:
        self.front = bytearray()
        self.back = bytearray()          # in the order the provider takes them from the end

    def data(self) -> bytes:
        return bytes(self.front) + bytes(reversed(self.back))

    def int_in_range(self, lo: int, hi: int, v: int) -> int:
        if not lo <= v <= hi:
            raise SeedError(f"{v} is not in [{lo}, {hi}]")
        r = v - lo
        for i in reversed(range(((hi - lo).bit_length() + 7) // 8)):
            self.back.append((r >> (8 * i)) & 0xFF)
        return v

    def bool(self, b: bool) -> bool:
        self.front.append(1 if b else 0)
        return b

    def integral(self, k: int) -> float:
        """ConsumeProbability's 8 bytes for the integer k: returns the probability it reads."""
        self.front += k.to_bytes(8, "little")
        return float(k) / _DIVISOR

    def special_float(self, code: int) -> float:
        self.front += bytes([code]) + bytes(9)
        return FLOAT_SPECIALS[code]

    def consume_int(self, nbytes: int, v: int) -> int:
        self.front += v.to_bytes(nbytes, "little", signed=True)
        return v

    def ascii(self, s: str) -> str:
        if not s.isascii():
            raise SeedError(f"{s!r}: only ASCII text is encoded")
        if s:
            self.front += b"\x01" + s.encode()
        return s


def _closest(f: Callable[[int], float], target: float) -> int:
    """The integral k in [0, 2**64) whose value f(k) (monotone in k) is closest to ``target``."""
    lo, hi = 0, _TWO64 - 1
    up = f(hi) >= f(lo)
    if not min(f(lo), f(hi)) <= target <= max(f(lo), f(hi)):
        raise SeedError(f"{target!r} is outside [{f(lo)!r}, {f(hi)!r}]")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if (f(mid) <= target) == up:
            lo = mid
        else:
            hi = mid
    return min((lo, hi), key=lambda k: (abs(f(k) - target), k))


class _Empty:
    """What FuzzedDataProvider gives once the input is used up."""

    def ConsumeIntInRange(self, lo: int, hi: int) -> int:  # noqa: N802 (atheris' names)
        return lo

    def ConsumeBool(self) -> bool:  # noqa: N802
        return False

    def ConsumeFloat(self) -> float:  # noqa: N802
        return 0.0

    def ConsumeFloatInRange(self, lo: float, hi: float) -> float:  # noqa: N802
        return lo

    def ConsumeProbability(self) -> float:  # noqa: N802
        return 0.0

    def ConsumeInt(self, n: int) -> int:  # noqa: N802
        return 0

    def ConsumeUnicodeNoSurrogates(self, n: int) -> str:  # noqa: N802
        return ""


class _RawSteer:
    """``d.fdp`` of a steered Draw, for the harnesses that read the provider directly."""

    def __init__(self, steer: "Steer") -> None:
        self.steer = steer

    def ConsumeProbability(self) -> float:  # noqa: N802
        want = self.steer._take()
        if want is _END:
            return 0.0
        if not isinstance(want, Probability) or not 0.0 <= want.p < 1.0:
            raise SeedError(f"ConsumeProbability() wants a Probability in [0, 1), not {want!r}")
        return self.steer.enc.integral(_closest(lambda k: float(k) / _DIVISOR, want.p))


_END = object()


class Steer(Draw):
    """A Draw whose every draw returns the script's next value (and writes the bytes that give it).

    Once the script is used up it draws what the real Draw draws from an exhausted input, which
    is what the written bytes give from there on.
    """

    def __init__(self, script: Sequence[Any]) -> None:  # (no atheris: nothing is read)
        self.enc = Encoder()
        self.script = list(script)
        self.fdp = _RawSteer(self)

    def _take(self) -> Any:
        if not self.script:
            self.fdp = _Empty()     # the real Draw's methods read an exhausted input from here on
            return _END
        return self.script.pop(0)

    # ---------------------------------------------------------------- the Draw interface
    def int(self, lo: int, hi: int) -> int:
        want = self._take()
        return Draw.int(self, lo, hi) if want is _END else self._int(lo, hi, want)

    def bool(self) -> bool:
        want = self._take()
        return Draw.bool(self) if want is _END else self.enc.bool(bool(want))

    def pick(self, seq: Sequence[Any]) -> Any:
        want = self._take()
        return Draw.pick(self, seq) if want is _END else self._pick(seq, want)

    def double(self, kind: str = "any") -> float:
        want = self._take()
        return Draw.double(self, kind) if want is _END else self._double(kind, want)

    def scalar(self, kind: str = "any") -> Any:
        want = self._take()
        return Draw.scalar(self, kind) if want is _END else self._scalar(kind, want)

    def shape(self, base: tuple[int, ...] | None = None) -> tuple[int, ...]:
        want = self._take()
        return Draw.shape(self, base) if want is _END else self._shape(base, tuple(want))

    def array(self, kind: str = "any", shape: tuple[int, ...] | None = None) -> Any:
        want = self._take()
        return Draw.array(self, kind, shape) if want is _END else self._array(kind, shape, want)

    def value(self, kind: str = "any", shape: tuple[int, ...] | None = None) -> Any:
        want = self._take()
        if want is _END:
            return Draw.value(self, kind, shape)
        if isinstance(want, (list, tuple)) or (isinstance(want, np.ndarray) and want.ndim > 0):
            self.enc.bool(False)
            return self._array(kind, shape, want)
        self.enc.bool(True)
        return self._scalar(kind, want)

    def text(self, max_len: int = 12) -> str:
        want = self._take()
        if want is _END:
            return Draw.text(self, max_len)
        self._int(0, max_len, len(want))
        return self.enc.ascii(want)

    # ---------------------------------------------------------------- encoders (no script)
    def _int(self, lo: int, hi: int, v: Any) -> int:
        return self.enc.int_in_range(lo, hi, int(v))

    def _pick(self, seq: Sequence[Any], want: Any) -> Any:
        if isinstance(want, Index):
            i = want.i
        else:
            found = [i for i, x in enumerate(seq) if _same(x, want)]
            if not found:
                raise SeedError(f"{want!r} is not among {seq!r}")
            i = found[0]
        self._int(0, len(seq) - 1, i)
        return seq[i]

    def _double(self, kind: str, t: float) -> float:
        """The draw of Draw.double(kind) that gives t (or the nearest reachable double)."""
        t = float(t)
        hard = [i for i, h in enumerate(HARD_DOUBLES) if _bits(h) == _bits(t)]
        if hard:
            self._int(0, 7, 0)
            return float(self._pick(HARD_DOUBLES, Index(hard[0])))
        special = [i for i, s in enumerate(FLOAT_SPECIALS) if _bits(s) == _bits(t)]
        if special:
            self._int(0, 7, 1)
            return self.enc.special_float(special[0])
        lo, hi, integer, sign = KINDS[kind]
        neg = sign == 0.0 and t < 0
        a = -t if neg else t
        # the kind's transform of x, with its own draws decided here (unit: which end of (0, 1);
        # order: rounded or not), as in Draw.double
        one_minus = kind == "unit" and a > 0.5
        rounded = kind == "order" and a == math.floor(a)

        def shaped(x: float) -> float:
            v = 10.0 ** x
            if kind == "unit":
                v = 1.0 - v if one_minus else min(v, 1.0 - 2.0 ** -53)
            elif kind == "order":
                v = 1.0 + (v - 1.0)
                if rounded:
                    v = float(round(v))
            elif kind == "rounds":
                v = float(max(3, round(v)))
            if integer:
                v = float(round(v))
            return v

        def at(k: int) -> float:
            return shaped(lo + (hi - lo) * (float(k) / _DIVISOR))

        if a > 0 and math.isfinite(a) and min(at(0), at(_TWO64 - 1)) <= a <= max(at(0), at(_TWO64 - 1)):
            self._int(0, 7, 2)
            v = shaped(lo + (hi - lo) * self.enc.integral(_closest(at, a)))
            if kind == "unit":
                self._int(0, 3, 0 if one_minus else 1)
            elif kind == "order":
                self._int(0, 2, 0 if rounded else 1)
            if sign == 0.0:
                v = -v if self.enc.bool(neg) else v
            return v
        if abs(t) >= 1e290 and math.isfinite(t):
            # ConsumeFloat's regular path: -max + (sign bit ? max : 0) + max * p
            self._int(0, 7, 1)
            self.enc.front.append(0xFF)
            pos = self.enc.bool(t > 0)
            base = 0.0 if pos else -DBL_MAX
            return base + DBL_MAX * self.enc.integral(_closest(lambda k: base + DBL_MAX * (float(k) / _DIVISOR), t))
        raise SeedError(f"{t!r} is neither a hard double nor reachable as a {kind!r} value")

    def _scalar(self, kind: str, want: Any) -> Any:
        """Draw.scalar: a double, then the form (0-4 float, 5 int, 6 np.float64, 7 0-d array,
        8 np.float32, 9 one of True, False, a 2-byte int, 10**400, "1.5", None, 1+1j, [v])."""
        forms = (True, False, 0, 10 ** 400, "1.5", None, 1 + 1j)
        if want is None or isinstance(want, (bool, str, complex)) or (isinstance(want, int) and abs(want) >= 2 ** 53):
            i = [j for j, x in enumerate(forms) if j != 2 and _same(x, want)]
            if not i:
                raise SeedError(f"scalar {want!r} is not a form Draw.scalar draws")
            self._double(kind, 0.0)
            self._int(0, 9, 9)
            self.enc.consume_int(2, 0)
            self._int(0, 7, i[0])
            return forms[i[0]]
        if isinstance(want, list):
            v = self._double(kind, want[0])
            self._int(0, 9, 9)
            self.enc.consume_int(2, 0)
            self._int(0, 7, 7)
            return [v]
        if isinstance(want, np.float32):
            v = self._double(kind, float(want))
            self._int(0, 9, 8)
            return np.float32(v)
        if isinstance(want, np.ndarray):
            v = self._double(kind, float(want))
            self._int(0, 9, 7)
            return np.array(v)
        if isinstance(want, np.float64):
            v = self._double(kind, float(want))
            self._int(0, 9, 6)
            return np.float64(v)
        if isinstance(want, int):
            v = self._double(kind, float(want))
            self._int(0, 9, 5)
            if v != want:
                raise SeedError(f"int {want} is not exactly reachable as a {kind!r} value")
            return int(v)
        v = self._double(kind, float(want))
        self._int(0, 9, 0)
        return v

    def _shape(self, base: tuple[int, ...] | None, want: tuple[int, ...]) -> tuple[int, ...]:
        """Draw.shape: a suffix of ``base`` with some axes set to 1, else (1 in 8) a free shape."""
        if base is not None and len(want) <= len(base):
            tail = base[len(base) - len(want):]
            if all(w == n or w == 1 for w, n in zip(want, tail)):
                self._int(0, 7, 1)
                self._int(0, len(base), len(want))
                for w, n in zip(want, tail):
                    self._int(0, 3, 0 if w == 1 and n != 1 else 1)
                return want
        if base is not None:
            self._int(0, 7, 0)
        if len(want) > 3 or any(not 0 <= n <= 4 for n in want):
            raise SeedError(f"shape {want}: at most 3 axes of length 0 to 4")
        self._int(0, 3, len(want))
        for n in want:
            self._int(0, 4, n)
        return want

    def _array(self, kind: str, shape: tuple[int, ...] | None, want: Any) -> Any:
        """Draw.array: the shape (unless given), min(size, 64) doubles, the dtype (or container)."""
        container = "list" if isinstance(want, list) else "tuple" if isinstance(want, tuple) else None
        arr = np.asarray(want, dtype=object if container else None)
        if shape is None:
            shape = self._shape(None, arr.shape)
        elif tuple(shape) != arr.shape:
            raise SeedError(f"the harness draws shape {shape} here, the script gives {arr.shape}")
        flat = arr.ravel()
        odd = [i for i, x in enumerate(flat) if not isinstance(x, (int, float, complex, np.number, np.bool_))]
        numbers = [0.0 if i in odd else complex(x).real for i, x in enumerate(flat)]
        vals = [self._double(kind, x) for x in numbers[:64]]
        dt = container or ("object" if arr.dtype == object else arr.dtype.name)
        self._pick(_DTYPES, dt)
        size = int(np.prod(shape)) if shape else 1
        out = np.resize(np.array(vals if vals else [0.0]), size).reshape(shape)
        with np.errstate(all="ignore"):
            if container:
                lst = out.tolist()
                return tuple(lst) if container == "tuple" and isinstance(lst, list) else lst
            if dt == "object":
                obj = out.astype(object)
                if obj.size:
                    if len(odd) > 1:
                        raise SeedError("an object array holds at most one element that is not a number")
                    self._int(0, 5, 0 if odd else 1)
                    if odd:
                        self._int(0, obj.size - 1, odd[0])
                        obj.flat[odd[0]] = self._pick(("1.5", None, 1 + 2j, [1.0]), flat[odd[0]])
                return obj
            if dt.startswith(("int", "uint")):
                info = np.iinfo(dt)
                out = np.nan_to_num(out, nan=0.0, posinf=info.max, neginf=info.min)
                return np.clip(np.round(out), info.min, info.max).astype(dt)
            if dt == "complex128":
                imag = {complex(x).imag for x in flat} or {0.0}
                if len(imag) > 1:
                    raise SeedError("a complex array gets one imaginary part for all its elements")
                im = imag.pop()
                if self.enc.bool(im != 0.0):
                    return out.astype(dt) + 1j * self._double("x", im)
                return out.astype(dt) + 0.0
            return out.astype(dt)


# ==================================================================== the seeds
@dataclass(frozen=True)
class Seed:
    harness: str
    name: str
    script: tuple[Any, ...]
    expect: str          # a substring of one call the harness makes (fuzz/_contract.describe)


def _special(name: str, *args: Any, expect: str = "") -> tuple[tuple[Any, ...], str]:
    """The special harness: the ufunc's index, the base shape (), then per argument its shape and value."""
    from dpbounds._ufunc_table import UFUNCS  # (imported by the harness process only)

    idx = [i for i, s in enumerate(UFUNCS) if s.name == name]
    if not idx:
        raise SeedError(f"no ufunc {name!r} in the declaration table")
    script: list[Any] = [idx[0], ()]
    for a in args:
        script += [np.shape(a) if isinstance(a, (np.ndarray, list, tuple)) else (), a]
    return tuple(script), expect or f"{name}("


NAN, INF = math.nan, math.inf
ONE_MINUS = 1.0 - 2.0 ** -53


def seeds(harness: str) -> list[Seed]:
    """The seeds of one harness (built in that harness's process: the special ones read the table)."""
    out: list[Seed] = []

    def add(name: str, script: Sequence[Any], expect: str) -> None:
        out.append(Seed(harness, name, tuple(script), expect))

    if harness == "special":
        for name, (script, expect) in {
            "normal_pdf-huge-x": _special("normal_pdf", -4.37086174e307),
            "tradeoff_clt_slope-nan": _special("tradeoff_clt_slope", 0.0, NAN, NAN),
            "compose_delta-huge-epochs": _special("compose_delta", ONE_MINUS, 4.0183737216871536e307),
            "compose_delta-int-beyond-doubles": _special("compose_delta", 10 ** 400, 1.0,
                                                         expect="compose_delta(delta=" + "1" + "0" * 50),
            "rdp_laplace-huge-order": _special("rdp_laplace", DBL_MAX, 9007199254740994.0),
            "rdp_laplace-2alpha-overflows": _special("rdp_laplace", DBL_MAX, 1e300),
            "rdp_randomized_response-largest-order": _special("rdp_randomized_response", DBL_MAX, 1e-100),
            "rdp_gaussian-str-sigma": _special("rdp_gaussian", 2.0, "1.5", expect="gaussian(alpha=2.0, sigma='1.5')"),
            "rdp_poisson_quad_log-q-one": _special("rdp_poisson_quad_log", 1.5, 0.17984648772986425, 1.0),
            "rdp_interp-near-max": _special("rdp_interp", 2.5, 1e308, DBL_MAX),
            "gdp_log_delta-huge-eps-over-mu": _special("gdp_log_delta", 1e-200, DBL_MIN),
            "gdp_delta-negative-eps-tiny-mu": _special("gdp_delta", -DBL_MIN, 1e-200),
            "gdp_delta-negative-eps-subnormal-mu": _special("gdp_delta", -DBL_MIN, 5e-324),
            "gdp_epsilon-subnormal-mu": _special("gdp_epsilon", 5e-324, DBL_MIN),
            "gdp_epsilon-huge-mu": _special("gdp_epsilon", 1e-9, 1e300),
            "gdp_mu_poisson_drs-largest-steps": _special("gdp_mu_poisson_drs", 1.0, 0.5, DBL_MAX),
            "delta_terms-huge-sigma": _special("delta_terms_exact", 1e300, 1e15),
            "delta_bound_checked-largest-sigma": _special("_delta_bound_checked_exact", DBL_MAX, 1e15),
            "delta_bound-empty-sigma-nan-rounds": _special("delta_bound_simplified", np.empty((0, 0, 0)), NAN,
                                                           expect="delta_bound(sigma=array([], shape=(0, 0, 0)"),
            "min_dataset_size-underflow": _special("min_dataset_size", 5e-324, 4.5e12, 1e-6, 11768.0),
            "edgeworth_status-fractional-rounds": _special("edgeworth_status", 0.03, 0.9311351969305441, 3.5),
            "edgeworth_status-shapes-do-not-broadcast": _special(
                "edgeworth_status", np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((0, 3)),
                expect="edgeworth_status(a=array([], shape=(2, 0)"),
            "edgeworth_status-None": _special("edgeworth_status", None, 1.0, 100.0, expect="edgeworth_status(a=None"),
            "edgeworth_p-huge-y": _special("edgeworth_p", 1e300, 1.0, 100.0),
            "tradeoff_clt-sigma-beyond-doubles": _special("tradeoff_clt", 0.5, 10 ** 400, 100.0,
                                                          expect="tradeoff_clt(a=0.5, sigma=1" + "0" * 50),
            "tradeoff_clt-huge-rounds": _special("tradeoff_clt", 0.5, 0.07, 1e308),
            "tradeoff_edgeworth-beyond-its-regime": _special("tradeoff_edgeworth", 1 - 1.9e-6, 0.217, 7808.0),
            "tradeoff_edgeworth-gamma1-overflow": _special("tradeoff_edgeworth", 0.5, 0.0382, 1000.0),
            "tradeoff_edgeworth-huge-sigma-and-rounds": _special("tradeoff_edgeworth", 0.5, 9007199254740992.0, 1e300),
            "multi_epoch_tradeoff-largest-epochs": _special("multi_epoch_tradeoff", 0.5, 0.01, DBL_MAX),
        }.items():
            add(name, script, expect)
        from dpbounds._ufunc_table import UFUNCS
        add("lognormal_moments-complex", [len(UFUNCS), np.array([1 + 1j])], "lognormal_moments(array([1.+1.j])")
    elif harness == "bounds":
        # families: delta_bound, monotone, rounds_required, dataset_and_epochs, theorem31
        add("delta_bound-empty-sigma-nan-rounds", ["fuzz_delta_bound", np.empty((0, 0, 0)), NAN, 1, "simplified", 1],
            "delta_bound(array([], shape=(0, 0, 0)")
        add("theorem31-empty-sigma-nan-rounds", ["fuzz_theorem31", np.empty((0,)), NAN, True, "delta_min", "exact"],
            "theorem31(array([]")
        add("rounds_required-underflowed-per-epoch-delta",
            ["fuzz_rounds_required", 1e-200, 5e-324, 1.0, 2, "simplified", "target"],
            "rounds_required(1e-200, 5e-324, 'simplified', 'target', epochs=2)")
        add("rounds_required-huge-sigma", ["fuzz_rounds_required", 1e300, 1e-5, 1.0, 1, "exact", "delta_min"],
            "rounds_required(1e+300")
        add("monotone-largest-rounds", ["fuzz_monotone", "exact", 1.5, 2.0, 1e300, DBL_MAX],
            "delta_bound(1.5, 1.7976931348623157e+308, 'exact')")
        add("monotone-simplified-huge-sigma", ["fuzz_monotone", "simplified", 1.2, 1e4, 8.1e307, DBL_MAX],
            "delta_bound(10000.0, 1.7976931348623157e+308, 'simplified')")
        add("compose_delta-huge-epochs", ["fuzz_dataset_and_epochs", 1.0, 1.0, 1.0, 1.0, ONE_MINUS,
                                          4.0183737216871536e307], "compose_delta(0.9999999999999999, 4.018")
        add("min_dataset_size-underflow", ["fuzz_dataset_and_epochs", 5e-324, 1e6, 1e-6, 11768.0],
            "min_dataset_size(5e-324, 1000000.0")
    elif harness == "tradeoff":
        # families: curves (twice), gaussian, gdp, curve_object; curves: 0 clt, 1 truncated, 2 edgeworth, 3 lower, 4 slope
        add("tradeoff_clt-sigma-beyond-doubles", ["fuzz_curves", 1, 0.5, 10 ** 400, 100.0, 0],
            "tradeoff_clt(array([0.5]), 1" + "0" * 50)
        add("tradeoff_clt-huge-rounds", ["fuzz_curves", 1, 0.5, 0.07, 1e308, 0], "tradeoff_clt(array([0.5]), 0.07, 1e+308")
        add("tradeoff_edgeworth-beyond-its-regime", ["fuzz_curves", 1, 1 - 1.9e-6, 0.217, 7808.0, 2],
            "tradeoff_edgeworth(array([0.999998")
        add("tradeoff_edgeworth-tiny-sigma", ["fuzz_curves", 2, 0.1, 0.9, 1e-200, 1000.0, 2], "]), 1e-200, 1000.0)")
        add("tradeoff_clt_slope-below-its-sigma", ["fuzz_curves", 1, 0.5, 1e-9, 100.0, 4],
            "tradeoff_clt_slope(array([0.5]), 1e-09")
        add("gdp_delta-negative-eps-tiny-mu", ["fuzz_gdp", 1e-200, -DBL_MIN, 0.0, 1e-5],
            "gdp_delta(array([-2.22507386e-308,  0.00000000e+000]), 1e-200)")
        add("gdp_delta-negative-eps-subnormal-mu", ["fuzz_gdp", 5e-324, -DBL_MIN, 1e-200, 1e-5],
            "gdp_delta(array([-2.22507386e-308,  1.00000000e-200]), 5e-324)")
        add("gdp_epsilon-subnormal-mu", ["fuzz_gdp", DBL_MIN, 0.0, 1.0, 5e-324], "gdp_epsilon(5e-324, 2.2250738585072014e-308)")
        add("gdp_mu_poisson_drs-largest-steps", ["fuzz_gdp", 1.0, 0.5, 1.0, 1e-5, 1.0, 0.5, DBL_MAX],
            "gdp_mu_poisson_drs(1.0, 0.5, 1.7976931348623157e+308)")
        add("curve-symmetrize-near-zero", ["fuzz_curve_object", 3, False, np.array([0.0, 1e-300, 1.0]),
                                           np.array([DBL_MIN, DBL_MIN, 0.0])],
            "TradeoffCurve(array([0.e+000, 1.e-300, 1.e+000])")
        add("curve-epsilon-at-a-subnormal-vertex", ["fuzz_curve_object", 3, False, np.array([0.0, 5e-324, 1.0]),
                                                    np.array([1.0, 0.5, 0.0]), 0.1, 0.2, 0.3, 0.4, 0.1, 0.5, 1.0, 0.0],
            "epsilon(0.0)")
    elif harness == "rdp":
        # families: functions (twice), conversion, accountant; functions: 0 gaussian, 1 laplace, 2 rr, 3 poisson, 4 wor
        add("randomized_response-largest-order", ["fuzz_functions", 1, DBL_MAX, 2, 1e-100],
            "randomized_response(array([1.79769313e+308]), 1e-100)")
        add("laplace-huge-order", ["fuzz_functions", 1, DBL_MAX, 1, 9007199254740994.0],
            "laplace(array([1.79769313e+308]), 9007199254740994.0)")
        add("poisson_gaussian-largest-sigma", ["fuzz_functions", 1, 1.5, 3, DBL_MAX, 1.0 - 1e-15, "exact"],
            "poisson_gaussian(array([1.5]), 1.7976931348623157e+308, 0.999999999999999, 'exact')")
        add("delta-at-order-inf", ["fuzz_conversion", 1, INF, 0.01, 1, 1e-15, 0.0, "improved"],
            "delta(array([0.01]), array([inf]), 0.0, 'improved')")
        add("epsilon-rounds-towards-the-bound", ["fuzz_conversion", 1, 9007199254740992.0, 897687.35876041, 1, DBL_MIN,
                                                 1.0, "improved"], "epsilon(array([897687.35876")
        # RDPAccountant(orders, conversion, max_order): _orders, then the pick among (None, None, "default", orders)
        add("accountant-compat-series-at-huge-sigma",
            ["fuzz_accountant", 1, 2.0, None, "improved", 2.0, 1e4, 1, 1, 9007199254740991.0, 0.5, "compat", 1.0, 1,
             False, 1.0 - 1e-15, 1.0 - 1e-15], "get_epsilon(0.999999999999999)")
        add("accountant-wor-at-order-1e6",
            ["fuzz_accountant", 1, 1e6, Index(3), "improved", 1e6, 1e6, 1, 2, 3.5, 0.5, "improved", 1.0, 1, False,
             1.0 - 1.3e-9, 1.0 - 1.3e-9], "get_epsilon(0.9999999987")
        add("accountant-largest-order-classic",
            ["fuzz_accountant", 1, DBL_MAX, Index(3), "classic", 2.0, 1e4, 1, 0, 1.0, 0.5, 10.0, 10, False,
             1.0 - 1e-15, 1.0 - 1e-15], "get_epsilon(0.999999999999999)")
        add("accountant-delta-at-its-own-epsilon",
            ["fuzz_accountant", 1, 2.0, None, "improved", 2.0, 1e4, 1, 1, 9007199254740991.0, 1.0, "exact", 1.0, 1,
             False, 1e-100, 1e-100], "get_epsilon(1e-100)")
    elif harness == "accountants":
        # families: random_allocation (twice), poisson, pld, calibration.  _sigma: 0.7 (20 / 0.7) ** p.
        # Not here: RandomAllocationPLD(0.74, 16, 3).epsilon(0.5), the log-domain lattice's cells
        # (p = log(0.7406 / 0.7) / log(20 / 0.7), then 1, 16, 1, 3, 1, 0.5) -- 4 s, over 30 s under
        # ASan, too slow for the gate; tests/accountant/test_accountant_fuzz_regressions.py checks it with a small cap.
        pass
    elif harness == "sweep_axes":
        for name, axis, spec in (("axis-4e7-points", "epochs", "0:0:41126071"),
                                 ("axis-over-the-cap", "epochs", "-1:1:31e+06"),
                                 ("axis-integer-1e8-points", "epochs", "1:1e9:1e8"),
                                 ("axis-1e12-points", "sigma", "1:1e12:1e12"),
                                 ("axis-log-1e6-points", "epochs", "1:1e9:1e6:log")):
            add(name, [axis, 0, spec], f"parse_axis('{axis}', '{spec}')")
    return out


# ==================================================================== running a harness on a seed
def _recorded(module: Any, data_or_steer: Any) -> tuple[list[str], str]:
    """The calls the harness makes on one input (a Steer, or bytes for the real Draw), and its outcome."""
    import _contract

    calls: list[str] = []
    real = module.attempt

    def recording(fn: Any, *args: Any, **kwargs: Any) -> Any:
        shown = {k: v for k, v in kwargs.items() if k not in ("names", "allow", "raw_type_errors")}
        calls.append(_contract.describe(fn, args, shown))
        return real(fn, *args, **kwargs)

    module.attempt = recording
    draw = module.Draw
    if isinstance(data_or_steer, Steer):
        module.Draw = lambda data: data_or_steer
    try:
        module.test_one_input(b"" if isinstance(data_or_steer, Steer) else data_or_steer)
        outcome = "ok"
    except AssertionError as exc:                 # _contract.Finding
        outcome = f"finding: {exc}"
    finally:
        module.attempt, module.Draw = real, draw
    return calls, outcome


def run_harness(harness: str, write: bool) -> int:
    """Build (or, without ``write``, check) the seeds of one harness in this process."""
    import importlib

    module = importlib.import_module(f"fuzz_{harness}")
    bad = 0
    for seed in seeds(harness):
        steer = Steer(seed.script)
        t0 = time.process_time()
        calls, outcome = _recorded(module, steer)
        data = steer.enc.data()
        path = CORPUS / harness / f"{PREFIX}{seed.name}"
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        elif not path.is_file() or path.read_bytes() != data:
            print(f"  {harness}/{path.name}: missing or not what the script encodes (run fuzz/seeds.py)")
            bad += 1
            continue
        replay, outcome2 = _recorded(module, data)
        cpu = time.process_time() - t0
        problems = []
        if steer.script:
            problems.append(f"{len(steer.script)} script values left over (the harness drew fewer)")
        if replay != calls:
            first = next((i for i, (a, b) in enumerate(zip(calls, replay)) if a != b), min(len(calls), len(replay)))
            problems.append(f"the replay differs from the steered run at call {first}: "
                            f"{(calls[first:first + 1] or ['-'])[0][:200]} vs {(replay[first:first + 1] or ['-'])[0][:200]}")
        if not any(seed.expect in c for c in calls):
            problems.append(f"no call contains {seed.expect!r}: {[c[:160] for c in calls]}")
        if outcome != "ok" or outcome2 != "ok":
            problems.append(f"the harness reports: {outcome if outcome != 'ok' else outcome2}"[:400])
        status = "FAIL" if problems else "ok"
        print(f"  {harness}/{path.name}: {status} ({len(data)} bytes, {len(calls)} calls, {cpu:.2f} s CPU)"
              + "".join(f"\n      {p}" for p in problems), flush=True)
        bad += bool(problems)
    return bad


def main(argv: list[str] | None = None) -> int:
    from run import HARNESSES

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="check the committed entries, write nothing")
    ap.add_argument("--only", choices=HARNESSES, action="append", help="this harness only (repeatable)")
    ap.add_argument("--harness", choices=HARNESSES, help=argparse.SUPPRESS)   # one harness, in this process
    args = ap.parse_args(argv)
    if args.harness:
        return 1 if run_harness(args.harness, write=not args.check) else 0
    failed = 0
    for h in args.only or HARNESSES:
        # each harness instruments dpbounds when imported: one process per harness
        cmd = [sys.executable, str(Path(__file__).resolve()), "--harness", h] + (["--check"] if args.check else [])
        failed += subprocess.run(cmd).returncode != 0
    print(f"seed corpus entries: {'checked' if args.check else 'written'}; "
          f"{failed} harness(es) with problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
