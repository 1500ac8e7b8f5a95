"""The workload .ci/sanitize runs under valgrind's memcheck: every compiled entry point, briefly.

* every ufunc of the declaration table (dpbounds._ufunc_table.UFUNCS), at its valid point and at
  NaN / +-inf / 0 / negative / huge values, on contiguous arrays of lengths 1, 3, 17 and 1000
  (scalar and SIMD-pair loops and their tails), on a strided view, with ``out=`` and ``where=``;
* every public function of dpbounds._kernels, reached through the public API that uses it: the
  Theorem 3.1 scalar fast paths, the three single-epoch laws of the exact accountant (Fourier
  series, log-domain convolution, tilted series), the Poisson PLD accountant, the Renyi-DP loops
  (without replacement, Poisson) and their accountant, the trade-off quadrature, calibration.

It checks that every ufunc and every public _kernels function was called (so a new kernel
cannot silently stay outside the run) and prints ``valgrind workload: ok``.  Sizes are small:
memcheck runs ~30x slower.  Run by hand: see .ci/sanitize (step ``valgrind``).
"""
from __future__ import annotations

import sys
import warnings
from collections import Counter
from typing import Any, Callable

import numpy as np

import dpbounds
from dpbounds import _kernels, _ufuncs
from dpbounds._ufunc_table import UFUNCS

CALLS: Counter[str] = Counter()


def _count_kernel_calls() -> None:
    """Replace every public function of dpbounds._kernels, wherever the package bound it, by a
    counting wrapper (modules bound them with ``from dpbounds._kernels import ...``)."""
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(dpbounds.__path__, "dpbounds."):
        if ".figures" in info.name or ".cli" in info.name or info.name.endswith("__main__"):
            continue  # optional plotting / the command line: no compiled code of their own
        try:
            importlib.import_module(info.name)
        except ImportError:
            continue  # a module of an optional extra that is not installed
    # scalar_fast_path is a decorator: it runs when dpbounds.allocation_bound is imported, before
    # the counting starts; the compiled entries it builds are called by the theorem31 part
    at_import = {"scalar_fast_path"}
    originals = {id(f): (name, f) for name, f in vars(_kernels).items()
                 if callable(f) and not name.startswith("_") and name not in at_import
                 and getattr(f, "__module__", "") == "dpbounds._kernels"}

    def wrap(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*a: Any, **k: Any) -> Any:
            CALLS[name] += 1
            return f(*a, **k)
        return counted

    wrappers = {i: wrap(name, f) for i, (name, f) in originals.items()}
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("dpbounds"):
            for attr, val in list(vars(mod).items()):
                if id(val) in wrappers and attr != "__builtins__":
                    setattr(mod, attr, wrappers[id(val)])
    CALLS.update({name: 0 for name, _ in originals.values()})


def ufuncs() -> None:
    # (no subnormals: the Poisson RDP series takes seconds per element there, minutes under memcheck)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1e308])
    for spec in UFUNCS:
        uf = getattr(_ufuncs, spec.name)
        for n in (1, 3, 17, 1000):
            args = [np.full(n, p) for p in spec.point]
            # perturb along the array so the loops do not see one repeated value
            args = [a * (1 + 1e-3 * np.arange(n) / n) if a.dtype.kind == "f" and n > 1 else a for a in args]
            outs = uf(*args)
            for o in (outs if isinstance(outs, tuple) else (outs,)):
                np.asarray(o).sum()  # read every output element (memcheck flags undefined values on use)
        for k in range(spec.nin):  # one special value per argument, the others at the point
            for v in specials:
                args = [np.full(9, p) for p in spec.point]
                args[k] = np.full(9, v)
                uf(*args)
        wide = [np.repeat(np.full(40, p), 2)[::2] for p in spec.point]  # strided inputs
        out = tuple(np.zeros(40, dtype=np.float64 if t == "double" else np.int32) for t in spec.outputs)
        where = np.arange(40) % 3 != 0
        uf(*wide, out=out if len(out) > 1 else out[0], where=where)
        CALLS["ufunc " + spec.name] += 1


