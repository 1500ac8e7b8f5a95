"""Fuzz the sweep engine's axis parsing: ``dpbounds.sweeps._axes.parse_axis(name, spec)``.

The contract checked (the ``parse_axis`` docstring): for any ``spec`` text, ``parse_axis`` returns
the axis values -- a non-empty 1-d array of float64 numbers, never NaN (``inf`` is allowed when
listed explicitly: the quantity's own checks then mark those points invalid) -- or raises
DPBoundsError whose message names the axis (``name``); nothing else, and within the per-call
time limit (so a spec such as ``1:1e12:1e12`` must be refused, not allocated).  Without the
sweep engine (an older dpbounds) the harness says so and exits 0.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _main import fuzz, instrument_dpbounds  # noqa: E402

MODULE = "dpbounds.sweeps._axes"


def available() -> bool:
    # Looked up as a file, not with find_spec(MODULE): that imports dpbounds and dpbounds.sweeps
    # (which imports _axes) before instrument_dpbounds(), and the fuzzer then gets no coverage
    # feedback from parse_axis at all.
    spec = importlib.util.find_spec("dpbounds")   # a top-level lookup imports nothing
    return spec is not None and any((Path(p) / "sweeps" / "_axes.py").is_file()
                                    for p in spec.submodule_search_locations or ())


if __name__ == "__main__" and not available():
    print(f"SKIP: {MODULE} is not in this dpbounds (the sweep engine has not landed): nothing to fuzz")
    sys.exit(0)

instrument_dpbounds()

import numpy as np  # noqa: E402
from _contract import attempt, check  # noqa: E402
from _inputs import HARD_DOUBLES, Draw  # noqa: E402

_NAMES = ("sigma", "rounds", "delta", "epsilon", "epochs", "dataset_size", "batch_size", "sample_rate")
_PIECES = (":", ",", "..", "log:", "lin:", "geom:", "linspace(", "logspace(", ")", "[", "]", " ", "x", "e", "-",
           "*", "/", "=", "step", "num", "1", "2", "10", "1e-5", "1e12", "0", "-1", "nan", "inf", "-inf")


def _spec(d: Draw) -> str:
    k = d.int(0, 3)
    if k == 0:
        return d.text(40)
    parts = []
    for _ in range(d.int(1, 8)):
        if d.bool():
            parts.append(d.pick(_PIECES))
        else:
            v = d.double(d.pick(("unit", "sigma", "rounds", "any"))) if d.int(0, 3) else float(d.pick(HARD_DOUBLES))
            parts.append(d.pick((repr(v), f"{v:g}", str(int(v)) if np.isfinite(v) and abs(v) < 1e18 else "1")))
    return "".join(parts)


def test_one_input(data: bytes) -> None:
    from dpbounds.sweeps._axes import parse_axis

    d = Draw(data)
    name, spec = d.pick(_NAMES), _spec(d)
    ok, axis = attempt(parse_axis, name, spec, names=(name, "spec"))
    if not ok:
        return
    a = np.asarray(axis)
    call = f"parse_axis({name!r}, {spec!r})"
    check(a.ndim == 1 and a.size >= 1, f"not a non-empty 1-d axis: shape {a.shape}", call)
    check(a.dtype.kind in "fiu", f"dtype {a.dtype}", call)
    check(not np.isnan(a.astype(np.float64)).any(), f"NaN values {a[:5]}", call)


if __name__ == "__main__":
    fuzz(test_one_input)
