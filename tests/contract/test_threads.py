"""Eight threads calling the same public functions at once get bit-identical answers to serial calls.

The ufunc loops and the accountant kernels release the GIL, and the accountant keeps one shared
cache of single-epoch laws: nothing may leak between concurrent calls.  Every call here starts
behind a barrier so the eight calls overlap, and results are compared bit for bit (dtype, shape
and bytes, NaN payloads and signed zeros included) with the same calls made one after another.

Coverage is driven by the declaration table (every ufunc, and every validated function it names)
plus an explicit list of the other public functions and classes; a test fails if a public callable
of the package is in neither, so a new public function needs a case here.
"""
from __future__ import annotations

import dataclasses
import importlib
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np
import pytest

import dpbounds
import dpbounds.rdp as R
from dpbounds import accountant as A
from dpbounds import composition as C
from dpbounds import outer as O
from dpbounds import sampling, ufuncs
from dpbounds._ufunc_table import UFUNCS, UfuncSpec

THREADS = 8


def _bits(x: Any) -> Any:
    """A hashable, bit-exact fingerprint of a result (arrays, scalars, containers, result objects)."""
    if x is None or isinstance(x, (str, bool)):
        return x
    if isinstance(x, (int, float, complex, np.ndarray, np.generic)):
        a = np.asarray(x)
        return (a.dtype.str, a.shape, a.tobytes())
    if isinstance(x, dict):
        return tuple((k, _bits(v)) for k, v in sorted(x.items()))
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(_bits(v) for v in x)
    if dataclasses.is_dataclass(x):
        return (type(x).__name__,) + tuple(_bits(getattr(x, f.name)) for f in dataclasses.fields(x))
    if hasattr(x, "__dict__"):
        return (type(x).__name__,) + _bits(vars(x))
    raise TypeError(f"no fingerprint for {type(x).__name__}")


