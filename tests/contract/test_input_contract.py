"""The input contract, walked over the public surface: bad input raises DPBoundsError naming the parameter.

Two sources of cases, so that nothing is checked by hand twice (``tests/contract_surface.py``):

* every validated wrapper declared in the ufunc table (``UfuncSpec.python``), each variant
  through its choices: each argument gets every probe value its declared constraint rejects
  (NaN, +-inf, negative, zero, the excluded ends, > 1, non-integer ...), alone and as one
  element of an array (counted in the message), the others at the declared valid point, where
  the wrapper must answer what its ufunc answers;
* the constructors and functions that are not table-driven (RDP mechanisms, accountants):
  their parameters and the constraint each obeys, listed in ``contract_surface.OBJECTS`` and
  checked row by row with the rest of the contract page by tests/contract/test_contract_table.py (as
  are the wrong-type and non-broadcasting rows of every entry point).

``test_public_surface_is_walked`` fails when a public callable of dpbounds, dpbounds.rdp,
dpbounds.accountant, dpbounds.sampling or dpbounds.tradeoff is in neither source nor in the
explicit list of names checked elsewhere, so a new entry point cannot skip the contract.
"""
from __future__ import annotations

import inspect
import math
from typing import Any

import contract_surface
import numpy as np
import pytest

import dpbounds
from dpbounds import DPBoundsError, _ufuncs, rdp
from dpbounds._ufunc_table import UFUNCS

# the surface and its probes live in one place, shared with tools/gen_contract.py (the contract page)
_resolve, _bad_values, _point = contract_surface.resolve, contract_surface.bad_values, contract_surface.table_point


def _choices(spec: Any) -> dict[str, Any]:
    """The keyword arguments selecting a table variant through its validated wrapper."""
    return {k: {"true": True, "false": False}.get(v, v) for k, v in spec.choices}


TABLE_SPECS = [u for u in UFUNCS if u.python is not None]


def _table_cases() -> list[Any]:
    # each variant of each validated wrapper (its choices passed as keywords), each argument,
    # each probe value its declared constraint rejects
    return [pytest.param(u, a.name, v, id=f"{u.name}-{a.name}-{v!r}")
            for u in TABLE_SPECS for a in u.args for v in _bad_values(a.constraint)]


@pytest.mark.parametrize("spec,arg,value", _table_cases())
def test_table_wrappers_reject(spec: Any, arg: str, value: float) -> None:
    point = {a.name: p for a, p in zip(spec.args, spec.point)}
    kwargs: dict[str, Any] = {**point, arg: value}
    f = _resolve(spec.python)
    if isinstance(f, np.ufunc):
        # the special functions exported as raw ufuncs (dpbounds.ndtr, ...) follow numpy's
        # convention, documented in the package docstring: outside the domain -> NaN, no error;
        # at an infinite endpoint the limit is allowed (lognormal_rho3(inf) = 0), checked as
        # continuity with the largest finite argument
        got = f(*kwargs.values())
        if math.isinf(value) and not np.isnan(got):
            kwargs[arg] = math.copysign(1e300, value)
            assert got == pytest.approx(f(*kwargs.values()), abs=1e-300)
        else:
            assert np.isnan(got)
        return
    choices = _choices(spec)
    with pytest.raises(DPBoundsError, match=rf"^{arg} must be "):
        f(**kwargs, **choices)
    kwargs[arg] = np.array([point[arg], value])  # arrays: the bad element is found and counted
    with pytest.raises(DPBoundsError, match=rf"^{arg} must be .*1 of 2 elements"):
        f(**kwargs, **choices)


@pytest.mark.parametrize("spec", [u for u in TABLE_SPECS if not isinstance(_resolve(u.python), np.ufunc)],
                         ids=lambda u: u.name)
