"""Accuracy claims made in public docstrings outside the ufunc declaration table.

The declaration table (``src/dpbounds/_ufunc_table.py``) carries the accuracy claims of the
ufuncs and of the validated functions that wrap them (``python=``).  Every other public
function whose docstring states an accuracy is listed here with the claim, the test that
measures it against an independent reference (which hands its maximum to the
``record_accuracy`` fixture under ``key``), and a phrase of the docstring that states it.
``tools/gen_contract.py`` publishes them with their measurements on the contract page.  The
measuring test fails when its measurement exceeds the claim (``tests/accuracy_record.py``);
``tests/project/test_generated.py`` when the named test does not exist or does not measure, and
``tests/contract/test_contract_table.py`` when the claim is no longer in its docstring, or when a public
docstring states an accuracy that is in neither list (``public_accuracy_statements``).
"""
from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass
from typing import Any, Iterator

__all__ = ["DocClaim", "CLAIMS", "BACKED_BY_TABLE", "NOT_CLAIMS", "public_accuracy_statements", "resolve"]


@dataclass(frozen=True)
class DocClaim:
    function: str   # dotted public path, e.g. "dpbounds.rdp.epsilon"
    unit: str       # "ulp", "relative" or "absolute", as the measurement
    bound: float
    regime: str
    test: str       # file::function that records the measurement under ``function``
    phrase: str     # words of the docstring that state the claim

    @property
    def key(self) -> str:
        """The name its test records the measurement under (record_accuracy)."""
        return self.function


CLAIMS = [
    DocClaim("dpbounds.rdp.epsilon", "ulp", 8,
             "above the exact conversion (never below), ulp of the objective's largest term; orders in "
             "[1 + 1e-10, 1e16], RDP in [1e-12, 1e8], delta in [1e-307, 0.5]",
             "tests/rdp/test_rdp_outward.py::test_random_sample_never_below_and_within_k_ulp",
             "at most 8 ulp of the objective's"),
    DocClaim("dpbounds.rdp.delta", "ulp", 8,
             "log delta above the exact one (never below), ulp of max(1, largest term of log delta), beyond "
             "4 ulp of delta; orders in [1 + 1e-10, 1e16], RDP in [1e-12, 1e8], epsilon in [1e-12, 1e3]",
             "tests/rdp/test_rdp_outward.py::test_random_sample_never_below_and_within_k_ulp",
             "at most 8 ulp of the largest term of log delta"),
    DocClaim("dpbounds.rdp.subsampled_gaussian_wor", "relative", 1e-12,
             "integer orders 2..256, sigma in [0.5, 50], gamma in [1e-3, 0.1]; all three bounds",
             "tests/rdp/test_rdp_kernels.py::test_wor_gaussian_vs_mpmath",
             "relative\n        error <= 1e-12"),
    DocClaim("dpbounds.rdp.subsampled_wor", "relative", 1e-12,
             "Theorem 9 for the Laplace and randomized-response mechanisms, integer orders",
             "tests/rdp/test_rdp_kernels.py::test_wor_table_general_mechanisms_vs_mpmath",
             "Relative error <= 1e-12 vs mpmath"),
    DocClaim("dpbounds.gaussian_f0delta_tradeoff", "relative", 2e-13 + 4.5e-16,
             "a in [1e-300, 0.9] x mu in [1e-8, 30] x delta in [1e-12, 0.5], where the value >= 1e-300",
             "tests/project/test_docstring_accuracy.py::test_gaussian_f0delta_tradeoff_vs_mpmath",
             "that of :func:`gaussian_tradeoff` plus 2 ulp"),
    DocClaim("dpbounds.exact_max_gap", "relative", 1e-8,
             "M = 2, sigma in {3, 20}, against scipy quadrature of the exact integral",
             "tests/accountant/test_exact.py::test_tv_m2_vs_quadrature",
             "Relative error <= 1e-8"),
    DocClaim("dpbounds.lognormal_moments", "relative", 1e-14,
             "sigma in [0.07, 1e4], all six fields",
             "tests/special/test_lognormal.py::test_lognormal_moments_fields",
             "Relative error <= 1e-14 against mpmath"),
    DocClaim("dpbounds.composition.advanced", "ulp", 4,
             "eps in [1e-8, 32], k in [1, 1e6], delta' in [1e-12, 0.1]; relative, in units of 2^-52",
             "tests/accountant/test_composition.py::test_subsample_naive_advanced_vs_mpmath",
             "Relative error <= 4 ulp against mpmath"),
    DocClaim("dpbounds.composition.subsample", "ulp", 4,
             "eps in [1e-8, 700], gamma in [1e-9, 1]; relative, in units of 2^-52",
             "tests/accountant/test_composition.py::test_subsample_naive_advanced_vs_mpmath",
             "Relative error <= 4 ulp against mpmath for eps <= 700"),
    DocClaim("dpbounds.composition.optimal", "relative", 1e-10,
             "eps in [1e-3, 0.5], k in [40, 1000], target in [1e-6, 1e-3]; root by mpmath bisection",
             "tests/accountant/test_composition.py::test_optimal_vs_mpmath_root",
             "Relative error <= 1e-10 against an mpmath root"),
    DocClaim("dpbounds.composition.optimal_delta", "relative", 1e-12,
             "eps in [1e-3, 2], delta in [0, 1e-4], k in [60, 5000], eps_g in [0, 5]",
             "tests/accountant/test_composition.py::test_optimal_delta_vs_mpmath_sum",
             "Relative error <= 1e-12 against an mpmath evaluation of the sum"),
    DocClaim("dpbounds.outer.delta_bound_outer", "ulp", 0,
             "vs dpbounds.delta_bound at the same points (bit-identical); its own accuracy is delta_bound's",
             "tests/special/test_outer.py::test_delta_bound_outer_is_the_broadcast_delta_bound",
             "every value is bit-identical to :func:`dpbounds.delta_bound`"),
    DocClaim("dpbounds.outer.rounds_required_outer", "ulp", 0,
             "vs dpbounds.rounds_required at the same points (bit-identical)",
             "tests/special/test_outer.py::test_rounds_required_outer_is_the_broadcast_rounds_required",
             "bit-identical to :func:`dpbounds.rounds_required`"),
    DocClaim("dpbounds.outer.min_dataset_size_outer", "ulp", 0,
             "vs dpbounds.min_dataset_size at the same points (bit-identical)",
             "tests/special/test_outer.py::test_min_dataset_size_outer_is_the_broadcast_min_dataset_size",
             "bit-identical to :func:`dpbounds.min_dataset_size`"),
    DocClaim("dpbounds.RandomAllocationAccountant.gdp_mu", "relative", 0.01,
             "mu >= 0.1, sigma in [0.7, 5], M in [10, 1000]: gap above the largest mu the pointwise "
             "curve (tradeoff_exact with its error bound, 4001 points) requires",
             "tests/accountant/test_gdp_mu.py::test_gdp_mu_certified_and_tight",
             "<= 0.01 where mu >= 0.1"),
]

