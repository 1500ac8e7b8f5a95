"""The public surface and its declared input constraints, in one importable place.

Read by ``tools/gen_contract.py`` (which runs the bad inputs and writes what happens into
the contract page of the documentation), by ``tests/contract/test_contract_table.py`` (which checks
every row of that page: the exception type and the parameter named) and by
``tests/contract/test_input_contract.py`` (the validated wrappers' rejections, array forms included).
Two sources, so nothing is declared twice:

* the validated wrappers and raw ufuncs of the declaration table
  ``src/dpbounds/_ufunc_table.py`` (each argument's constraint is declared there);
* the constructors and functions that are not table-driven, below: a factory taking
  keyword arguments, a valid point, and the constraint each parameter obeys.
  ``OBJECTS`` must reject every bad value; ``DOCUMENTED`` too, except the documented answers
  listed in ``tests/contract/test_contract_table.py`` (``ACCEPTED``).
"""
from __future__ import annotations

import importlib
import math
from typing import Any, Callable

import numpy as np

from dpbounds import accountant, calibration, composition, rdp, sampling
from dpbounds._ufunc_table import UFUNCS
from dpbounds._validation import Constraint

# probe values and the kind of bad input each stands for
# (with the boundaries the constraints exclude: 1 for an open unit interval and orders above 1,
# 2 below an integer >= 3, a non-integer above 3, an order beyond 1e4)
PROBES = (math.nan, math.inf, -math.inf, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.5, 2e4, 1e300, -0.0)
PROBE_KIND = {"nan": "NaN", "inf": "+inf", "-inf": "-inf", "-1.0": "negative", "0.0": "zero",
              "0.5": "non-integer / in (0, 1)", "1.0": "exactly 1", "1.5": "above 1 / non-integer",
              "2.0": "exactly 2", "2.5": "non-integer", "3.5": "non-integer above 3", "20000.0": "2e4 (above 1e4)",
              "1e+300": "huge", "-0.0": "negative zero"}
WRONG_TYPE = "one"


def kind(value: Any) -> str:
    """The kind of bad input a probe value stands for (the row label of the contract table)."""
    if isinstance(value, str):
        return "wrong type (str)"
    if isinstance(value, np.ndarray):
        return f"wrong shape {value.shape}"
    return PROBE_KIND[repr(float(value))]


def resolve(path: str) -> Callable[..., Any]:
    mod, _, name = path.rpartition(".")
    return getattr(importlib.import_module(mod), name)  # type: ignore[no-any-return]


def bad_values(constraint: Constraint) -> list[float]:
    return [v for v in PROBES if not constraint.holds(np.array(v))]


def table_wrappers() -> list[str]:
    """The validated Python functions of the declaration table, in table order, once each."""
    out: list[str] = []
    for u in UFUNCS:
        if u.python and u.python not in out:
            out.append(u.python)
    return out


def table_point(path: str) -> dict[str, float]:
    u = next(u for u in UFUNCS if u.python == path)
    return {a.name: p for a, p in zip(u.args, u.point)}


def table_constraints(path: str) -> dict[str, Constraint]:
    u = next(u for u in UFUNCS if u.python == path)
    return {a.name: a.constraint for a in u.args}


F, U, O, H, N = (Constraint.FINITE_POSITIVE, Constraint.CLOSED_UNIT, Constraint.OPEN_UNIT,
                 Constraint.HALF_OPEN_UNIT, Constraint.FINITE_NONNEGATIVE)
I1 = Constraint.INTEGER_GE_1

Factory = tuple[Callable[..., Any], dict[str, Any], dict[str, Constraint]]