def test_table_wrapper_at_the_valid_point_is_its_ufunc(spec: Any) -> None:
    # the validated wrapper passes a valid point through to the very same ufunc value
    got = _resolve(spec.python)(**{a.name: p for a, p in zip(spec.args, spec.point)}, **_choices(spec))
    ref = getattr(_ufuncs, spec.name)(*spec.point)
    if isinstance(ref, tuple):
        ref = ref[0]
        got = got[0] if isinstance(got, tuple) else got
    assert got == ref or (np.isnan(got) and np.isnan(ref)), (spec.name, got, ref)


def test_most_validated_wrappers_are_walked() -> None:
    assert len({u.python for u in TABLE_SPECS}) >= 30


# ---------------------------------------------------------------- not table-driven
OBJECTS = contract_surface.OBJECTS


def test_mechanisms_reject_arrays_bools_and_bad_choices() -> None:
    with pytest.raises(DPBoundsError, match="sigma must be a single number"):
        rdp.Gaussian(np.array([1.0, 2.0]))
    with pytest.raises(DPBoundsError, match="q must be"):
        rdp.PoissonGaussian(1.0, True)
    with pytest.raises(DPBoundsError, match="mode must be one of"):
        rdp.PoissonGaussian(1.0, 0.1, mode="exactly")
    with pytest.raises(DPBoundsError, match="bound must be one of"):
        rdp.SubsampledGaussianWOR(1.0, 0.1, bound="tight")
    with pytest.raises(DPBoundsError, match="base must be"):
        rdp.SubsampledWOR(3.0, 0.1)
    with pytest.raises(DPBoundsError, match="func must be callable"):
        rdp.Custom(3.0)


def test_issue_example_is_refused() -> None:
    # accepted before and answered inf: rate 1.5 is not a probability
    with pytest.raises(DPBoundsError, match=r"\bq\b"):
        rdp.RDPAccountant().compose(rdp.PoissonGaussian(1.1, 1.5), 10).get_epsilon(1e-5)
    with pytest.raises(DPBoundsError, match=r"\bsigma\b"):
        rdp.PoissonGaussian(-1.1, 0.01)


# ---------------------------------------------------------------- completeness of the walk

# public callables whose contract is checked by other test files (file named)
CHECKED_ELSEWHERE = {
    # accountants' constructors, queries and calibration: test_accountant_protocol.py, test_calibration.py
    "PoissonAccountant", "RandomAllocationAccountant", "RandomAllocationPLD", "PrivacyAccountant",
    "PoissonPLD", "RDPAccountant", "calibrate_noise", "calibrate_epochs", "calibrate_batch_size",
    "TradeoffCurve",  # test_curve.py
    "theorem31", "delta_bound_terms", "lognormal_moments",  # test_theorem31.py
    "exact_max_gap", "gap_ratio", "tradeoff_exact",  # test_exact.py
    "sep", "sep_gaussian", "f0delta_compose", "gaussian_compose",  # test_tradeoff.py
    "epsilon", "delta", "subsampled_wor", "hybrid_noise", "hypercube_noise", "coordinatewise_poisson",
    "coordinatewise_limit", "twice_sampling", "poisson_general",  # test_rdp_api.py, test_rdp_hybrid_clipping.py
    "Mechanism", "Custom", "LognormalMoments", "Theorem31Result", "PrivacyBracket",
    "DPBoundsError", "PrecisionWarning", "law_for", "clear_cache", "cache_info", "set_cache_limit",
    "plan", "Plan", "PlanPoint",  # test_planner.py
    "delta_bound_outer", "rounds_required_outer", "min_dataset_size_outer",  # test_outer.py::test_bad_input_names_the_parameter
    "sweep",  # test_sweep.py::test_bad_arguments_raise_naming_them, test_bad_axis_specs_name_the_axis
    # dpbounds.composition: test_composition.py::test_bad_input_names_the_parameter
    "subsample", "naive", "advanced", "optimal", "optimal_delta", "subsampled_epsilon",
    "SubsampledComposition",
}