#: docstrings whose accuracy statement is the claim of measured declaration-table entries
#: (named; each table bound must not exceed the docstring's)
BACKED_BY_TABLE: dict[str, tuple[tuple[str, ...], float]] = {
    "dpbounds.delta_bound_terms": (("delta_terms_exact", "delta_terms_simplified"), 1e-14),
    "dpbounds.outer.delta_bound_outer": (("delta_bound_exact", "delta_bound_simplified"), 1e-14),
}

#: docstrings that mention accuracy words without claiming an accuracy of their own result
NOT_CLAIMS: dict[str, str] = {
    "dpbounds": "package overview: points to the functions' own claims",
    "dpbounds.accountant": "module overview: says tradeoff_exact returns an absolute error bound",
    "dpbounds.normal": "module overview: a table of the ufunc claims (declaration table)",
    "dpbounds.accountant.PoissonPLD": "describes how its certified error bound is built (64 ulp per step)",
    "dpbounds.sampling.poisson_steps": "the rule that counts a quotient within 4 ulp of a whole number as it "
                                       "(exact step counts: tests/cli/test_cli_dpsgd.py::test_step_rule_functions)",
    "dpbounds.sampling.random_allocation_steps": "the same counting rule as poisson_steps",
}

_WORDS = re.compile(r"relative error|absolute error|accurate to|\bulps?\b|accuracy", re.I)
_MODULES = ["dpbounds", "dpbounds.rdp", "dpbounds.accountant", "dpbounds.tradeoff", "dpbounds.gdp", "dpbounds.gdp_mu",
            "dpbounds.allocation_bound",
            "dpbounds.sampling", "dpbounds.composition", "dpbounds.calibration", "dpbounds.normal",
            "dpbounds.outer", "dpbounds.curve", "dpbounds.epochs", "dpbounds.planner", "dpbounds.sweeps"]


def resolve(path: str) -> Any:
    """The object at a dotted public path (module, function, class or method)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(path)


def _walk(obj: Any, path: str, seen: set[int], out: dict[str, Any]) -> None:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    out.setdefault(path, obj)
    if inspect.ismodule(obj):
        for n in getattr(obj, "__all__", [n for n in dir(obj) if not n.startswith("_")]):
            v = getattr(obj, n, None)
            if inspect.ismodule(v):
                continue  # modules are walked from their own entry
            if (inspect.isfunction(v) or inspect.isclass(v)) and str(getattr(v, "__module__", "")).startswith("dpbounds"):
                _walk(v, f"{path}.{n}", seen, out)
    elif inspect.isclass(obj):
        for n, v in vars(obj).items():
            if n.startswith("_"):
                continue
            f = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
            if inspect.isfunction(f):
                _walk(f, f"{path}.{n}", seen, out)


def public_accuracy_statements() -> Iterator[tuple[str, str]]:
    """(path, line) for each line of a public docstring that uses an accuracy word (the shortest
    public path of each object)."""
    objs: dict[str, Any] = {}
    seen: set[int] = set()
    for m in _MODULES:
        _walk(importlib.import_module(m), m, seen, objs)
    for path, obj in objs.items():
        for line in (inspect.getdoc(obj) or "").splitlines():
            if _WORDS.search(line):
                yield path, line.strip()