def theorem31() -> None:
    for coef in ("exact", "simplified"):
        dpbounds.delta_bound(1.0, 1000, coef)
        dpbounds.delta_bound(np.array([0.8, 1.0, 3.0]), np.array([100.0, 1e6, 1e12]), coef)
        dpbounds.rounds_closed_form(1.0, 1e-5, coef)
        dpbounds.rounds_closed_form(np.array([1.0, 2.0]), 1e-5, coef)
        dpbounds.rounds_required(1.0, 1e-5, coef)
        dpbounds.rounds_required(np.array([1.0, 2.0]), np.array([1e-5, 1e-3]), coef, epochs=2)
    dpbounds.min_dataset_size(1.0, 1000)
    dpbounds.min_dataset_size(np.array([1.0, 2.0]), np.array([1000.0, 1e5]))
    dpbounds.theorem31(1.0, 1000)
    dpbounds.delta_bound_terms(1.0, 1000)


def outer() -> None:
    # the separable Cartesian-grid kernels: several tile sizes (tails of the blocked loops), both
    # coefficients, with and without the status array; the public functions refuse invalid axes,
    # so the kernels are also called directly with NaN / inf / out-of-domain axis values (the
    # sweep engine hands them such grids and reads the status)
    O = dpbounds.outer
    for n in (1, 3, 65):
        s = np.linspace(0.3, 4.0, n)
        m = np.round(np.geomspace(3.0, 1e12, n + 2))
        d = np.geomspace(1e-10, 0.5, n + 1)
        for coef in ("exact", "simplified"):
            O.delta_bound_outer(s, m, coef).sum()
            v, st = O.delta_bound_outer(s, m, coef, return_status=True)
            v.sum(), st.sum()
            O.rounds_required_outer(s, d, coef).sum()
            O.rounds_required_outer(s, d, coef, validity_at="target").sum()
        O.min_dataset_size_outer(s, m).sum()
    sig = np.array([0.05, 0.5, 1.0, 4.0, np.nan, -1.0, np.inf, 0.0])
    rounds = np.array([2.0, 10.0, 1e3, 1e12, 1.5, np.nan, np.inf, 0.0, -3.0])
    deltas = np.array([1e-10, 0.01, 0.5, np.nan, 0.0, 2.0, -1.0])
    for coef in ("exact", "simplified"):
        out = np.empty((sig.size, rounds.size))
        _kernels.outer_delta_bound(sig, rounds, coef, False, out)
        out.sum()
        status = np.empty(out.shape, dtype=np.int8)
        _kernels.outer_delta_bound(sig, rounds, coef, True, out, status)
        out.sum(), status.sum()
        for at_target in (False, True):
            out = np.empty((sig.size, deltas.size))
            _kernels.outer_rounds_required(sig, deltas, coef, at_target, out)
            out.sum()
    out = np.empty((sig.size, rounds.size))
    _kernels.outer_min_dataset_size(sig, rounds, 1.0, 0.1, out)
    out.sum()


def accountants() -> None:
    from dpbounds import accountant
    from dpbounds.accountant._laws.tilted import TiltedFourierLaw

    for sigma, m, e in ((1.0, 100, 1), (1.0, 100, 2), (0.3, 2, 1), (0.4, 60, 1)):
        law = accountant.law_for(sigma, m)  # Fourier series, log-domain grid
        acc = dpbounds.RandomAllocationAccountant(sigma, m, e)
        acc.get_epsilon_bracket(1e-5)
        acc.get_delta_bracket(1.0)
        CALLS["law " + type(law).__name__] += 1
    # the tilted series serves small sigma with M beyond the log-domain budget (seconds of build
    # time, too long here): built directly at a small M
    tilted = TiltedFourierLaw(0.3, 100)
    assert tilted.converged
    tilted.delta(1.0)
    CALLS["law " + type(tilted).__name__] += 1
    dpbounds.tradeoff_exact(np.array([0.1, 0.5]), 1.0, 100)
    dpbounds.exact_max_gap(1.0, 100)
    p = dpbounds.PoissonAccountant()
    for _ in range(20):
        p.step(noise_multiplier=1.0, sample_rate=0.01)
    p.get_epsilon(1e-5)
    p.get_delta(1.0)