def _public_callables() -> set[str]:
    names: set[str] = set()
    for mod in (dpbounds, rdp, dpbounds.accountant, dpbounds.sampling, dpbounds.tradeoff,
                dpbounds.composition, dpbounds.outer):
        for n in getattr(mod, "__all__", []):
            obj = getattr(mod, n)
            if callable(obj) and not isinstance(obj, np.ufunc) and not inspect.ismodule(obj):
                names.add(n)
    return names


def test_public_surface_is_walked() -> None:
    walked = {p.rpartition(".")[2] for p in {u.python for u in UFUNCS if u.python}}
    walked |= {n.split(".")[1] for n in OBJECTS}
    walked |= {n.rpartition(".")[2] for n in OBJECTS}
    missing = sorted(_public_callables() - walked - CHECKED_ELSEWHERE - SAMPLING_CHECKED)
    assert not missing, f"public callables outside the input-contract walk: {missing}"


SAMPLING_CHECKED = set(getattr(dpbounds.sampling, "__all__", []))  # test_sampling.py


# ---------------------------------------------------------------- scalar-only parameters
SCALAR_ONLY = contract_surface.SCALAR_ONLY


def _scalar_cases(heavy: bool | None = None) -> list[tuple[str, str]]:
    return [(name, p) for name, (_, _, params, h) in SCALAR_ONLY.items() for p in params
            if heavy is None or h == heavy]


def _same(x: Any) -> Any:
    """A comparable form of an answer (accountants by their state, arrays by their bytes)."""
    if isinstance(x, dpbounds.PrivacyAccountant):
        return x.state_dict()
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_same(v) for v in x]
    if isinstance(x, np.ndarray):
        return (x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, (dpbounds.accountant.PoissonPLD, dpbounds.RandomAllocationPLD)):
        return repr(vars(x).get("segments", None)), getattr(x, "sigma", None), getattr(x, "epochs", None), x.tolerance
    if isinstance(x, rdp.Mechanism):
        return repr(x)
    if isinstance(x, float) and math.isnan(x):
        return "nan"  # NaN != NaN; the same NaN answer is the same answer
    if isinstance(x, dict):
        return {k: _same(v) for k, v in x.items()}
    if hasattr(x, "__dataclass_fields__"):
        return type(x).__name__, _same(vars(x))
    return x


@pytest.mark.parametrize("name,param", _scalar_cases())
def test_scalar_only_parameters_refuse_arrays_bools_and_non_numbers(name: str, param: str) -> None:
    call, valid, _, _ = SCALAR_ONLY[name]
    probes = contract_surface.scalar_probes(valid[param])
    if (name, param) not in contract_surface.NULLABLE:
        probes.append(None)
    for v in probes:
        with pytest.raises(DPBoundsError, match=rf"\b{param}\b") as exc:
            call(**{**valid, param: v})
        if isinstance(v, (np.ndarray, list)) and np.ndim(v) > 0:
            assert "must be a single number, got a" in str(exc.value), str(exc.value)
            if isinstance(v, np.ndarray):
                assert f"array of shape {v.shape}" in str(exc.value)


def _zero_d_is_the_scalar(name: str, param: str) -> None:
    call, valid, _, _ = SCALAR_ONLY[name]
    expected = _same(call(**valid))
    assert _same(call(**{**valid, param: np.array(valid[param])})) == expected


@pytest.mark.parametrize("name,param", _scalar_cases(heavy=False))
def test_scalar_only_parameters_accept_0d_arrays(name: str, param: str) -> None:
    _zero_d_is_the_scalar(name, param)


@pytest.mark.slow
@pytest.mark.parametrize("name,param", _scalar_cases(heavy=True))
def test_scalar_only_parameters_accept_0d_arrays_heavy(name: str, param: str) -> None:
    _zero_d_is_the_scalar(name, param)