def _race(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run ``calls`` on len(calls) threads released together by a barrier; their results in order."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], Any]) -> Any:
        barrier.wait()
        return call()

    with ThreadPoolExecutor(max_workers=len(calls)) as ex:
        return list(ex.map(run, calls))


def _check_concurrent(calls: list[Callable[[], Any]]) -> list[Any]:
    """Serial results, then the same calls raced twice from an empty accountant cache (so the
    threads also build the cached laws concurrently); every raced result must equal its serial one."""
    serial = [_bits(c()) for c in calls]
    for _ in range(2):
        A.clear_cache()
        raced = [_bits(r) for r in _race(calls)]
        for i, (s, r) in enumerate(zip(serial, raced)):
            assert r == s, f"call {i}: the concurrent result differs from the serial one"
    return serial


# ---------------------------------------------------------------- the declaration table
def _inputs(spec: UfuncSpec, seed: int, n: int) -> list[np.ndarray]:
    """Valid inputs around the spec's point: reals perturbed by up to 5%, counts offset by 0..19."""
    rng = np.random.default_rng(seed)
    out = []
    for arg, p in zip(spec.args, spec.point):
        if arg.constraint.name.startswith("INTEGER") or arg.name == "rounds":  # the validated API takes whole rounds
            x = p + rng.integers(0, 20, n).astype(np.float64)
        else:
            x = p * (1.0 + 0.05 * rng.uniform(-1.0, 1.0, n))
            x = np.where(arg.constraint.holds(x), x, p)
        out.append(x)
    return out


def _seeds() -> list[int]:
    # threads 0-3 share inputs with threads 4-7: the same and different arguments at once
    return [k % 4 for k in range(THREADS)]


@pytest.mark.parametrize("spec", UFUNCS, ids=lambda s: s.name)
def test_ufunc_concurrent_matches_serial(spec):
    uf = getattr(ufuncs, spec.name)
    n = 64 if spec.group in ("rounds", "tradeoff", "rdp") else 2048  # the per-element solvers are costlier
    calls = [lambda s=s: uf(*_inputs(spec, s, n)) for s in _seeds()]
    _check_concurrent(calls)


VALIDATED_SPECS = [u for u in UFUNCS if u.python]
VALIDATED = sorted({u.python for u in VALIDATED_SPECS if u.python})


def _resolve(path: str) -> Callable[..., Any]:
    mod, _, name = path.rpartition(".")
    return getattr(importlib.import_module(mod), name)  # type: ignore[no-any-return]


@pytest.mark.parametrize("spec", VALIDATED_SPECS, ids=lambda s: s.name)
def test_validated_function_concurrent_matches_serial(spec):
    """The validated wrapper of each variant (its choices passed as keywords), on arrays and on
    Python scalars (the scalar fast paths, whose sigma-constants cache must not leak one thread's
    sigma into another's answer)."""
    assert spec.python is not None
    choices = {k: {"true": True, "false": False}.get(v, v) for k, v in spec.choices}
    fn = _resolve(spec.python)
    n = 16 if spec.group in ("rounds", "tradeoff", "rdp") else 64

    def scalars(seed: int) -> list[Any]:
        cols = _inputs(spec, seed, n)
        return [fn(*(float(c[i]) for c in cols), **choices) for i in range(n)]

    calls = [lambda s=s: fn(*_inputs(spec, s, n), **choices) for s in _seeds()]
    calls += [lambda s=s: scalars(s) for s in _seeds()]
    _check_concurrent(calls)


# ---------------------------------------------------------------- the rest of the public API
def _rdp_accountant(sigma: float, q: float, max_order: float = 1e4) -> Any:
    acc = R.RDPAccountant(max_order=max_order)
    acc.compose(R.PoissonGaussian(sigma, q), 300).compose(R.SubsampledGaussianWOR(sigma, q), 200)
    for _ in range(5):
        acc.step(noise_multiplier=sigma, sample_rate=q)
    return acc.get_epsilon_bracket(1e-5), acc.get_delta_bracket(2.0), acc.get_epsilon(1e-6, return_order=True)


def _ra_accountant(sigma: float, m: int, e: int) -> Any:
    acc = dpbounds.RandomAllocationAccountant(sigma, m, e)
    return acc.get_epsilon_bracket(1e-5), acc.get_delta_bracket(1.0), acc.tradeoff(np.array([0.1, 0.5]))


def _poisson_accountant(sigma: float, q: float) -> Any:
    acc = dpbounds.PoissonAccountant()
    for _ in range(30):
        acc.step(noise_multiplier=sigma, sample_rate=q)
    return acc.get_epsilon_bracket(1e-5), acc.get_delta_bracket(1.0)


def _samples(gen: Any) -> list[Any]:
    return [b.copy() for b in gen]


ORDERS = np.array([1.5, 2.0, 3.0, 8.0, 32.0, 256.0])
A_GRID = np.linspace(0.0, 1.0, 9)
# name -> a factory of (argument) -> call; each is raced with 4 distinct arguments, twice each
CASES: dict[str, Callable[[int], Callable[[], Any]]] = {
    "dpbounds.calibrate_noise": lambda k: lambda: dpbounds.calibrate_noise(
        1.0 + k, 1e-5, dataset_size=1000, batch_size=10, epochs=1, sampling="poisson", accountant="rdp"),
    "dpbounds.calibrate_epochs": lambda k: lambda: dpbounds.calibrate_epochs(
        2.0 + k, 1e-5, noise_multiplier=1.0, dataset_size=1000, batch_size=10, sampling="poisson", accountant="rdp"),
    "dpbounds.calibrate_batch_size": lambda k: lambda: dpbounds.calibrate_batch_size(
        2.0 + k, 1e-5, noise_multiplier=1.0, dataset_size=1000, epochs=1, sampling="poisson", accountant="rdp"),
    "dpbounds.RandomAllocationAccountant": lambda k: lambda: _ra_accountant(
        (1.0, 2.0, 1.0, 3.0)[k], (100, 100, 1000, 50)[k], (1, 1, 2, 1)[k]),
    "dpbounds.PoissonAccountant": lambda k: lambda: _poisson_accountant(1.0 + 0.5 * k, 0.01),
    "dpbounds.RandomAllocationPLD": lambda k: lambda: (
        lambda p: (p.epsilon(1e-5), p.delta(1.0)))(dpbounds.RandomAllocationPLD(1.0 + k, 100, 1 + k % 2)),
    "dpbounds.accountant.PoissonPLD": lambda k: lambda: (
        lambda p: (p.epsilon(1e-5), p.delta(1.0)))(A.PoissonPLD(1.0 + k, 0.01, 20)),
    "dpbounds.tradeoff_exact": lambda k: lambda: dpbounds.tradeoff_exact(A_GRID, 1.0 + k, 100),
    "dpbounds.exact_max_gap": lambda k: lambda: dpbounds.exact_max_gap(1.0 + k, 100, return_error=True),
    "dpbounds.gap_ratio": lambda k: lambda: dpbounds.gap_ratio(1.0 + k, 1000),
    "dpbounds.TradeoffCurve": lambda k: lambda: (
        lambda c: (c.a, c.f, c.epsilon(1e-5), c.delta(1.0)))(
            dpbounds.TradeoffCurve(A_GRID, dpbounds.gaussian_tradeoff(A_GRID, 0.5 + k))),
    "dpbounds.f0delta_compose": lambda k: lambda: dpbounds.f0delta_compose(np.array([1e-3, 1e-2]) * (1 + k), 3),
    "dpbounds.gaussian_compose": lambda k: lambda: dpbounds.gaussian_compose(np.array([0.5, 1.0]) * (1 + k), 4),
    "dpbounds.sep": lambda k: lambda: dpbounds.sep(lambda a: dpbounds.gaussian_tradeoff(a, 1.0 + k)),
    "dpbounds.sep_gaussian": lambda k: lambda: dpbounds.sep_gaussian(np.array([0.5, 1.0]) * (1 + k), 1e-5),
    "dpbounds.delta_bound_terms": lambda k: lambda: dpbounds.delta_bound_terms(1.0 + k, np.array([100.0, 1e6])),
    "dpbounds.lognormal_moments": lambda k: lambda: dpbounds.lognormal_moments(1.0 + k),
    "dpbounds.theorem31": lambda k: lambda: dpbounds.theorem31(1.0 + k, 10 ** (3 + k), 1e-3),
    "dpbounds.rdp.subsampled_gaussian_wor": lambda k: lambda: [
        R.subsampled_gaussian_wor(ORDERS, 1.0 + k, 0.01, bound=b) for b in ("theorem9", "improved", "lower")],
    "dpbounds.rdp.subsampled_wor": lambda k: lambda: (
        R.subsampled_wor(ORDERS, R.Laplace(0.5 + k), 0.01), R.subsampled_wor(ORDERS, lambda x: x / (2.0 + k), 0.01)),
    "dpbounds.rdp.epsilon": lambda k: lambda: R.epsilon(R.gaussian(ORDERS, 1.0 + k) * 100, ORDERS, 1e-5),
    "dpbounds.rdp.delta": lambda k: lambda: R.delta(R.gaussian(ORDERS, 1.0 + k) * 100, ORDERS, 1.0),
    # orders up to 1e3 here; the default 1e4 (whose delta scan takes ~1 s a call) is the slow case below
    "dpbounds.rdp.RDPAccountant": lambda k: lambda: _rdp_accountant(1.0 + 0.5 * k, 0.01, max_order=1e3),
    "dpbounds.rdp.hybrid_noise": lambda k: lambda: R.hybrid_noise([1.0, 2.0 + k], [3, 5], 0.1),
    "dpbounds.rdp.hypercube_noise": lambda k: lambda: R.hypercube_noise([1.0, 2.0 + k, 0.5], 0.1),
    "dpbounds.rdp.coordinatewise_poisson": lambda k: lambda: R.coordinatewise_poisson(ORDERS, 1.0 + k, 0.01, 1.0, 0.5),
    "dpbounds.rdp.coordinatewise_limit": lambda k: lambda: R.coordinatewise_limit(ORDERS, 1.0 + k, 0.01, 1.0),
    "dpbounds.rdp.twice_sampling": lambda k: lambda: R.twice_sampling(ORDERS, 1.0 + k, 0.01, 0.5, 1.0, 0.5),
    "dpbounds.rdp.poisson_general": lambda k: lambda: R.poisson_general(ORDERS, lambda x: x / (2.0 + k), 0.01),
    "dpbounds.sampling.random_allocation": lambda k: lambda: _samples(
        sampling.random_allocation(100, 10, np.random.default_rng(k), epochs=2)),
    "dpbounds.sampling.poisson": lambda k: lambda: _samples(sampling.poisson(100, 0.1, np.random.default_rng(k), steps=20)),
    "dpbounds.sampling.poisson_steps": lambda k: lambda: sampling.poisson_steps(1.0 + k, 25 / 2925),
    "dpbounds.sampling.random_allocation_steps": lambda k: lambda: sampling.random_allocation_steps(0.5 + k, 234),
    "dpbounds.plan": lambda k: lambda: dpbounds.plan(10**6 * (1 + k), delta=0.01, sigma=[0.8, 1.0, 1.5]),
    "dpbounds.sweep": lambda k: lambda: _swept(dpbounds.sweep(
        "delta_bound", sigma=(0.5 + 0.1 * k, 3.0, 7, "lin"), rounds=(10, 1e7, 9, "log"), progress=False)),
    "dpbounds.composition.subsample": lambda k: lambda: C.subsample(np.array([0.1, 1.0]) * (1 + k), 1e-6, 0.01),
    "dpbounds.composition.naive": lambda k: lambda: C.naive(0.1 * (1 + k), 1e-6, 100),
    "dpbounds.composition.advanced": lambda k: lambda: C.advanced(0.1 * (1 + k), 1e-6, 100, 1e-6),
    "dpbounds.composition.optimal": lambda k: lambda: C.optimal(0.01 * (1 + k), 1e-9, 5000, 1e-6),
    "dpbounds.composition.optimal_delta": lambda k: lambda: C.optimal_delta(0.01 * (1 + k), 1e-9, 5000, 0.5),
    "dpbounds.composition.subsampled_epsilon": lambda k: lambda: C.subsampled_epsilon(
        [1, 100, 10**4], gamma=1e-3, sigma=1.0 + k),
    "dpbounds.outer.delta_bound_outer": lambda k: lambda: O.delta_bound_outer(
        np.linspace(0.5 + 0.1 * k, 4, 50), np.rint(np.geomspace(3, 1e9, 60))),
    "dpbounds.outer.rounds_required_outer": lambda k: lambda: O.rounds_required_outer(
        np.linspace(0.5 + 0.1 * k, 4, 9), np.geomspace(1e-6, 0.1, 7)),
    "dpbounds.outer.min_dataset_size_outer": lambda k: lambda: O.min_dataset_size_outer(
        np.linspace(0.5 + 0.1 * k, 4, 50), np.rint(np.geomspace(1, 1e9, 60))),
}


def _swept(result: Any) -> dict[str, Any]:
    # an xarray.Dataset or a dict of arrays; the reason strings compared by value, not by pointer
    return {k: (np.asarray(result[k]).astype(str) if np.asarray(result[k]).dtype == object else np.asarray(result[k]))
            for k in result}
# the RDP mechanism classes: their epsilon through the RDP accountant (one case each)
for _mech in ("Gaussian", "Laplace", "RandomizedResponse", "PoissonGaussian", "SubsampledGaussianWOR", "SubsampledWOR",
              "Custom"):
    CASES[f"dpbounds.rdp.{_mech}"] = {
        "Gaussian": lambda k: lambda: R.RDPAccountant().compose(R.Gaussian(5.0 + k), 3).get_epsilon(1e-5),
        "Laplace": lambda k: lambda: R.RDPAccountant().compose(R.Laplace(5.0 + k), 3).get_epsilon(1e-5),
        "RandomizedResponse": lambda k: lambda: R.RDPAccountant().compose(R.RandomizedResponse(0.6 + 0.05 * k), 3).get_epsilon(1e-5),
        "PoissonGaussian": lambda k: lambda: R.RDPAccountant().compose(R.PoissonGaussian(1.0 + k, 0.01), 100).get_epsilon(1e-5),
        "SubsampledGaussianWOR": lambda k: lambda: R.RDPAccountant().compose(R.SubsampledGaussianWOR(1.0 + k, 0.01), 100).get_epsilon(1e-5),
        "SubsampledWOR": lambda k: lambda: R.RDPAccountant().compose(R.SubsampledWOR(R.Laplace(1.0 + k), 0.01), 100).get_epsilon(1e-5),
        "Custom": lambda k: lambda: R.RDPAccountant().compose(R.Custom(lambda a: a / (2.0 + k)), 10).get_epsilon(1e-5),
    }[_mech]

# public names that compute nothing (types, protocols, errors, cache controls, submodules)
NOT_COMPUTING = {
    "dpbounds.DPBoundsError", "dpbounds.PrecisionWarning", "dpbounds.PrivacyAccountant", "dpbounds.PrivacyBracket",
    "dpbounds.LognormalMoments", "dpbounds.Theorem31Result", "dpbounds.rdp.Mechanism",
    "dpbounds.accountant.PrivacyAccountant", "dpbounds.accountant.PrivacyBracket", "dpbounds.accountant.clear_cache",
    "dpbounds.accountant.cache_info", "dpbounds.accountant.set_cache_limit",
    "dpbounds.accountant.law_for",  # raced in test_law_cache_under_contention
    "dpbounds.Plan", "dpbounds.PlanPoint", "dpbounds.composition.SubsampledComposition",  # result types
}
PUBLIC_MODULES = ("dpbounds", "dpbounds.rdp", "dpbounds.accountant", "dpbounds.tradeoff", "dpbounds.sampling",
                  "dpbounds.normal", "dpbounds.composition", "dpbounds.outer")


def _public_callables() -> set[str]:
    """Every public function and class of the public modules, each under the name it is defined."""
    found: dict[int, str] = {}
    for modname in PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if callable(obj) and not isinstance(obj, np.ufunc):
                found.setdefault(id(obj), f"{modname}.{name}")
    return set(found.values())


def test_every_public_callable_has_a_thread_case():
    covered = set(VALIDATED) | set(CASES) | NOT_COMPUTING
    # the same object may be exported under two modules: the first name found is used
    aliases = {f"dpbounds.accountant.{n}": f"dpbounds.{n}" for n in
               ("tradeoff_exact", "exact_max_gap", "gap_ratio", "RandomAllocationPLD", "RandomAllocationAccountant",
                "PoissonAccountant")}
    missing = sorted(p for p in _public_callables() if p not in covered and aliases.get(p) not in covered)
    assert not missing, f"public callables without a concurrency case in tests/contract/test_threads.py: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_public_call_concurrent_matches_serial(name):
    calls = [CASES[name](k % 4) for k in range(THREADS)]
    _check_concurrent(calls)


@pytest.mark.slow
def test_rdp_accountant_default_orders_concurrent_matches_serial():
    # the RDPAccountant case at its default orders (up to 1e4: the WOR kernel's large-order range)
    _check_concurrent([lambda k=k: _rdp_accountant(1.0 + 0.5 * (k % 4), 0.01) for k in range(THREADS)])


# ---------------------------------------------------------------- the law cache
def test_law_cache_under_contention():
    """Eight threads asking for the same and for different single-epoch laws at once, from an empty
    cache: each gets the law a serial call builds (bit for bit), the same key yields one shared
    object, the cache holds each key once, and the laws are not altered by being used concurrently."""
    keys = [(1.0, 100), (2.0, 1000), (0.3, 2), (1.0, 100)]  # Fourier series; (0.3, 2): the log-domain law

    def ask(sigma: float, m: int) -> Any:
        law = A.law_for(sigma, m)
        return law, law.delta(1.0), law.delta(0.1)

    A.clear_cache()
    serial = [_bits(ask(*k)[1:]) for k in keys]
    entries = A.cache_info()["entries"]
    for _ in range(2):
        A.clear_cache()
        raced = _race([lambda k=keys[i % 4]: ask(*k) for i in range(THREADS)])
        for i, r in enumerate(raced):
            assert _bits(r[1:]) == serial[i % 4], f"thread {i}, law {keys[i % 4]}"
        for i in range(THREADS):  # one object per key: a second build was discarded, not kept
            assert raced[i][0] is A.law_for(*keys[i % 4])
        assert A.cache_info()["entries"] == entries
    assert [_bits(ask(*k)[1:]) for k in keys] == serial  # unchanged by the concurrent use


def test_mixed_workload_thread_pool():
    """A pool of 4 running mixed work (array ufuncs, scalar fast path, rounds grid) per seed."""

    def work(seed: int) -> Any:
        rng = np.random.default_rng(seed)
        s = 10 ** rng.uniform(-0.5, 1, 20000)
        m = np.floor(10 ** rng.uniform(1, 12, 20000))
        d = 10 ** rng.uniform(-6, -1, 200)
        return (
            ufuncs.delta_min_exact(s, m),
            ufuncs.delta_bound_simplified(s, m),
            ufuncs.ndtri(10 ** rng.uniform(-300, -0.3, 20000)),
            dpbounds.rounds_required(s[:200], d),
            [dpbounds.delta_bound(float(x), 10**6, "exact") for x in s[:500]],  # scalar path and its sigma cache
        )

    seeds = list(range(8))
    serial = [_bits(work(s)) for s in seeds]
    with ThreadPoolExecutor(max_workers=4) as ex:
        assert [_bits(r) for r in ex.map(work, seeds)] == serial


def test_shared_accountant_queried_concurrently():
    """One accountant object, built and stepped first, then queried by eight threads at once."""
    acc = {"random_allocation": dpbounds.RandomAllocationAccountant(1.0, 100, 2),
           "poisson": _stepped(dpbounds.PoissonAccountant()), "rdp": _stepped(R.RDPAccountant())}
    for a in acc.values():
        calls = [lambda a=a, k=k: (a.get_epsilon_bracket(10.0 ** -(4 + k % 4)), a.get_delta_bracket(0.5 + k % 4))
                 for k in range(THREADS)]
        _check_concurrent(calls)


def _stepped(acc: Any) -> Any:
    for _ in range(40):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    return acc