def tradeoff() -> None:
    a = np.linspace(0.0, 1.0, 11)
    dpbounds.tradeoff_lower_bound(a, 1.0, 1000)
    dpbounds.tradeoff_clt(a, 1.0, 1000)
    dpbounds.tradeoff_edgeworth(a, 1.0, 1000)
    dpbounds.multi_epoch_tradeoff(a, 1e-3, 2)
    dpbounds.gaussian_tradeoff(a, 1.0)
    dpbounds.gdp_epsilon(1e-5, 1.0)
    dpbounds.gdp_delta(1.0, 1.0)


def rdp() -> None:
    R = dpbounds.rdp
    orders = np.array([1.5, 2.0, 3.0, 8.0, 32.0, 256.0])
    for bound in ("theorem9", "improved", "lower"):
        R.subsampled_gaussian_wor(orders, 1.0, 0.01, bound=bound)
    R.subsampled_wor(orders, R.Laplace(0.5), 0.01)
    R.subsampled_wor(orders, lambda x: x / 2.0, 0.01)  # a callable base: the table path
    _kernels.pv_logd(np.log(np.linspace(0.5, 3.0, 40)))  # the Pearson-Vajda differences (tests use it)
    for mode in ("exact", "compat"):
        R.poisson_gaussian(orders, 1.0, 0.01, mode=mode)
    acc = R.RDPAccountant()
    acc.compose(R.PoissonGaussian(1.1, 0.01), 100).compose(R.SubsampledGaussianWOR(1.1, 0.01), 100)
    acc.get_epsilon(1e-5)
    r = R.RDPAccountant()
    for _ in range(10):
        r.step(noise_multiplier=1.0, sample_rate=0.01)
    r.get_epsilon(1e-5)
    # a without-replacement sweep's order search keeps one kernel workspace per sigma (wor_work)
    dpbounds.sweep("rdp_epsilon_wor", sigma=[1.0, 2.0], sample_rate=[0.01], steps=[100], delta=[1e-5])


def calibration() -> None:
    # the RDP accountant and Poisson sampling: seconds natively with the exact accountant
    dpbounds.calibrate_noise(2.0, 1e-5, dataset_size=1000, batch_size=10, epochs=1, sampling="poisson", accountant="rdp")
    dpbounds.calibrate_epochs(4.0, 1e-5, noise_multiplier=1.0, dataset_size=1000, batch_size=10,
                             sampling="poisson", accountant="rdp")


def main() -> None:
    _count_kernel_calls()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NaN/inf inputs warn by design; the run checks memory, not values
        for part in (ufuncs, theorem31, outer, accountants, tradeoff, rdp, calibration):
            part()
            print(f"valgrind workload: {part.__name__} done", flush=True)
    missing = sorted(name for name, n in CALLS.items() if n == 0 and not name.startswith(("ufunc ", "law ")))
    missing += sorted(u.name for u in UFUNCS if CALLS["ufunc " + u.name] == 0)
    laws = sorted(k[4:] for k in CALLS if k.startswith("law "))
    print(f"valgrind workload: {sum(k.startswith('ufunc ') for k in CALLS)} ufuncs, "
          f"{sum(1 for k, n in CALLS.items() if n and ' ' not in k)} _kernels functions, laws {laws}")
    if missing:
        sys.exit(f"valgrind workload: never called: {missing}")
    print("valgrind workload: ok")


if __name__ == "__main__":
    main()