def test_scalar_only_walk_covers_the_scalar_entry_points() -> None:
    # every public accountant's constructor and scalar query, calibration, the planner and the
    # samplers are in the scalar-only walk: a new one must be added there (or it is not scalar-only)
    walked = {n.split("(")[0] for n in SCALAR_ONLY}
    for cls in ("RandomAllocationAccountant", "PoissonAccountant", "RDPAccountant"):
        assert {cls, f"{cls}.get_epsilon", f"{cls}.get_delta", f"{cls}.step"} <= walked | {"PoissonAccountant.step"}
    assert {"PoissonPLD", "RandomAllocationPLD", "calibrate_noise", "calibrate_epochs", "calibrate_batch_size", "plan",
            "sampling.random_allocation", "sampling.poisson", "law_for", "tradeoff_exact", "exact_max_gap"} <= walked
    for name, (_, valid, params, _) in SCALAR_ONLY.items():
        assert set(params) <= set(valid), name


# ---------------------------------------------------------------- bools, masked arrays, extremes
def _wrappers() -> list[str]:
    return sorted(p for p in {u.python for u in UFUNCS if u.python} if not isinstance(_resolve(p), np.ufunc))


@pytest.mark.parametrize("path", _wrappers())
def test_table_wrappers_refuse_bools_and_masked_arrays(path: str) -> None:
    # True is not 1: delta_bound(sigma=True, rounds=1000) answered 0.209; a masked array's mask was ignored
    for arg, good in _point(path).items():
        for bad in (True, np.bool_(False), np.array([True, False]), np.array([good, True], dtype=object)):
            with pytest.raises(DPBoundsError, match=rf"^{arg} must be .*a bool is not read as 0 or 1"):
                _resolve(path)(**{**_point(path), arg: bad})
        masked = np.ma.array([good, good], mask=[False, True])
        with pytest.raises(DPBoundsError, match=rf"^{arg} must be .*got a masked array"):
            _resolve(path)(**{**_point(path), arg: masked})


def test_issue_bool_example_is_refused() -> None:
    with pytest.raises(DPBoundsError, match=r"^sigma must be"):
        dpbounds.delta_bound(sigma=True, rounds=1000)
    with pytest.raises(DPBoundsError, match="masked array"):
        dpbounds.rounds_required(np.ma.array([1.0, 2.0], mask=[0, 1]), 0.01)
    with pytest.raises(DPBoundsError, match="masked array"):
        dpbounds.calibrate_noise(np.ma.masked, 1e-5, dataset_size=100, batch_size=10, epochs=1)


@pytest.mark.parametrize("version", [True, 1.0, "1", None, 2])
def test_load_state_dict_refuses_a_version_that_is_not_the_int_1(version: Any) -> None:
    acc = dpbounds.RandomAllocationAccountant()
    acc.step(noise_multiplier=1.0, sample_rate=0.01)
    state = {**acc.state_dict(), "version": version}
    with pytest.raises(DPBoundsError, match="state version"):
        dpbounds.RandomAllocationAccountant().load_state_dict(state)
    dpbounds.RandomAllocationAccountant().load_state_dict(acc.state_dict())   # the real one loads


_C = {"dataset_size": 60000, "batch_size": 256}
EXTREMES = [
    # (call, the parameter the refusal must name)
    (lambda: dpbounds.calibrate_noise(3.0, 1e-5, epochs=2 ** 70, **_C), "epochs"),   # ran > 10 s
    (lambda: dpbounds.calibrate_noise(3.0, 1e-5, epochs=1e308, **_C), "epochs"),     # raw OverflowError
    (lambda: dpbounds.calibrate_noise(3.0, 1e-5, dataset_size=1e308, batch_size=256, epochs=10), "dataset_size"),
    (lambda: dpbounds.calibrate_noise(3.0, 1e-5, steps=2 ** 70, **_C), "steps"),
    (lambda: dpbounds.calibrate_noise(3.0, 1e-5, epochs=2 ** 70, sampling="poisson", **_C), "epochs"),
    (lambda: dpbounds.calibrate_epochs(3.0, 1e-5, noise_multiplier=1.0, max_epochs=2 ** 70, **_C), "max_epochs"),
    (lambda: dpbounds.calibrate_batch_size(3.0, 1e-5, noise_multiplier=1.0, dataset_size=1e308, epochs=1),
     "dataset_size"),
    (lambda: dpbounds.calibrate_batch_size(3.0, 1e-5, noise_multiplier=1.0, dataset_size=60000, epochs=1e308),
     "epochs"),
    (lambda: dpbounds.composition.optimal(1.0, 0.0, 2 ** 70, 1e-5), "k"),            # raw OverflowError
    (lambda: dpbounds.TradeoffCurve.from_function(lambda a: 1 - a, n=10 ** 9), "n"),  # numpy's ValueError
    (lambda: dpbounds.sampling.poisson_steps(1e308, 0.01), "epochs"),
    (lambda: dpbounds.sampling.random_allocation_steps(2 ** 70, 234), "epochs"),
    (lambda: dpbounds.sampling.poisson_steps(1e-9, 0.01), "epochs"),
]