# name -> (factory taking keyword arguments, valid keyword arguments, {parameter: constraint});
# asserted by tests/contract/test_contract_table.py::test_every_bad_input_on_the_page
OBJECTS: dict[str, Factory] = {
    "rdp.Gaussian": (rdp.Gaussian, {"sigma": 1.0}, {"sigma": F}),
    "rdp.Laplace": (rdp.Laplace, {"b": 1.0}, {"b": F}),
    "rdp.RandomizedResponse": (rdp.RandomizedResponse, {"p": 0.75}, {"p": O}),
    "rdp.PoissonGaussian": (rdp.PoissonGaussian, {"sigma": 1.1, "q": 0.01}, {"sigma": F, "q": U}),
    "rdp.SubsampledGaussianWOR": (rdp.SubsampledGaussianWOR, {"sigma": 1.1, "gamma": 0.01}, {"sigma": F, "gamma": U}),
    "rdp.SubsampledWOR": (rdp.SubsampledWOR, {"base": rdp.Gaussian(1.0), "gamma": 0.01, "eps_inf": 1.0},
                          {"gamma": U, "eps_inf": Constraint.NONNEGATIVE}),
    "rdp.RDPAccountant.compose": (lambda count: rdp.RDPAccountant().compose(rdp.Gaussian(1.0), count),
                                  {"count": 3}, {"count": N}),
    "rdp.gaussian": (rdp.gaussian, {"alpha": 2.0, "sigma": 1.0}, {"alpha": Constraint.ORDER, "sigma": F}),
    "rdp.poisson_gaussian": (rdp.poisson_gaussian, {"alpha": 2.0, "sigma": 1.0, "q": 0.01},
                             {"alpha": Constraint.ORDER, "sigma": F, "q": U}),
    "rdp.subsampled_gaussian_wor": (rdp.subsampled_gaussian_wor, {"alpha": 2.0, "sigma": 1.0, "gamma": 0.01},
                                    {"alpha": Constraint.ORDER, "sigma": F, "gamma": U}),
}


def _first(it: Any) -> Any:
    return next(iter(it))


# What these do with each bad value is run and published on the contract page, and checked row by
# row (tests/contract/test_contract_table.py).  The constraint is the documented domain of the parameter;
# the factories stay cheap (no law builds: accountants are constructed, not queried), so the page
# regenerates in a second.
DOCUMENTED: dict[str, Factory] = {
    "accountant.RandomAllocationAccountant": (
        accountant.RandomAllocationAccountant, {"noise_multiplier": 1.1, "rounds_per_epoch": 100.0, "epochs": 1.0},
        {"noise_multiplier": F, "rounds_per_epoch": Constraint.INTEGER_GE_2, "epochs": F}),
    "accountant.PoissonAccountant": (
        accountant.PoissonAccountant, {"noise_multiplier": 1.1, "sample_rate": 0.01, "steps": 100},
        {"noise_multiplier": F, "sample_rate": H, "steps": I1}),
    "accountant.RandomAllocationPLD": (
        accountant.RandomAllocationPLD, {"sigma": 1.1, "rounds": 100.0},
        {"sigma": F, "rounds": Constraint.INTEGER_GE_2}),
    "accountant.PoissonPLD": (
        accountant.PoissonPLD, {"noise_multiplier": 1.1, "sample_rate": 0.01, "steps": 100},
        {"noise_multiplier": F, "sample_rate": H, "steps": I1}),
    "calibration.calibrate_noise": (
        lambda target_epsilon, target_delta, dataset_size, batch_size, epochs: calibration.calibrate_noise(
            target_epsilon, target_delta, dataset_size=dataset_size, batch_size=batch_size, epochs=epochs),
        {"target_epsilon": 1.0, "target_delta": 1e-5, "dataset_size": 1000, "batch_size": 10, "epochs": 1.0},
        {"target_epsilon": F, "target_delta": O, "dataset_size": I1, "batch_size": I1, "epochs": F}),
    "composition.naive": (composition.naive, {"epsilon": 1.0, "delta": 1e-6, "k": 10},
                          {"epsilon": Constraint.FINITE_NONNEGATIVE, "delta": U, "k": I1}),
    "composition.advanced": (composition.advanced, {"epsilon": 1.0, "delta": 1e-6, "k": 10, "delta_slack": 1e-6},
                             {"epsilon": Constraint.FINITE_NONNEGATIVE, "delta": U, "k": I1, "delta_slack": O}),
    "composition.subsample": (composition.subsample, {"epsilon": 1.0, "delta": 1e-6, "gamma": 0.01},
                              {"epsilon": Constraint.FINITE_NONNEGATIVE, "delta": U, "gamma": U}),
    "composition.optimal": (composition.optimal, {"epsilon": 0.1, "delta": 1e-6, "k": 10, "target_delta": 1e-5},
                            {"epsilon": Constraint.FINITE_NONNEGATIVE, "delta": U, "k": I1, "target_delta": O}),
    "sampling.random_allocation": (lambda dataset_size, rounds: _first(sampling.random_allocation(dataset_size, rounds, 0)),
                                   {"dataset_size": 100, "rounds": 10}, {"dataset_size": I1, "rounds": I1}),
    "sampling.poisson": (lambda dataset_size, sample_rate: _first(sampling.poisson(dataset_size, sample_rate, 0, steps=1)),
                         {"dataset_size": 100, "sample_rate": 0.1}, {"dataset_size": I1, "sample_rate": H}),
    # the Cartesian-grid kernels take 1-D axes: each probe is a one-value axis
    "outer.delta_bound_outer": (
        lambda sigma, rounds: _outer().delta_bound_outer([sigma], [rounds]),
        {"sigma": 1.0, "rounds": 1000.0}, {"sigma": F, "rounds": Constraint.INTEGER_GE_1}),
    "outer.rounds_required_outer": (
        lambda sigma, delta: _outer().rounds_required_outer([sigma], [delta]),
        {"sigma": 1.0, "delta": 0.01}, {"sigma": F, "delta": O}),
    "outer.min_dataset_size_outer": (
        lambda sigma, rounds: _outer().min_dataset_size_outer([sigma], [rounds]),
        {"sigma": 1.0, "rounds": 1000.0}, {"sigma": F, "rounds": Constraint.INTEGER_GE_1}),
    "planner.plan": (
        lambda dataset_size, delta: _planner().plan(dataset_size, delta=delta, sigma=[1.0]),
        {"dataset_size": 1_000_000, "delta": 0.01}, {"dataset_size": I1, "delta": O}),
}


