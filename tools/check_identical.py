"""Check that a refactoring changed no number: evaluate the public API on hard points, bit for bit.

    PYTHONPATH=<tree>/src python tools/check_identical.py record OUT.json   # evaluate and store
    python tools/check_identical.py compare BEFORE.json AFTER.json          # exit 1 on any difference

Run ``record`` once against a build of the commit before the change (``git archive`` it into a
scratch directory and build it in place there) and once against the change, then ``compare``.
Every case is a call of a public function -- the raw ufuncs of ``dpbounds.ufuncs`` on a grid of
hard values per declared constraint (edges, their neighbouring doubles, subnormals, huge values,
inf, NaN and values outside the domain), the validated functions at scalars of every Python and
numpy number type and at arrays, and short calls of the composition, RDP, outer, accountant,
calibration, planner, sampling and curve APIs.  What is stored per case: the value with every
float as its bit pattern (arrays as dtype, shape and bytes), the Python type of the result, or
the exception's type and message; so a changed message, a float that became a numpy scalar and a
one-ulp change are all differences.  The script uses only public names, so it runs on both sides
of a move.  It takes about a minute.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import struct
import sys
import warnings
from typing import Any, Callable

import numpy as np

# hard values, each with the constraints it is inside of (the grid of an argument keeps the
# values inside its constraint and a few outside it)
TINY = 5e-324
HARD = sorted({
    -math.inf, -1e300, -40.0, -1.0, -1e-300, -0.0, 0.0, TINY, 1e-300, 1e-160, 1e-15, 1e-9, 1e-5, 1e-3,
    0.01, 0.02, 0.029, 0.03, math.nextafter(0.03, 1.0), 0.0375, 0.05, 0.07, 0.1, 0.3, 0.422, 0.5,
    math.nextafter(0.5, 0.0), 0.7, 0.9, math.nextafter(1.0, 0.0), 1.0, math.nextafter(1.0, 2.0), 1.5, 2.0, 2.5, 3.0,
    4.0, 6.0, 10.0, 40.0, 100.0, 1000.0, 1233.0, 1e4, 1140369.0, 1e6, 1e6 + 1, 1e15, 2.0 ** 53, 1e150, 1e160,
    1e300, math.inf}) + [math.nan]


def _enc_float(x: float) -> str:
    return struct.pack("<d", x).hex()


def encode(v: Any, depth: int = 0) -> Any:
    """A JSON value holding ``v`` exactly (floats as bit patterns, arrays as dtype/shape/bytes)."""
    if depth > 6:
        return ["<deep>", type(v).__name__]
    if v is None or isinstance(v, (bool, str)):
        return [type(v).__name__, v]
    if isinstance(v, int):
        return ["int", str(v)]
    if isinstance(v, float):
        return [type(v).__name__, _enc_float(float(v))]
    if isinstance(v, np.generic):
        return ["np." + type(v).__name__, np.asarray(v).tobytes().hex()]
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "O":
            return ["ndarray-O", list(v.shape), [encode(e, depth + 1) for e in v.ravel().tolist()]]
        if v.dtype.kind in "US":
            return ["ndarray-" + v.dtype.str, list(v.shape), v.ravel().tolist()]
        return ["ndarray", v.dtype.str, list(v.shape), np.ascontiguousarray(v).tobytes().hex()]
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return [type(v).__name__, {f: encode(getattr(v, f), depth + 1) for f in v._fields}]
    if isinstance(v, (tuple, list)):
        return [type(v).__name__, [encode(e, depth + 1) for e in v]]
    if isinstance(v, dict):
        return ["dict", {str(k): encode(e, depth + 1) for k, e in v.items()}]
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return [type(v).__name__, {f.name: encode(getattr(v, f.name), depth + 1) for f in dataclasses.fields(v)}]
    if hasattr(v, "__dict__"):
        return [type(v).__name__, {k: encode(e, depth + 1) for k, e in sorted(vars(v).items())
                                   if not k.startswith("_")}]
    return [type(v).__name__, repr(v)]


def run(f: Callable[[], Any]) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with np.errstate(all="ignore"):
                out = ["ok", encode(f())]
        except Exception as exc:  # noqa: BLE001 - the exception is the recorded outcome
            out = ["raise", type(exc).__name__, str(exc)]
    out.append(sorted({f"{type(w.message).__name__}: {w.message}" for w in caught}))
    return out


# ------------------------------------------------------------------------------------ cases
def _grid(constraint: Any) -> list[float]:
    inside = [x for x in HARD if bool(constraint.holds(np.array(x)))]
    outside = [x for x in HARD if not bool(constraint.holds(np.array(x)))]
    # all the inside values, and outside ones spread over the list (NaN always)
    pick = outside[:: max(1, len(outside) // 4)] + [math.nan]
    return inside + [x for x in dict.fromkeys(pick)]


def _product(grids: list[list[float]], limit: int, seed: int) -> list[np.ndarray]:
    """The Cartesian product of the grids, or ``limit`` seeded points of it (always the same ones)."""
    n = math.prod(len(g) for g in grids)
    if n <= limit:
        mesh = np.meshgrid(*[np.array(g) for g in grids], indexing="ij")
        return [m.ravel() for m in mesh]
    rng = np.random.default_rng(seed)
    return [np.array(g)[rng.integers(0, len(g), limit)] for g in grids]


# slow kernels at some hard points: smaller grids (their cost grows with alpha / sigma^2 or M)
_LIMIT = {"rdp_poisson_quad_log": 600, "rdp_poisson_gaussian_exact": 600, "rdp_poisson_gaussian_compat": 600,
          "rdp_poisson_negseries_log": 600, "tradeoff_clt": 3000, "tradeoff_clt_truncated": 3000,
          "tradeoff_clt_slope": 3000, "tradeoff_edgeworth": 3000, "edgeworth_status": 3000}


def ufunc_cases(cases: dict[str, Callable[[], Any]]) -> None:
    from dpbounds import ufuncs
    from dpbounds._ufunc_table import UFUNCS  # the declaration table (a private module, on both sides)

    for k, u in enumerate(UFUNCS):
        f = getattr(ufuncs, u.name)
        cols = _product([_grid(a.constraint) for a in u.args], _LIMIT.get(u.name, 20000), seed=k)
        if u.name.startswith("rdp_poisson"):
            # the quadrature's cost grows like alpha / sigma^2: keep the fractional orders cheap
            a, s = cols[0], cols[1]
            cols[0] = np.where((a > 40) & (a != np.floor(a)), 2.5, a)
            cols[1] = np.where((s < 0.3) & np.isfinite(s), 0.3, s)
        cases[f"ufunc {u.name}"] = (lambda f=f, cols=cols: f(*cols))
    for name in ("BERRY_ESSEEN_CONSTANT", "ROUNDS_MAX", "STATUS_BITS"):
        cases[f"ufuncs.{name}"] = (lambda name=name: getattr(ufuncs, name))


_SCALARS: list[tuple[str, Callable[[float], Any]]] = [
    ("float", float), ("int", lambda x: int(x) if math.isfinite(x) and x == int(x) else float(x)),
    ("np.float64", np.float64), ("np.float32", np.float32),
    ("np.int64", lambda x: np.int64(x) if math.isfinite(x) and x == int(x) and abs(x) < 2 ** 62 else np.float64(x)),
    ("0-d", lambda x: np.array(x)), ("list", lambda x: [x]),
]
class _Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


_ODD = [True, None, "1.0", 1 + 0j, 2 ** 70, -(2 ** 70), np.bool_(True), [1.0, 2.0], [[1.0], [2.0]], np.zeros(0),
        np.zeros((0, 3)), np.array([1.0, np.nan]), _Opaque()]


def theorem31_cases(cases: dict[str, Callable[[], Any]]) -> None:
    import dpbounds as d

    sig = [0.05, 0.5, 0.61, 0.8, 1.0, 2.0, 5.0, 1e4, 1e150, 1e200]
    rnd = [1.0, 2.0, 3.0, 4.0, 300.0, 1233.0, 1e4, 1140369.0, 1e6, 1e15, 2.0 ** 53, 2.5]
    dlt = [1e-300, 1e-12, 1e-5, 0.01, 0.3, 0.49, 0.5, 0.9999]
    for coef in ("exact", "simplified"):
        for s in sig + [-1.0, 0.0, math.inf, math.nan]:
            for m in rnd + [-3.0, math.inf, math.nan]:
                cases[f"delta_bound {coef} {s!r} {m!r}"] = lambda s=s, m=m, c=coef: d.delta_bound(s, m, c)
                cases[f"delta_bound raise {coef} {s!r} {m!r}"] = (
                    lambda s=s, m=m, c=coef: d.delta_bound(s, m, c, on_invalid="raise"))
                cases[f"min_dataset_size {s!r} {m!r}"] = lambda s=s, m=m: d.min_dataset_size(s, m)
            for dd in dlt + [0.0, 1.0, -0.1, math.nan]:
                cases[f"rounds_closed_form {coef} {s!r} {dd!r}"] = lambda s=s, dd=dd, c=coef: d.rounds_closed_form(s, dd, c)
                for vat in ("delta_min", "target"):
                    for e in (1, 2, 10, 1.5, 0):
                        cases[f"rounds_required {coef} {vat} {s!r} {dd!r} {e!r}"] = (
                            lambda s=s, dd=dd, c=coef, v=vat, e=e: d.rounds_required(s, dd, c, v, epochs=e))
    # the scalar fast paths against every number type and odd objects
    for tname, conv in _SCALARS:
        for s in (0.5, 1.0, 3.0):
            for m in (3.0, 1e6, 2.0, 1.5):
                cases[f"delta_bound type {tname} {s} {m}"] = lambda s=s, m=m, conv=conv: d.delta_bound(conv(s), conv(m))
                cases[f"delta_bound type2 {tname} {s} {m}"] = lambda s=s, m=m, conv=conv: d.delta_bound(s, conv(m))
                cases[f"min_dataset_size type {tname} {s} {m}"] = (
                    lambda s=s, m=m, conv=conv: d.min_dataset_size(conv(s), conv(m), conv(1.0), conv(0.1)))
            for dd in (0.01, 1e-300, 0.5):
                cases[f"rounds_required type {tname} {s} {dd}"] = (
                    lambda s=s, dd=dd, conv=conv: d.rounds_required(conv(s), conv(dd), epochs=conv(3.0)))
                cases[f"rounds_closed_form type {tname} {s} {dd}"] = (
                    lambda s=s, dd=dd, conv=conv: d.rounds_closed_form(conv(s), conv(dd)))
    for k, odd in enumerate(_ODD):
        cases[f"delta_bound odd sigma {k}"] = lambda o=odd: d.delta_bound(o, 1e6)
        cases[f"delta_bound odd rounds {k}"] = lambda o=odd: d.delta_bound(1.0, o)
        cases[f"rounds_required odd sigma {k}"] = lambda o=odd: d.rounds_required(o, 0.01)
        cases[f"rounds_required odd delta {k}"] = lambda o=odd: d.rounds_required(1.0, o)
        cases[f"rounds_required odd epochs {k}"] = lambda o=odd: d.rounds_required(1.0, 0.01, epochs=o)
        cases[f"rounds_closed_form odd {k}"] = lambda o=odd: d.rounds_closed_form(o, 0.01)
        cases[f"min_dataset_size odd {k}"] = lambda o=odd: d.min_dataset_size(1.0, 100, o)
    for bad in ("bogus", None, "EXACT", 3):
        cases[f"delta_bound coefficient {bad!r}"] = lambda b=bad: d.delta_bound(1.0, 1e6, b)
        cases[f"delta_bound coefficient invalid point {bad!r}"] = lambda b=bad: d.delta_bound(1.0, 300.0, b)
        cases[f"delta_bound on_invalid {bad!r}"] = lambda b=bad: d.delta_bound(1.0, 1e6, on_invalid=b)
        cases[f"delta_bound on_invalid invalid point {bad!r}"] = lambda b=bad: d.delta_bound(1.0, 300.0, on_invalid=b)
        cases[f"delta_bound on_invalid array {bad!r}"] = lambda b=bad: d.delta_bound([1.0], [300.0], on_invalid=b)
        cases[f"rounds_required validity_at {bad!r}"] = lambda b=bad: d.rounds_required(1.0, 0.01, validity_at=b)
        cases[f"rounds_required coefficient {bad!r}"] = lambda b=bad: d.rounds_required(1.0, 0.01, b)
        cases[f"rounds_closed_form coefficient {bad!r}"] = lambda b=bad: d.rounds_closed_form(1.0, 0.01, b)
    # arrays: broadcasting, empty, non-broadcasting, invalid points with both policies
    S = np.array([[0.5], [1.0], [2.0], [1e150]])
    M = np.array([3.0, 300.0, 1e4, 1e6, 1e15])
    D = np.array([1e-12, 0.01, 0.4])
    for coef in ("exact", "simplified"):
        cases[f"delta_bound array {coef}"] = lambda c=coef: d.delta_bound(S, M, c)
        cases[f"delta_bound array raise {coef}"] = lambda c=coef: d.delta_bound(S, M, c, on_invalid="raise")
        cases[f"delta_bound array valid raise {coef}"] = lambda c=coef: d.delta_bound([2.0, 3.0], 1e6, c, on_invalid="raise")
        cases[f"rounds_required array {coef}"] = lambda c=coef: d.rounds_required(S, D, c)
        cases[f"rounds_required array target {coef}"] = lambda c=coef: d.rounds_required(S, D, c, "target")
        cases[f"rounds_required array epochs {coef}"] = lambda c=coef: d.rounds_required(S, D, c, epochs=[[1], [2], [7], [1]])
        cases[f"rounds_closed_form array {coef}"] = lambda c=coef: d.rounds_closed_form(S, D, c)
    cases["min_dataset_size array"] = lambda: d.min_dataset_size(S, M, [1.0, 2.0, 0.5, 1.0, 3.0], 0.1)
    cases["rounds_required underflow"] = lambda: d.rounds_required(1.0, TINY, epochs=2)
    cases["rounds_required underflow array"] = lambda: d.rounds_required([1.0, 2.0], TINY, epochs=2)
    cases["delta_bound empty nan"] = lambda: d.delta_bound(np.zeros(0), math.nan)
    cases["delta_bound empty"] = lambda: d.delta_bound(np.zeros(0), 1e6)
    cases["delta_bound no broadcast"] = lambda: d.delta_bound([1.0, 2.0], [3.0, 4.0, 5.0])
    cases["delta_bound no broadcast bad"] = lambda: d.delta_bound([1.0, -2.0], [3.0, 4.0, 5.0])
    cases["rounds_required no broadcast"] = lambda: d.rounds_required([1.0, 2.0], [0.1, 0.2, 0.3])
    cases["rounds_required kw"] = lambda: d.rounds_required(sigma=1.0, delta=0.01, coefficient="simplified")
    cases["delta_bound kw"] = lambda: d.delta_bound(sigma=1.0, rounds=1140369, coefficient="simplified")
    cases["delta_bound too many"] = lambda: d.delta_bound(1.0, 1e6, "exact", "raise")  # type: ignore[misc]
    cases["rounds_required too many"] = lambda: d.rounds_required(1.0, 0.01, "exact", "target", 2)  # type: ignore[misc]
    cases["delta_bound unknown kw"] = lambda: d.delta_bound(1.0, 1e6, bogus=1)  # type: ignore[call-arg]
    for s in (0.5, 1.0, 2.0):
        for m in (2.0, 300.0, 1e6):
            cases[f"theorem31 {s} {m}"] = lambda s=s, m=m: d.theorem31(s, m)
            cases[f"theorem31 delta {s} {m}"] = lambda s=s, m=m: d.theorem31(s, m, 0.01, "simplified", "target")
            cases[f"delta_bound_terms {s} {m}"] = lambda s=s, m=m: d.delta_bound_terms(s, m)
        cases[f"lognormal_moments {s}"] = lambda s=s: d.lognormal_moments(s)
    cases["BERRY_ESSEEN_CONSTANT"] = lambda: d.BERRY_ESSEEN_CONSTANT


def api_cases(cases: dict[str, Callable[[], Any]]) -> None:
    import dpbounds as d
    from dpbounds import composition as C
    from dpbounds import outer as O
    from dpbounds import rdp, tradeoff
    from dpbounds._ufunc_table import UFUNCS

    # every validated wrapper the table names, at its grid (one array call and scalar calls)
    done = set()
    for u in UFUNCS:
        if not u.python or u.python in done or u.python.split(".")[-1] in (
                "delta_bound", "rounds_required", "rounds_closed_form", "min_dataset_size"):
            continue
        done.add(u.python)
        mod, name = u.python.rsplit(".", 1)
        f = getattr(__import__(mod, fromlist=[name]), name)
        grids = [_grid(a.constraint) for a in u.args]
        pts = _product(grids, 400, seed=len(done))
        names = [a.name for a in u.args]
        extra = dict(u.choices)
        kw: dict[str, Any] = {}
        if "truncated" in extra:
            kw["truncated"] = extra["truncated"] == "true"
        for i in range(pts[0].size):
            args = {n: float(p[i]) for n, p in zip(names, pts)}
            if isinstance(f, np.ufunc):   # dpbounds.ndtr & co. are the ufuncs themselves (positional only)
                cases[f"{u.python} {i}"] = lambda f=f, args=args: f(*args.values())
            else:
                cases[f"{u.python} {i}"] = lambda f=f, args=args, kw=kw: f(**args, **kw)
        inside = [np.array([x for x in g if x == x][:6]) for g in grids]
        arrays = {n: x.reshape((-1,) + (1,) * (len(inside) - 1 - k)) for k, (n, x) in enumerate(zip(names, inside))}
        if isinstance(f, np.ufunc):
            cases[f"{u.python} array"] = lambda f=f, arrays=arrays: f(*arrays.values())
        else:
            cases[f"{u.python} array"] = lambda f=f, arrays=arrays, kw=kw: f(**arrays, **kw)
    for fn in ("gaussian_compose", "f0delta_compose", "sep_gaussian"):
        g = getattr(tradeoff, fn)
        for x in (0.0, 0.5, 1.0, 3.0, -1.0, math.inf, math.nan):
            for e in (1.0, 2.0, 10.0, 2.5, 0.0):
                cases[f"{fn} {x} {e}"] = lambda g=g, x=x, e=e: g(x, e)
    for conv in ("euclidean", "text", "bogus"):
        cases[f"sep gaussian {conv}"] = lambda conv=conv: d.sep(lambda a: d.gaussian_tradeoff(a, 1.0), conv)
        cases[f"sep curve {conv}"] = lambda conv=conv: d.sep(d.TradeoffCurve.gaussian(1.0, 201), conv)
    for s in (0.01, 0.029, 0.03, 0.3, 1.0):
        cases[f"tradeoff_clt refusal {s}"] = lambda s=s: d.tradeoff_clt([0.1, 0.5], [1.0, s], 3.0, truncated=True)
        cases[f"tradeoff_clt_slope refusal {s}"] = lambda s=s: d.tradeoff_clt_slope(0.5, s, 3.0)
        cases[f"tradeoff_clt bad a {s}"] = lambda s=s: d.tradeoff_clt(2.0, s, 3.0)
    cases["tradeoff_lower_bound simplified"] = lambda: d.tradeoff_lower_bound([0.1, 0.5], 1.0, 1e6, "simplified")
    cases["tradeoff_lower_bound bad"] = lambda: d.tradeoff_lower_bound(0.1, 1.0, 1e6, "bogus")
    for name in ("tradeoff", "composition", "rdp"):
        mod = getattr(d, name)
        cases[f"{name} CLT_SIGMA_MIN"] = lambda mod=mod: getattr(mod, "CLT_SIGMA_MIN", "<absent>")

    # composition
    E = np.array([0.0, 1e-8, 0.01, 0.5, 1.0, 5.0, 700.0, 701.0, 1e4, math.inf])
    G = np.array([[0.0], [1e-9], [0.01], [0.5], [1.0]])
    cases["subsample"] = lambda: C.subsample(E, 1e-6, G)
    cases["subsample scalar"] = lambda: C.subsample(1.0, 1e-6, 0.01)
    cases["naive"] = lambda: C.naive(E[:-1], 1e-7, [[1], [10], [1000]])
    cases["advanced"] = lambda: C.advanced(E[:-1], 1e-8, [[1], [10], [1000]], 1e-6)
    for e in (0.0, 1e-3, 0.1, 1.0, 3.0):
        for k in (1, 2, 7, 100, 5000):
            for x in (0.0, 0.5, 2.0, math.inf):
                cases[f"optimal_delta {e} {k} {x}"] = lambda e=e, k=k, x=x: C.optimal_delta(e, 1e-9, k, x)
            for t in (0.0, 1e-9, 1e-5, 0.5, 1.0):
                cases[f"optimal {e} {k} {t}"] = lambda e=e, k=k, t=t: C.optimal(e, 1e-10, k, t)
    for m in ("advanced", "naive", "optimal"):
        for prof in ("exact", "rdp"):
            cases[f"subsampled_epsilon sigma {m} {prof}"] = lambda m=m, prof=prof: C.subsampled_epsilon(
                [1, 10, 1000], gamma=1e-3, sigma=5.0, method=m, gaussian_profile=prof, full_output=True)
        cases[f"subsampled_epsilon pure {m}"] = lambda m=m: C.subsampled_epsilon(
            [[1, 100]], gamma=0.01, pure_epsilon=0.5, method=m, full_output=True)
    cases["subsampled_epsilon both"] = lambda: C.subsampled_epsilon(3, gamma=0.1, sigma=1.0, pure_epsilon=1.0)
    cases["subsampled_epsilon bad"] = lambda: C.subsampled_epsilon(3, gamma=0.1, sigma=1.0, method="x")
    cases["optimal too large"] = lambda: C.optimal(0.001, 0.0, 10 ** 15, 1e-5)

    # outer
    S = np.array([0.05, 0.5, 0.61, 1.0, 2.0, 1e150])
    M = np.array([2.0, 3.0, 300.0, 1e6, 1e15])
    for coef in ("exact", "simplified"):
        cases[f"delta_bound_outer {coef}"] = lambda c=coef: O.delta_bound_outer(S, M, c)
        cases[f"delta_bound_outer status {coef}"] = lambda c=coef: O.delta_bound_outer(S, M, c, return_status=True)
        cases[f"rounds_required_outer {coef}"] = lambda c=coef: O.rounds_required_outer(S, [1e-9, 0.01, 0.4], c)
        cases[f"rounds_required_outer target {coef}"] = lambda c=coef: O.rounds_required_outer(
            S, [1e-9, 0.01, 0.4], c, validity_at="target")
    cases["min_dataset_size_outer"] = lambda: O.min_dataset_size_outer(S, [1.0, 2.5, 1e6], 2.0, 0.1)

    # RDP
    A = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 10.0, 32.0, 100.5, 256.0, 1e3, math.inf])
    for b in ("improved", "theorem9", "lower", "bogus"):
        cases[f"subsampled_gaussian_wor {b}"] = lambda b=b: rdp.subsampled_gaussian_wor(A, 2.0, [[0.001], [0.1], [1.0]], b)
        cases[f"subsampled_gaussian_wor small sigma {b}"] = lambda b=b: rdp.subsampled_gaussian_wor(A, 0.3, 0.01, b)
        cases[f"SubsampledGaussianWOR {b}"] = lambda b=b: rdp.SubsampledGaussianWOR(1.5, 0.01, b).rdp(A)
    for b in ("theorem9", "improved", "lower", "bogus"):
        cases[f"subsampled_wor laplace {b}"] = lambda b=b: rdp.subsampled_wor(A[:-2], rdp.Laplace(2.0), 0.01, b)
        cases[f"subsampled_wor rr int {b}"] = lambda b=b: rdp.subsampled_wor(
            np.arange(2.0, 60.0), rdp.RandomizedResponse(0.7), 1e-3, b)
        cases[f"subsampled_wor table {b}"] = lambda b=b: rdp.subsampled_wor([2.0, 3.0, 4.5], [0, 0, 0.1, 0.2, 0.4, 0.7],
                                                                            0.1, b)
        cases[f"SubsampledWOR {b}"] = lambda b=b: rdp.SubsampledWOR(rdp.Laplace(1.0), 0.05, b).rdp(A[:-2])
    for mode in ("exact", "compat"):
        cases[f"poisson_gaussian {mode}"] = lambda mode=mode: rdp.poisson_gaussian(A, 1.1, [[1e-9], [0.01], [0.5], [1.0]], mode)
    cases["poisson_gaussian costly"] = lambda: rdp.poisson_gaussian(20.5, 0.001, 0.01)
    cases["poisson_gaussian alpha max"] = lambda: rdp.poisson_gaussian(2e6, 1.0, 0.01)
    cases["subsampled_gaussian_wor alpha max"] = lambda: rdp.subsampled_gaussian_wor(2e6, 1.0, 0.01)
    cases["rdp gaussian"] = lambda: rdp.gaussian(A, 0.7)
    cases["rdp laplace"] = lambda: rdp.laplace(A, 0.7)
    cases["rdp randomized_response"] = lambda: rdp.randomized_response(A, 0.7)
    curve = rdp.poisson_gaussian(np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]), 1.0, 0.01) * 1000
    for conv in ("improved", "classic"):
        cases[f"rdp epsilon {conv}"] = lambda conv=conv: rdp.epsilon(curve, [1.5, 2, 4, 8, 16, 32, 64], [1e-5, 1e-9], conv,
                                                                     return_order=True)
        cases[f"rdp delta {conv}"] = lambda conv=conv: rdp.delta(curve, [1.5, 2, 4, 8, 16, 32, 64], [0.5, 2.0], conv,
                                                                 return_order=True)
    def _acc() -> Any:
        acc = rdp.RDPAccountant()
        acc.compose(rdp.PoissonGaussian(1.0, 0.01), 1000)
        acc.compose(rdp.SubsampledGaussianWOR(2.0, 0.01), 10)
        return acc.get_epsilon(1e-5), acc.get_delta(1.0)
    cases["RDPAccountant"] = _acc
    cases["coordinatewise_limit"] = lambda: rdp.coordinatewise_limit([2.0, 8.0, 32.0], 1.0, 0.01, 1.0)
    cases["coordinatewise_poisson"] = lambda: rdp.coordinatewise_poisson([2.0, 8.0], 1.0, 0.01, 1.0, 0.5)
    cases["twice_sampling"] = lambda: rdp.twice_sampling([2.0, 8.0], 1.0, 0.1, 0.1, 1.0, 0.5)
    cases["poisson_general"] = lambda: rdp.poisson_general([2.0, 3.0, 8.0], rdp.Laplace(1.0).rdp, 0.01)
    cases["hybrid_noise"] = lambda: rdp.hybrid_noise([1.0, 0.5, 0.25], [1, 2, 3], 0.5)
    cases["hypercube_noise"] = lambda: rdp.hypercube_noise([1.0, 0.5, 0.25], 0.5)

    # accountants, calibration, planner, curves, samplers: a few cheap calls each
    cases["RandomAllocationAccountant"] = lambda: d.RandomAllocationAccountant(2.0, 1000, 1).get_epsilon(1e-5)
    cases["PoissonAccountant"] = lambda: d.PoissonAccountant(2.0, 0.01, 100).get_epsilon(1e-5)
    cases["tradeoff_exact"] = lambda: d.tradeoff_exact([0.01, 0.1, 0.5], 2.0, 1000)
    cases["exact_max_gap"] = lambda: d.exact_max_gap(2.0, 1000)
    cases["gap_ratio"] = lambda: d.gap_ratio(2.0, 1e6)
    cases["calibrate_noise"] = lambda: d.calibrate_noise(2.0, 1e-5, dataset_size=10000, batch_size=100, epochs=1,
                                                         accountant="rdp", sampling="poisson")
    cases["plan"] = lambda: d.plan(100000, delta=0.05, epochs=1)
    cases["TradeoffCurve"] = lambda: (lambda c: (c.max_gap(), c.mu(), c.delta([0.0, 1.0]), c.epsilon([1e-5])))(
        d.TradeoffCurve.gaussian(1.0, 501))
    cases["random_allocation"] = lambda: [b.copy() for b in d.sampling.random_allocation(20, 4, rng=7, epochs=2)]
    cases["poisson sampler"] = lambda: [b.copy() for b in d.sampling.poisson(20, 0.3, rng=7, steps=4)]


def record(path: str) -> None:
    import dpbounds

    cases: dict[str, Callable[[], Any]] = {}
    ufunc_cases(cases)
    theorem31_cases(cases)
    api_cases(cases)
    out = {"dpbounds": dpbounds.__file__, "cases": {name: run(f) for name, f in cases.items()}}
    with open(path, "w") as fh:
        json.dump(out, fh)
    print(f"{len(cases)} cases from {dpbounds.__file__} -> {path}")


def compare(before: str, after: str) -> int:
    with open(before) as fh:
        a = json.load(fh)["cases"]
    with open(after) as fh:
        b = json.load(fh)["cases"]
    diff = [k for k in a if k in b and a[k] != b[k]]
    only = sorted(set(a) ^ set(b))
    for k in diff[:50]:
        print(f"DIFFERENT {k}:\n  before {json.dumps(a[k])[:400]}\n  after  {json.dumps(b[k])[:400]}")
    for k in only[:20]:
        print(f"ONLY IN {'before' if k in a else 'after'}: {k}")
    print(f"{len(a)} cases before, {len(b)} after: {len(diff)} different, {len(only)} in one only")
    return 1 if diff or only else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="evaluate every case with the importable dpbounds and store the results")
    r.add_argument("out")
    c = sub.add_parser("compare", help="compare two records bit for bit (exit 1 on a difference)")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args(argv)
    if args.cmd == "record":
        record(args.out)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