@pytest.mark.parametrize("k", range(len(EXTREMES)))
def test_extremes_are_refused_at_once_by_name(k: int) -> None:
    import time

    call, name = EXTREMES[k]
    t0 = time.perf_counter()
    with pytest.raises(DPBoundsError, match=rf"^{name}\b|\b{name}="):
        call()
    assert time.perf_counter() - t0 < 2.0   # refused before any long loop (each was instant or > 10 s)


def test_optimal_composition_beyond_the_double_range_is_inf_not_an_overflow() -> None:
    # (1 - delta)^k underflows: no total epsilon reaches target_delta < 1 - (1 - delta)^k
    assert dpbounds.composition.optimal(1.0, 1e-5, 2 ** 70, 1e-5) == math.inf
    assert dpbounds.composition.optimal(1.0, 1e-5, 1e308, 1e-5) == math.inf


def test_tradeoff_exact_blocks_are_bit_identical_and_short() -> None:
    import time

    from dpbounds.accountant import _curve

    a = np.concatenate([np.random.default_rng(5).random(3000), [0.0, 1.0, 1e-12]])
    whole = dpbounds.tradeoff_exact(a[:40], 1.0, 100)
    law = dpbounds.accountant.law_for(1.0, 100, "curve")
    f_one, e_one = law.tradeoff(a)
    f_blk, e_blk = _curve._in_blocks(law.tradeoff, a)
    assert np.array_equal(f_one, f_blk) and np.array_equal(e_one, e_blk)
    assert np.array_equal(np.clip(f_one[:40], 0, 1), whole[0])
    # a slow kernel (5 ms a point): no block takes much longer than the block target
    sizes, times = [], []

    def slow(x):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        time.sleep(0.005 * x.size)
        sizes.append(x.size)
        times.append(time.perf_counter() - t)
        return x, x

    _curve._in_blocks(slow, np.zeros(400))
    assert sum(sizes) == 400 and max(times) < 4 * _curve._BLOCK_SECONDS + 0.2, (sizes, times)


@pytest.mark.slow
def test_tradeoff_exact_stops_on_ctrl_c() -> None:
    # tradeoff_exact(np.linspace(0, 1, 2e6), 0.5, 1e6) ignored Ctrl-C for > 60 s (~14 ms a point)
    import os
    import signal
    import subprocess
    import sys
    import time

    from cli_harness import child_env

    code = ("import numpy as np, dpbounds\nprint('go', flush=True)\n"
            "dpbounds.tradeoff_exact(np.linspace(0, 1, 2 * 10**6), 1.0, 100)\n")
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=child_env(), text=True) as proc:
        assert proc.stdout is not None and proc.stdout.readline() == "go\n"
        time.sleep(3.0)   # well inside the ~5 minutes the call takes
        assert proc.poll() is None
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        waited = time.perf_counter() - t0
    assert os.name == "posix"
    assert waited < 2.0 and "KeyboardInterrupt" in err, (waited, err[-300:])