def _outer() -> Any:
    return importlib.import_module("dpbounds.outer")


def _planner() -> Any:
    return importlib.import_module("dpbounds.planner")



# ---------------------------------------------------------------- scalar-only parameters
def _ra(**kw: Any) -> Any:
    return accountant.RandomAllocationAccountant(**kw)


def _rdp_acc() -> Any:
    return rdp.RDPAccountant(noise_multiplier=1.1, sample_rate=0.01, steps=100)


def _planner_plan(**kw: Any) -> Any:
    return _planner().plan(sigma=[1.0], **kw)


# name -> (call taking keyword arguments, valid keyword arguments, scalar-only parameters, heavy):
# each scalar-only parameter must refuse a 1-element and a 3-element array, a list, a string,
# a bool and (unless its default is None) None with DPBoundsError naming it, and accept a 0-d
# array as the scalar it holds (same answer).  ``heavy``: the 0-d acceptance runs a computation
# of seconds, checked by the slow test only.  Asserted by tests/contract/test_input_contract.py.
SCALAR_ONLY: dict[str, tuple[Callable[..., Any], dict[str, Any], tuple[str, ...], bool]] = {
    "RandomAllocationAccountant": (_ra, {"noise_multiplier": 1.1, "rounds_per_epoch": 100, "epochs": 2,
                                         "tolerance": 2e-3, "max_lattice": 2 ** 20},
                                   ("noise_multiplier", "rounds_per_epoch", "epochs", "tolerance", "max_lattice"), False),
    "RandomAllocationAccountant(dataset_size=...)": (
        lambda **kw: _ra(noise_multiplier=1.1, **kw), {"dataset_size": 1000, "batch_size": 10, "steps": 7},
        ("dataset_size", "batch_size", "steps"), False),
    "RandomAllocationAccountant.step": (lambda **kw: _ra().step(**kw) or None,
                                        {"noise_multiplier": 1.1, "sample_rate": 0.01},
                                        ("noise_multiplier", "sample_rate"), False),
    "RandomAllocationAccountant.get_epsilon": (
        lambda delta: _ra(noise_multiplier=1.1, rounds_per_epoch=100, epochs=2, method="gdp_asymptotic").get_epsilon(delta),
        {"delta": 1e-5}, ("delta",), False),
    "RandomAllocationAccountant.get_delta": (
        lambda epsilon: _ra(noise_multiplier=1.1, rounds_per_epoch=100, epochs=2, method="gdp_asymptotic").get_delta(epsilon),
        {"epsilon": 1.0}, ("epsilon",), False),
    "PoissonAccountant": (accountant.PoissonAccountant,
                          {"noise_multiplier": 1.1, "sample_rate": 0.01, "steps": 100, "tolerance": 2e-3,
                           "max_lattice": 2 ** 20},
                          ("noise_multiplier", "sample_rate", "steps", "tolerance", "max_lattice"), False),
    "PoissonAccountant(epochs=...)": (accountant.PoissonAccountant,
                                      {"noise_multiplier": 1.1, "dataset_size": 1000, "batch_size": 10, "epochs": 1.5},
                                      ("dataset_size", "batch_size", "epochs"), False),
    "PoissonAccountant.get_epsilon": (
        lambda delta: accountant.PoissonAccountant(1.1, 0.01, 100).get_epsilon(delta), {"delta": 1e-5}, ("delta",), True),
    "PoissonAccountant.get_delta": (
        lambda epsilon: accountant.PoissonAccountant(1.1, 0.01, 100).get_delta(epsilon), {"epsilon": 1.0}, ("epsilon",), True),
    "PoissonPLD": (accountant.PoissonPLD, {"noise_multiplier": 1.1, "sample_rate": 0.01, "steps": 100, "tolerance": 2e-3},
                   ("noise_multiplier", "sample_rate", "steps", "tolerance"), False),
    "RandomAllocationPLD": (accountant.RandomAllocationPLD, {"sigma": 1.1, "rounds": 100, "epochs": 2, "tolerance": 2e-3},
                            ("sigma", "rounds", "epochs", "tolerance"), True),
    "tradeoff_exact": (accountant.tradeoff_exact, {"a": 0.5, "sigma": 1.1, "rounds": 100}, ("sigma", "rounds"), True),
    "exact_max_gap": (accountant.exact_max_gap, {"sigma": 1.1, "rounds": 100}, ("sigma", "rounds"), True),
    "law_for": (lambda **kw: type(accountant.law_for(**kw)).__name__, {"sigma": 1.1, "M": 100}, ("sigma", "M"), False),
    "set_cache_limit": (lambda nbytes: accountant.set_cache_limit(nbytes) or accountant.cache_info()["limit"],
                        {"nbytes": 256 * 2 ** 20}, ("nbytes",), False),
    "RDPAccountant": (lambda **kw: rdp.RDPAccountant(**kw), {"max_order": 1e4, "noise_multiplier": 1.1,
                                                             "sample_rate": 0.01, "steps": 100},
                      ("max_order", "noise_multiplier", "sample_rate", "steps"), False),
    "RDPAccountant.get_epsilon": (lambda delta: _rdp_acc().get_epsilon(delta), {"delta": 1e-5}, ("delta",), False),
    "RDPAccountant.get_delta": (lambda epsilon: _rdp_acc().get_delta(epsilon), {"epsilon": 1.0}, ("epsilon",), False),
    "RDPAccountant.compose": (lambda count: rdp.RDPAccountant().compose(rdp.Gaussian(1.0), count).mechanisms[0][1],
                              {"count": 3}, ("count",), False),
    "RDPAccountant.step": (lambda **kw: rdp.RDPAccountant().step(**kw) or None,
                           {"noise_multiplier": 1.1, "sample_rate": 0.01}, ("noise_multiplier", "sample_rate"), False),
    "rdp.PoissonGaussian": (rdp.PoissonGaussian, {"sigma": 1.1, "q": 0.01}, ("sigma", "q"), False),
    "rdp.SubsampledGaussianWOR": (rdp.SubsampledGaussianWOR, {"sigma": 1.1, "gamma": 0.01}, ("sigma", "gamma"), False),
    "rdp.coordinatewise_limit": (rdp.coordinatewise_limit, {"alpha": 2.0, "sigma": 1.0, "q": 0.01, "c2": 1.0},
                                 ("sigma", "q", "c2"), False),
    "calibrate_noise": (
        lambda **kw: calibration.calibrate_noise(**kw, sampling="poisson", accountant="rdp"),
        {"target_epsilon": 3.0, "target_delta": 1e-5, "dataset_size": 1000, "batch_size": 10, "epochs": 1.0,
         "rtol": 1e-2, "tolerance": 2e-3},
        ("target_epsilon", "target_delta", "dataset_size", "batch_size", "epochs", "rtol", "tolerance"), True),
    "calibrate_epochs": (
        lambda **kw: calibration.calibrate_epochs(**kw, sampling="poisson", accountant="rdp", max_epochs=3),
        {"target_epsilon": 3.0, "target_delta": 1e-5, "noise_multiplier": 1.0, "dataset_size": 1000, "batch_size": 10},
        ("target_epsilon", "target_delta", "noise_multiplier", "dataset_size", "batch_size"), True),
    "calibrate_batch_size": (
        lambda **kw: calibration.calibrate_batch_size(**kw, sampling="poisson", accountant="rdp"),
        {"target_epsilon": 3.0, "target_delta": 1e-5, "noise_multiplier": 1.0, "dataset_size": 1000, "epochs": 1.0},
        ("target_epsilon", "target_delta", "noise_multiplier", "dataset_size", "epochs"), True),
    "plan": (_planner_plan, {"dataset_size": 1_000_000, "delta": 0.01, "epochs": 1, "clip_norm": 1.0, "rtol": 1e-4},
             ("dataset_size", "delta", "epochs", "clip_norm", "rtol"), False),
    "composition.subsampled_epsilon": (
        lambda **kw: composition.subsampled_epsilon(10, **kw), {"gamma": 0.01, "delta": 1e-8, "sigma": 1.0},
        ("gamma", "delta", "sigma"), False),
    "outer.rounds_required_outer": (
        lambda epochs: _outer().rounds_required_outer([1.0], [0.01], epochs=epochs), {"epochs": 2}, ("epochs",), False),
    "sampling.random_allocation": (
        lambda **kw: list(sampling.random_allocation(**kw, rng=0)), {"dataset_size": 20, "rounds": 3, "epochs": 2},
        ("dataset_size", "rounds", "epochs"), False),
    "sampling.poisson": (
        lambda **kw: list(sampling.poisson(**kw, rng=0)), {"dataset_size": 20, "sample_rate": 0.3, "steps": 3},
        ("dataset_size", "sample_rate", "steps"), False),
}

#: parameters whose None is a documented value (the default: "not given")
NULLABLE = {("RandomAllocationAccountant", p) for p in ("noise_multiplier", "rounds_per_epoch", "epochs")} | {
    ("RandomAllocationAccountant(dataset_size=...)", p) for p in ("dataset_size", "batch_size", "steps")} | {
    ("PoissonAccountant", p) for p in ("noise_multiplier", "sample_rate", "steps")} | {
    ("PoissonAccountant(epochs=...)", p) for p in ("dataset_size", "batch_size", "epochs")} | {
    ("RDPAccountant", p) for p in ("noise_multiplier", "sample_rate", "steps")} | {
    ("calibrate_noise", "epochs"), ("sampling.random_allocation", "epochs"), ("sampling.poisson", "steps")}


def scalar_probes(value: Any) -> list[Any]:
    """What a scalar-only parameter must refuse, around one of its valid values."""
    return [np.array([value]), np.array([value, value, value]), [value], "one", True, np.bool_(False)]
