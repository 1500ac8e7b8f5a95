"""dpbounds: fast, exact differential-privacy bounds for DP-SGD.

Validated API (raises ``ValueError`` naming the bad parameter):
    delta_bound, delta_bound_terms, theorem31, rounds_closed_form, rounds_required,
    min_dataset_size, lognormal_moments, compose_delta, per_epoch_delta
Trade-off curves (``dpbounds.tradeoff``, ``TradeoffCurve``), Gaussian DP (``dpbounds.gdp``,
``dpbounds.gdp_mu``), Renyi DP
(``dpbounds.rdp``); the exact random-allocation accountant (``dpbounds.accountant``);
batch samplers matching the accountants (``dpbounds.sampling``); Theorem 3.1 on Cartesian
grids, axis by axis (``dpbounds.outer``); bulk sweeps of any of these over parameter grids
(:func:`dpbounds.sweep`, module ``dpbounds.sweeps``).
Special functions and raw kernels (numpy ufuncs, NaN conventions):
    ndtr, log_ndtr, ndtri, ndtri_complement, normal_pdf, lognormal_rho3, and ``dpbounds.ufuncs``
    (every compiled ufunc; see docs/accuracy.md).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dpbounds._errors import DPBoundsError, PrecisionWarning

# The Theorem 3.1 functions are bound at import: their module needs only the compiled kernels.
from dpbounds.allocation_bound import (
    BERRY_ESSEEN_CONSTANT,
    LognormalMoments,
    Theorem31Result,
    delta_bound,
    delta_bound_terms,
    lognormal_moments,
    min_dataset_size,
    rounds_closed_form,
    rounds_required,
    theorem31,
)

#: Everything else is imported when it is first used (PEP 562), so that ``import dpbounds``
#: costs little more than ``import numpy``: public name -> (module, attribute); attribute None
#: for a module itself.  tests/project/test_import.py checks that each resolves.
_LAZY: dict[str, tuple[str, str | None]] = {
    "ufuncs": ("dpbounds._ufuncs", None),
    "lognormal_rho3": ("dpbounds._ufuncs", "lognormal_rho3"),
    "PrivacyBracket": ("dpbounds._result", "PrivacyBracket"),
    **{name: ("dpbounds.accountant", name) for name in (
        "PoissonAccountant", "PrivacyAccountant", "RandomAllocationAccountant", "RandomAllocationPLD",
        "exact_max_gap", "gap_ratio", "tradeoff_exact")},
    **{name: ("dpbounds.calibration", name) for name in (
        "calibrate_batch_size", "calibrate_epochs", "calibrate_noise")},
    "TradeoffCurve": ("dpbounds.curve", "TradeoffCurve"),
    "sweep": ("dpbounds.sweeps", "sweep"),
    **{name: ("dpbounds.epochs", name) for name in ("compose_delta", "per_epoch_delta")},
    **{name: ("dpbounds.normal", name) for name in ("log_ndtr", "ndtr", "ndtri", "ndtri_complement", "normal_pdf")},
    **{name: ("dpbounds.planner", name) for name in ("Plan", "PlanPoint", "plan")},
    **{name: ("dpbounds.tradeoff", name) for name in (
        "edgeworth_status", "f0delta_compose", "f0delta_tradeoff", "gaussian_compose", "gaussian_f0delta_tradeoff",
        "gaussian_max_gap", "gaussian_tradeoff", "multi_epoch_tradeoff", "sep", "sep_gaussian", "tradeoff_clt",
        "tradeoff_clt_slope", "tradeoff_edgeworth", "tradeoff_lower_bound")},
    **{name: ("dpbounds.gdp", name) for name in ("gdp_delta", "gdp_epsilon")},
    **{name: ("dpbounds.gdp_mu", name) for name in (
        "gdp_mu_poisson", "gdp_mu_poisson_drs", "gdp_mu_random_allocation")},
    # the submodules (attributes of the package once imported)
    **{name: (f"dpbounds.{name}", None) for name in (
        "accountant", "allocation_bound", "calibration", "composition", "curve", "epochs", "gdp", "gdp_mu",
        "normal", "outer", "planner", "rdp", "sampling", "sweeps", "tradeoff")},
}

if TYPE_CHECKING:   # what the names are, for type checkers and editors
    from dpbounds import _ufuncs as ufuncs
    from dpbounds import accountant as accountant
    from dpbounds import allocation_bound as allocation_bound
    from dpbounds import calibration as calibration
    from dpbounds import composition as composition
    from dpbounds import curve as curve
    from dpbounds import epochs as epochs
    from dpbounds import gdp as gdp
    from dpbounds import gdp_mu as gdp_mu
    from dpbounds import normal as normal
    from dpbounds import outer as outer
    from dpbounds import planner as planner
    from dpbounds import rdp as rdp
    from dpbounds import sampling as sampling
    from dpbounds import sweeps as sweeps
    from dpbounds import tradeoff as tradeoff
    from dpbounds._result import PrivacyBracket
    from dpbounds._ufuncs import lognormal_rho3
    from dpbounds.accountant import (
        PoissonAccountant,
        PrivacyAccountant,
        RandomAllocationAccountant,
        RandomAllocationPLD,
        exact_max_gap,
        gap_ratio,
        tradeoff_exact,
    )
    from dpbounds.calibration import calibrate_batch_size, calibrate_epochs, calibrate_noise
    from dpbounds.curve import TradeoffCurve
    from dpbounds.epochs import compose_delta, per_epoch_delta
    from dpbounds.gdp import gdp_delta, gdp_epsilon
    from dpbounds.gdp_mu import gdp_mu_poisson, gdp_mu_poisson_drs, gdp_mu_random_allocation
    from dpbounds.normal import log_ndtr, ndtr, ndtri, ndtri_complement, normal_pdf
    from dpbounds.planner import Plan, PlanPoint, plan
    from dpbounds.sweeps import sweep
    from dpbounds.tradeoff import (
        edgeworth_status,
        f0delta_compose,
        f0delta_tradeoff,
        gaussian_compose,
        gaussian_f0delta_tradeoff,
        gaussian_max_gap,
        gaussian_tradeoff,
        multi_epoch_tradeoff,
        sep,
        sep_gaussian,
        tradeoff_clt,
        tradeoff_clt_slope,
        tradeoff_edgeworth,
        tradeoff_lower_bound,
    )

__version__ = "0.1.0"

__all__ = [
    "DPBoundsError",
    "PrecisionWarning",
    "calibrate_noise",
    "calibrate_epochs",
    "calibrate_batch_size",
    "Plan",
    "PlanPoint",
    "plan",
    "PoissonAccountant",
    "PrivacyAccountant",
    "PrivacyBracket",
    "BERRY_ESSEEN_CONSTANT",
    "RandomAllocationAccountant",
    "RandomAllocationPLD",
    "TradeoffCurve",
    "exact_max_gap",
    "gap_ratio",
    "tradeoff_exact",
    "edgeworth_status",
    "f0delta_compose",
    "f0delta_tradeoff",
    "gaussian_compose",
    "gaussian_f0delta_tradeoff",
    "gaussian_tradeoff",
    "gdp_delta",
    "gdp_epsilon",
    "gaussian_max_gap",
    "gdp_mu_poisson",
    "gdp_mu_poisson_drs",
    "gdp_mu_random_allocation",
    "multi_epoch_tradeoff",
    "composition",
    "outer",
    "rdp",
    "sampling",
    "sep",
    "sep_gaussian",
    "sweep",
    "tradeoff_clt",
    "tradeoff_clt_slope",
    "tradeoff_edgeworth",
    "tradeoff_lower_bound",
    "LognormalMoments",
    "Theorem31Result",
    "compose_delta",
    "delta_bound",
    "delta_bound_terms",
    "log_ndtr",
    "lognormal_moments",
    "min_dataset_size",
    "ndtr",
    "ndtri",
    "ndtri_complement",
    "normal_pdf",
    "per_epoch_delta",
    "lognormal_rho3",
    "rounds_closed_form",
    "rounds_required",
    "theorem31",
    "ufuncs",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (see ``_LAZY``)."""
    spec = _LAZY.get(name)
    if spec is not None:
        module, attr = spec
        value = importlib.import_module(module)
        if attr is not None:
            value = getattr(value, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpbounds' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
