"""dpbounds: fast, exact differential-privacy bounds for DP-SGD.

Validated API (raises ``ValueError`` naming the bad parameter):
    delta_bound, delta_bound_terms, theorem31, rounds_closed_form, rounds_required,
    min_dataset_size, lognormal_moments, compose_delta, per_epoch_delta
Trade-off curves and Gaussian DP (``dpbounds.tradeoff``, ``TradeoffCurve``), Renyi DP
(``dpbounds.rdp``); the exact random-allocation accountant (``dpbounds.accountant``);
batch samplers matching the accountants (``dpbounds.sampling``); Theorem 3.1 on Cartesian
grids, axis by axis (``dpbounds.outer``); bulk sweeps of any of these over parameter grids
(``dpbounds.sweep``).
Special functions and raw kernels (numpy ufuncs, NaN conventions):
    ndtr, log_ndtr, ndtri, ndtri_complement, normal_pdf, lognormal_rho3, and ``dpbounds.ufuncs``
    (every compiled ufunc; see docs/accuracy.md).
"""
from dpbounds import _ufuncs as ufuncs
from dpbounds import composition, outer, rdp, sampling
from dpbounds._errors import DPBoundsError, PrecisionWarning
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
from dpbounds.normal import log_ndtr, ndtr, ndtri, ndtri_complement, normal_pdf
from dpbounds.planner import Plan, PlanPoint, plan
from dpbounds.sweep import sweep  # the function; its module stays importable as dpbounds.sweep._*
from dpbounds.theorem31 import (
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
from dpbounds.tradeoff import (
    edgeworth_status,
    f0delta_compose,
    f0delta_tradeoff,
    gaussian_compose,
    gaussian_f0delta_tradeoff,
    gaussian_max_gap,
    gaussian_tradeoff,
    gdp_delta,
    gdp_epsilon,
    gdp_mu_poisson,
    gdp_mu_poisson_drs,
    gdp_mu_random_allocation,
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
