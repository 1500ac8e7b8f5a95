"""The one declaration of dpbounds' compiled elementwise surface.

Every numpy ufunc of :mod:`dpbounds.ufuncs` is declared here once: the C function it
calls, its arguments with their constraints, the fixed (choice) arguments that select a
variant, its outputs, its docstring, its accuracy claim with the regime where it holds
and the test that checks it, and one valid point.  ``tools/gen_ufuncs.py`` writes from
this table

* ``src/dpbounds/_ufuncs.pyx`` (the Cython loops and their registration),
* ``src/dpbounds/_ufuncs.pyi`` (the type stub),
* ``csrc/dpb_status.h`` (the one status-bit table shared by C and Python),
* ``docs/accuracy.md`` (the accuracy table of the documentation),

and ``tests/project/test_generated.py`` regenerates them and fails on any difference.  The
infrastructure tests (broadcasting, ``out=``, ``where=``, dtypes, NaN propagation,
stubs, naming) iterate over :data:`UFUNCS`.

Naming rule, mechanical as pyerfa's: the C function ``dpb_<name>`` is the ufunc
``<name>``, followed by the suffix of each fixed choice (``_exact``, ``_simplified``,
``_truncated``; the default choice of a switch may have an empty suffix).  The validated
Python function, where one exists, has the ufunc's name without its choice suffixes,
minus the prefix of the subpackage it lives in (``rdp_gaussian`` -> ``dpbounds.rdp.gaussian``).
This module is pure data (plus a few lookup helpers) and imports nothing compiled.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from dpbounds._errors import STATUS_BITS
from dpbounds._validation import CLT_SIGMA_MIN, Constraint

__all__ = [
    "Arg", "Accuracy", "UfuncSpec", "UFUNCS", "STATUS_BITS", "CONSTANTS", "DEFINED_HERE", "KERNEL_CHOICES",
    "by_name", "choice_suffix", "stem",
]

C = Constraint


@dataclass(frozen=True)
class Arg:
    """One input of a ufunc: its name (as the validated API spells it) and its constraint."""

    name: str
    constraint: Constraint
    c_type: str = "double"   # the C parameter type
    nan_means: str = ""      # a documented meaning of NaN for this argument ("" = NaN propagates)
    # a stricter rule the validated Python function enforces, where the ufunc still answers some
    # points beyond it (an exact endpoint) and NaN at the others (None: the constraint itself)
    validated: Optional[Constraint] = None


@dataclass(frozen=True)
class Accuracy:
    """An accuracy claim: ``bound`` in ``unit`` ("ulp", "relative", "absolute") on ``regime``.

    ``test`` is the ``file::function`` that checks the claim against an independent
    high-precision evaluation; ``tests/project/test_generated.py`` verifies that it exists.
    """

    unit: str
    bound: float
    regime: str
    test: str


@dataclass(frozen=True)
class UfuncSpec:
    name: str                               # the ufunc's name (naming rule above)
    c_function: str                         # the C function it calls
    args: tuple[Arg, ...]                   # ufunc inputs, in order
    doc: str                                # one paragraph; the first line is the summary
    point: tuple[float, ...]                # a valid point where the result is finite
    fixed: tuple[str, ...] = ()             # C constants appended to the call (choices)
    outputs: tuple[str, ...] = ("double",)  # C types of the outputs
    accuracy: Optional[Accuracy] = None     # None: an exact formula or a documented approximation
    python: Optional[str] = None            # dotted path of the validated wrapper, if any
    loop: str = "cython"                    # "cython" (@cython.ufunc) or "t31" (paired C loop)
    group: str = ""                         # documentation section
    status_bits: tuple[str, ...] = ()       # for status outputs: the bits it may set
    choices: tuple[tuple[str, str], ...] = field(default=())  # (argument, value) this variant fixes

    @property
    def nin(self) -> int:
        return len(self.args)

    @property
    def nout(self) -> int:
        return len(self.outputs)

    @property
    def private(self) -> bool:
        return self.name.startswith("_")


#: Every number the C core and Python share, exported by :mod:`dpbounds.ufuncs` (Python name ->
#: C macro): Python reads these, never a copy.  Each is defined once: in its C header, or, for
#: the limits of the validation vocabulary (which must be known before anything is compiled),
#: in :mod:`dpbounds._validation`, from where ``tools/gen_ufuncs.py`` writes it into
#: ``csrc/dpb_domain.h`` (:data:`DEFINED_HERE`).  tests/project/test_shared_constants.py checks both.
CONSTANTS: tuple[tuple[str, str, str], ...] = (
    ("BERRY_ESSEEN_CONSTANT", "DPB_BE_CONSTANT", "Berry-Esseen constant B of Theorem 3.1 (Shevtsova)."),
    ("ROUNDS_MAX", "DPB_ROUNDS_MAX", "Largest number of rounds searched, 2**53."),
    ("CLT_SIGMA_MIN", "DPB_CLT_SIGMA_MIN",
     "Smallest sigma at which the central-limit trade-off integral answers (below, its quadrature loses accuracy)."),
    ("RDP_ALPHA_MAX", "DPB_RDP_ALPHA_MAX", "Largest RDP order the kernels evaluate (above it they give NaN)."),
    ("RDP_QUAD_MAX_NODES", "DPB_RDP_QUAD_MAX_NODES",
     "Most quadrature nodes of one real-order evaluation of the Poisson-subsampled Gaussian (beyond: NaN)."),
)

#: The C macros of :data:`CONSTANTS` whose value is defined in Python (C macro -> value).
DEFINED_HERE: dict[str, float] = {"DPB_CLT_SIGMA_MIN": CLT_SIGMA_MIN}

#: The C enums the hand-written kernels (:mod:`dpbounds._kernels`) take by value, as the choices
#: a Python function offers: (Python name, meaning, ((choice, C constant), ...)).  Exported by
#: :mod:`dpbounds.ufuncs` as ``(choice, value)`` pairs read from C.
KERNEL_CHOICES: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("WOR_BOUNDS", "The variants of the Renyi-DP bound for subsampling without replacement (bound=...).",
     (("theorem9", "DPB_WOR_THEOREM9"), ("improved", "DPB_WOR_IMPROVED"), ("lower", "DPB_WOR_LOWER"))),
)

_T31 = "tests/special/test_theorem31.py::test_delta_min_and_terms_accuracy"
_LN = "tests/special/test_lognormal.py::test_accuracy"
_SIGMA_BOX = "sigma in [0.07, 1e4]"
_T31_BOX = "sigma in [0.07, 1e4], M in [3, 1e15]"

SIGMA = Arg("sigma", C.FINITE_POSITIVE)
# The lognormal moments and coefficients are continuous at sigma = +inf, where Y = 1: the C core
# returns the limit there (0 for the moments, inf for the coefficients; csrc/dpb_lognormal.h).
SIGMA_LN = Arg("sigma", C.POSITIVE)
ROUNDS = Arg("rounds", C.INTEGER_GE_3)
ROUNDS2 = Arg("rounds", C.INTEGER_GE_2)   # the central-limit curves need M - 1 >= 1
# the central-limit curves answer at the endpoints a = 0, 1 for every sigma > 0, elsewhere only
# from CLT_SIGMA_MIN on; the validated functions refuse any sigma below it
SIGMA_CLT = Arg("sigma", C.FINITE_POSITIVE, validated=C.CLT_SIGMA)
A = Arg("a", C.CLOSED_UNIT)

_COEF = (("simplified", "DPB_COEF_SIMPLIFIED"), ("exact", "DPB_COEF_EXACT"))
_CONV = (("classic", "DPB_CONV_CLASSIC"), ("improved", "DPB_CONV_IMPROVED"))


UFUNCS: tuple[UfuncSpec, ...] = tuple([
    # ------------------------------------------------------------ normal distribution
    UfuncSpec("ndtr", "dpb_ndtr", (Arg("x", C.ANY),),
              "Standard normal CDF Phi(x); subnormal results below x = -37.5.", (0.5,),
              accuracy=Accuracy("ulp", 4, "x in [-37.5, 8.3]", "tests/special/test_normal.py::test_ndtr_accuracy"),
              python="dpbounds.ndtr", group="normal"),
    UfuncSpec("log_ndtr", "dpb_log_ndtr", (Arg("x", C.ANY),),
              "log Phi(x), without underflow in the lower tail.", (-3.0,),
              accuracy=Accuracy("ulp", 4, "x in [-1e5, 8]", "tests/special/test_normal.py::test_log_ndtr_accuracy"),
              python="dpbounds.log_ndtr", group="normal"),
    UfuncSpec("ndtri", "dpb_ndtri", (Arg("p", C.CLOSED_UNIT),),
              "Inverse normal CDF Phi^{-1}(p); -inf at 0, inf at 1, NaN outside [0, 1].", (0.3,),
              accuracy=Accuracy("ulp", 4, "p in [1e-300, 1 - 2**-53] and subnormal p",
                                "tests/special/test_normal.py::test_ndtri_accuracy"),
              python="dpbounds.ndtri", group="normal"),
    UfuncSpec("ndtri_complement", "dpb_ndtri_complement", (Arg("a", C.CLOSED_UNIT),),
              "Phi^{-1}(1 - a) = -Phi^{-1}(a), without cancellation for tiny a.", (1e-10,),
              accuracy=Accuracy("ulp", 4, "a in [1e-300, 1 - 2**-53]",
                                "tests/special/test_normal.py::test_ndtri_complement_no_cancellation"),
              python="dpbounds.ndtri_complement", group="normal"),
    UfuncSpec("normal_pdf", "dpb_normal_pdf", (Arg("x", C.ANY),),
              "Standard normal density n(x) = exp(-x^2/2)/sqrt(2 pi).", (1.0,),
              accuracy=Accuracy("ulp", 4, "x in [-38, 38]", "tests/special/test_normal.py::test_normal_pdf"),
              python="dpbounds.normal_pdf", group="normal"),
    UfuncSpec("normal_mills", "dpb_normal_mills", (Arg("x", C.ANY),),
              "Lower-tail Mills ratio R(x) = Phi(x)/n(x).", (-2.0,),
              accuracy=Accuracy("ulp", 8, "x in [-1e4, 38]", "tests/tradeoff/test_tradeoff.py::test_mills_ratio_vs_mpmath"),
              group="normal"),
    # ------------------------------------------------------------ lognormal likelihood ratio
    UfuncSpec("lognormal_variance", "dpb_lognormal_variance", (SIGMA_LN,),
              "Var Y = e^{1/sigma^2} - 1 for the per-round likelihood ratio Y = exp(X/sigma - 1/(2 sigma^2)).",
              (1.0,), accuracy=Accuracy("relative", 1e-14, _SIGMA_BOX, _LN), group="lognormal"),
    UfuncSpec("lognormal_mu3", "dpb_lognormal_mu3", (SIGMA_LN,),
              "Third central moment of Y; inf where it exceeds the double range (sigma < 0.0685).",
              (1.0,), accuracy=Accuracy("relative", 1e-14, _SIGMA_BOX, _LN), group="lognormal"),
    UfuncSpec("lognormal_mu4", "dpb_lognormal_mu4", (SIGMA_LN,),
              "Fourth central moment of Y; inf where it exceeds the double range (sigma < 0.0915).",
              (1.0,), accuracy=Accuracy("relative", 1e-14, _SIGMA_BOX, _LN), group="lognormal"),
    UfuncSpec("lognormal_rho3", "dpb_lognormal_rho3", (SIGMA_LN,),
              "Exact third absolute central moment rho^3 = E|Y - 1|^3 of the likelihood ratio.",
              (1.0,), accuracy=Accuracy("relative", 1e-14, _SIGMA_BOX, _LN), python="dpbounds.lognormal_rho3",
              group="lognormal"),
    UfuncSpec("coef_simplified", "dpb_coef_simplified", (SIGMA_LN,),
              "(w^3 + 4)/(w - 1)^2 with w = e^{1/sigma^2}: the coefficient of Theorem 3.1 as stated.",
              (1.0,), accuracy=Accuracy("relative", 1e-14, _SIGMA_BOX, _LN), group="lognormal"),
    UfuncSpec("coef_exact", "dpb_coef_exact", (SIGMA_LN,),
              "rho^3/(w - 1)^2: the coefficient with the exact third absolute moment (smaller, equally valid).",
              (1.0,), accuracy=Accuracy("relative", 1e-14, _SIGMA_BOX, _LN), group="lognormal"),
    # ------------------------------------------------------------ Theorem 3.1
    *[UfuncSpec(f"delta_min_{v}", "dpb_delta_min", (SIGMA, Arg("rounds", C.ANY)),
                f"Six-term delta_min(sigma, M) of Theorem 3.1 with coef_{v}; no validity check, NaN for M < 3.",
                (1.0, 1e6), fixed=(m,), choices=(("coefficient", v),), loop="t31",
                accuracy=Accuracy("relative", 1e-14, _T31_BOX, _T31), group="theorem31")
      for v, m in _COEF],
    *[UfuncSpec(f"delta_bound_{v}", "dpb_delta_bound", (SIGMA, ROUNDS),
                f"delta_min with coef_{v} where Theorem 3.1 applies (condition (2) at delta_min), NaN elsewhere "
                "(including M not an integer >= 3).",
                (1.0, 1e6), fixed=(m,), choices=(("coefficient", v),), loop="t31", python="dpbounds.delta_bound",
                accuracy=Accuracy("relative", 1e-14, _T31_BOX, _T31), group="theorem31")
      for v, m in _COEF],
    *[UfuncSpec(f"_delta_bound_checked_{v}", "dpb_delta_bound_checked", (SIGMA, ROUNDS),
                f"(delta_bound with coef_{v}, status) in one pass; status bits as theorem31_status "
                "(internal: the argument checks of dpbounds.delta_bound inside the C loop).",
                (1.0, 1e6), fixed=(m,), outputs=("double", "signed char"), choices=(("coefficient", v),),
                loop="t31", status_bits=("BAD_INPUT", "SIGMA_BELOW_EDGE", "CONDITION2"),
                accuracy=Accuracy("relative", 1e-14, _T31_BOX, _T31), group="theorem31")
      for v, m in _COEF],
    *[UfuncSpec(f"delta_terms_{v}", "dpb_delta_terms", (SIGMA, Arg("rounds", C.ANY)),
                f"The six terms T1..T6 of delta_min (coef_{v}).", (1.0, 1e6), fixed=(m,),
                outputs=("double",) * 6, choices=(("coefficient", v),),
                accuracy=Accuracy("relative", 1e-14, _T31_BOX, _T31), group="theorem31")
      for v, m in _COEF],
    *[UfuncSpec(f"theorem31_status_{v}", "dpb_theorem31_status",
                (Arg("sigma", C.ANY), Arg("rounds", C.ANY),
                 Arg("delta", C.ANY, nan_means="evaluate condition (2) at delta_min")),
                f"Bitmask of the reasons Theorem 3.1 (coef_{v}) does not apply; 0 = it applies. "
                "delta = NaN evaluates condition (2) at delta_min.",
                (1.0, 1e6, 0.02), fixed=(m,), outputs=("int",), choices=(("coefficient", v),),
                status_bits=("BAD_INPUT", "ROUNDS_BELOW_3", "SIGMA_BELOW_EDGE", "CONDITION2", "DELTA_BELOW_MIN"),
                group="theorem31")
      for v, m in _COEF],
    # ------------------------------------------------------------ rounds, dataset size, epochs
    *[UfuncSpec(f"rounds_closed_form_{v}", "dpb_rounds_closed_form", (SIGMA, Arg("delta", C.OPEN_UNIT)),
                f"Closed-form rounds (eq. (4)) 1 + ((2 B coef sqrt(w-1) + sqrt((w-1)/(2 pi)))/delta)^2, coef_{v}.",
                (1.0, 0.01), fixed=(m,), choices=(("coefficient", v),), python="dpbounds.rounds_closed_form",
                accuracy=Accuracy("relative", 1e-14, "sigma in [0.07, 1e4], delta in [1e-12, 0.5]",
                                  "tests/special/test_rounds.py::test_closed_form_accuracy"), group="rounds")
      for v, m in _COEF],
    *[UfuncSpec(f"rounds_required_{v}{t}", "dpb_rounds_required", (SIGMA, Arg("delta", C.OPEN_UNIT)),
                f"Smallest integer M with delta_min(sigma, M) <= delta (coef_{v}) and Theorem 3.1 valid "
                f"(condition (2) at {'the target delta' if t else 'delta_min'}); inf if none <= 2**53.",
                (1.0, 0.01), fixed=(m, tv), choices=(("coefficient", v), ("validity_at", vat)),
                python="dpbounds.rounds_required", group="rounds")
      for v, m in _COEF for t, tv, vat in (("", "0", "delta_min"), ("_at_target", "1", "target"))],
    UfuncSpec("min_dataset_size", "dpb_min_dataset_size",
              (SIGMA, Arg("rounds", C.INTEGER_GE_1), Arg("clip_norm", C.FINITE_POSITIVE),
               Arg("noise_ratio", C.FINITE_POSITIVE)),
              "N = clip_norm * sigma * M / noise_ratio.", (1.0, 1e6, 1.0, 0.1),
              python="dpbounds.min_dataset_size", group="rounds"),
    UfuncSpec("compose_delta", "dpb_compose_delta", (Arg("delta", C.CLOSED_UNIT), Arg("epochs", C.INTEGER_GE_1)),
              "1 - (1 - delta)^E: the delta of f_{0,delta} composed E times.", (1e-6, 4.0),
              accuracy=Accuracy("relative", 1e-15, "delta in [1e-300, 1), E in [1, 1e15]",
                                "tests/special/test_epochs.py::test_compose_delta"),
              python="dpbounds.compose_delta", group="rounds"),
    UfuncSpec("per_epoch_delta", "dpb_per_epoch_delta",
              (Arg("delta_total", C.CLOSED_UNIT), Arg("epochs", C.INTEGER_GE_1)),
              "1 - (1 - delta_total)^(1/E): the per-epoch delta giving delta_total after E epochs.", (1e-5, 4.0),
              accuracy=Accuracy("relative", 1e-15, "delta in [1e-300, 1), E in [1, 1e15]",
                                "tests/special/test_epochs.py::test_compose_delta"),
              python="dpbounds.per_epoch_delta", group="rounds"),
    # ------------------------------------------------------------ trade-off curves
    UfuncSpec("gaussian_tradeoff", "dpb_gaussian_tradeoff", (A, Arg("mu", C.NONNEGATIVE)),
              "G_mu(a) = Phi(Phi^{-1}(1 - a) - mu); NaN for a outside [0, 1] or mu < 0.", (0.1, 1.0),
              accuracy=Accuracy("relative", 2e-13, "G >= 1e-300, a in [1e-300, 1 - 1e-16], mu in [0, 30]",
                                "tests/tradeoff/test_tradeoff.py::test_gaussian_tradeoff_vs_mpmath"),
              python="dpbounds.gaussian_tradeoff", group="tradeoff"),
    UfuncSpec("f0delta_tradeoff", "dpb_f0delta_tradeoff", (A, Arg("delta", C.CLOSED_UNIT)),
              "f_{0,delta}(a) = max(1 - a - delta, 0): one rounding of (1 - a) - delta.", (0.1, 0.01),
              python="dpbounds.f0delta_tradeoff", group="tradeoff"),
    UfuncSpec("gaussian_f0delta_tradeoff", "dpb_gaussian_f0delta_tradeoff",
              (A, Arg("mu", C.NONNEGATIVE), Arg("delta", C.CLOSED_UNIT)),
              "(G_mu (x) f_{0,delta})(a) = (1 - delta) G_mu(a/(1 - delta)) for a <= 1 - delta, else 0.",
              (0.1, 1.0, 0.01), python="dpbounds.gaussian_f0delta_tradeoff", group="tradeoff"),
    UfuncSpec("multi_epoch_tradeoff", "dpb_multi_epoch_tradeoff",
              (A, Arg("delta", C.CLOSED_UNIT), Arg("epochs", C.FINITE_NONNEGATIVE)),
              "max((1 - delta)^E - a, 0): f_{0,delta} composed E times.", (0.1, 0.01, 4.0),
              python="dpbounds.multi_epoch_tradeoff", group="tradeoff"),
    UfuncSpec("gaussian_max_gap", "dpb_gaussian_max_gap", (Arg("mu", C.NONNEGATIVE), Arg("delta", C.CLOSED_UNIT)),
              "max_a (1 - a - (G_mu (x) f_{0,delta})(a)) = 1 - (1 - delta) 2 Phi(-mu/2).", (1.0, 0.01),
              accuracy=Accuracy("ulp", 4, "mu in [0, 60], delta in [0, 1]", "tests/tradeoff/test_tradeoff.py::test_max_gap_vs_mpmath"),
              python="dpbounds.gaussian_max_gap", group="tradeoff"),
    UfuncSpec("tradeoff_clt", "dpb_tradeoff_clt", (A, SIGMA_CLT, ROUNDS2),
              "Central-limit trade-off integral of random allocation (untruncated); an approximation. "
              f"NaN for sigma < {CLT_SIGMA_MIN}, where its quadrature loses accuracy.",
              (0.1, 1.0, 1000.0), fixed=("0",), choices=(("truncated", "false"),),
              accuracy=Accuracy("absolute", 1e-14, "a in [1e-300, 1 - 1e-15], sigma in [0.3, 50], M in [3, 1e15]",
                                "tests/tradeoff/test_tradeoff.py::test_clt_vs_mpmath"),
              python="dpbounds.tradeoff_clt", group="tradeoff"),
    UfuncSpec("tradeoff_clt_truncated", "dpb_tradeoff_clt", (A, SIGMA_CLT, ROUNDS2),
              "Central-limit trade-off integral truncated at z_max; an approximation. "
              f"NaN for sigma < {CLT_SIGMA_MIN}, where its quadrature loses accuracy.",
              (0.1, 1.0, 1000.0), fixed=("1",), choices=(("truncated", "true"),),
              accuracy=Accuracy("absolute", 1e-14, "a in [1e-300, 1 - 1e-15], sigma in [0.3, 50], M in [3, 1e15]",
                                "tests/tradeoff/test_tradeoff.py::test_clt_truncated_vs_mpmath"),
              python="dpbounds.tradeoff_clt", group="tradeoff"),
    UfuncSpec("tradeoff_clt_slope", "dpb_tradeoff_clt_slope", (A, SIGMA_CLT, ROUNDS2),
              f"Derivative f'(a) of the untruncated central-limit curve; NaN for sigma < {CLT_SIGMA_MIN}, "
              "where its quadrature loses accuracy.", (0.1, 1.0, 1000.0),
              accuracy=Accuracy("relative", 1e-12, "a in [1e-12, 1 - 1e-12], sigma in [0.3, 50], M in [3, 1e15]",
                                "tests/tradeoff/test_tradeoff.py::test_clt_slope_vs_mpmath"),
              python="dpbounds.tradeoff_clt_slope", group="tradeoff"),
    UfuncSpec("tradeoff_edgeworth", "dpb_tradeoff_edgeworth", (A, SIGMA, ROUNDS),
              "Edgeworth-corrected trade-off integral; an approximation, NaN where p_M is not invertible "
              "(see edgeworth_status).", (0.1, 1.0, 1000.0),
              accuracy=Accuracy("absolute", 1e-13, "c_M = gamma1/(6 sqrt M) <= 2.2",
                                "tests/tradeoff/test_tradeoff.py::test_edgeworth_vs_mpmath"),
              python="dpbounds.tradeoff_edgeworth", group="tradeoff"),
    UfuncSpec("edgeworth_status", "dpb_edgeworth_status", (Arg("a", C.ANY), Arg("sigma", C.ANY), Arg("rounds", C.ANY)),
              "Bitmask of the reasons tradeoff_edgeworth is NaN; 0 = defined.", (0.1, 1.0, 1000.0),
              outputs=("int",), status_bits=("BAD_INPUT", "NOT_MONOTONE_AT_0", "OUT_OF_RANGE"),
              python="dpbounds.edgeworth_status", group="tradeoff"),
    UfuncSpec("edgeworth_p", "dpb_edgeworth_p", (Arg("y", C.ANY), SIGMA, Arg("n", C.FINITE_POSITIVE)),
              "The Edgeworth polynomial p_n(y) of the lognormal likelihood ratio.", (0.5, 1.0, 100.0),
              accuracy=Accuracy("relative", 1e-14, "sigma in [0.3, 50], n in [1, 1e15], |y| <= 40",
                                "tests/tradeoff/test_tradeoff.py::test_edgeworth_polynomial_vs_mpmath"),
              group="tradeoff"),
    *[UfuncSpec(f"tradeoff_lower_bound_{v}", "dpb_tradeoff_lower_bound", (A, SIGMA, ROUNDS2),
                f"max(1 - a - delta_min, 0) with coef_{v} where Theorem 3.1 applies; NaN elsewhere.",
                (0.1, 1.0, 1e6), fixed=(m,), choices=(("coefficient", v),),
                python="dpbounds.tradeoff_lower_bound", group="tradeoff")
      for v, m in _COEF],
    # ------------------------------------------------------------ Gaussian DP
    UfuncSpec("gdp_delta", "dpb_gdp_delta", (Arg("eps", C.REAL), Arg("mu", C.NONNEGATIVE)),
              "delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) of mu-GDP.", (1.0, 1.0),
              accuracy=Accuracy("relative", 1e-13, "delta >= 1e-300 (times max(1, |u|/mu) outside mu <= 0.01, 0 <= eps <= 1/2)",
                                "tests/tradeoff/test_tradeoff.py::test_gdp_delta_vs_mpmath"),
              python="dpbounds.gdp_delta", group="gdp"),
    UfuncSpec("gdp_log_delta", "dpb_gdp_log_delta", (Arg("eps", C.REAL), Arg("mu", C.NONNEGATIVE)),
              "log delta(eps) of mu-GDP, finite far below the double range of delta.", (1.0, 1.0),
              accuracy=Accuracy("relative", 1e-13, "1e-300 <= delta <= 0.5 (times max(1, |u|/mu) outside mu <= 0.01, 0 <= eps <= 1/2)",
                                "tests/tradeoff/test_tradeoff.py::test_gdp_delta_vs_mpmath"),
              group="gdp"),
    UfuncSpec("gdp_epsilon", "dpb_gdp_epsilon", (Arg("delta", C.CLOSED_UNIT), Arg("mu", C.NONNEGATIVE)),
              "Smallest eps >= 0 with delta(eps; mu) <= delta under mu-GDP.", (1e-5, 1.0),
              accuracy=Accuracy("relative", 1e-13, "delta in [1e-300, delta(0)), mu in [2.2e-308, 50]",
                                "tests/tradeoff/test_tradeoff.py::test_gdp_epsilon_vs_mpmath"),
              python="dpbounds.gdp_epsilon", group="gdp"),
    UfuncSpec("gdp_mu_random_allocation", "dpb_gdp_mu_random_allocation",
              (SIGMA, ROUNDS2, Arg("epochs", C.FINITE_NONNEGATIVE)),
              "sqrt(E (e^{1/sigma^2} - 1)/(M - 1)): the asymptotic Gaussian-DP mu of random allocation "
              "(an approximation, not a bound).", (1.0, 1000.0, 1.0),
              python="dpbounds.gdp_mu_random_allocation", group="gdp"),
    UfuncSpec("gdp_mu_poisson", "dpb_gdp_mu_poisson",
              (SIGMA, Arg("sample_rate", C.CLOSED_UNIT), Arg("steps", C.FINITE_NONNEGATIVE)),
              "Central-limit mu = p sqrt(T (e^{1/sigma^2} - 1)) for Poisson subsampling (an approximation).",
              (1.0, 0.01, 1000.0), python="dpbounds.gdp_mu_poisson", group="gdp"),
    UfuncSpec("gdp_mu_poisson_drs", "dpb_gdp_mu_poisson_drs",
              (SIGMA, Arg("sample_rate", C.CLOSED_UNIT), Arg("steps", C.FINITE_NONNEGATIVE)),
              "Dong-Roth-Su central-limit mu for Poisson subsampling (an approximation).", (1.0, 0.01, 1000.0),
              accuracy=Accuracy("relative", 1e-14, "sigma in [0.05, 1e4]",
                                "tests/tradeoff/test_tradeoff.py::test_mu_poisson_drs_vs_mpmath"),
              python="dpbounds.gdp_mu_poisson_drs", group="gdp"),
    # ------------------------------------------------------------ Renyi DP
    UfuncSpec("rdp_gaussian", "dpb_rdp_gaussian", (Arg("alpha", C.ORDER), SIGMA),
              "RDP of the Gaussian mechanism, alpha/(2 sigma^2).", (2.0, 1.0),
              accuracy=Accuracy("ulp", 2, "alpha in [1, inf), sigma > 0", "tests/rdp/test_rdp_kernels.py::test_base_edges"),
              python="dpbounds.rdp.gaussian", group="rdp"),
    UfuncSpec("rdp_laplace", "dpb_rdp_laplace", (Arg("alpha", C.ORDER), Arg("b", C.FINITE_POSITIVE)),
              "RDP of the Laplace mechanism with scale b (L1 sensitivity 1).", (2.0, 1.0),
              accuracy=Accuracy("relative", 1e-14, "b in [1e-3, 1e6], alpha in [1, 1e4]",
                                "tests/rdp/test_rdp_kernels.py::test_laplace_vs_mpmath"),
              python="dpbounds.rdp.laplace", group="rdp"),
    UfuncSpec("rdp_randomized_response", "dpb_rdp_randomized_response",
              (Arg("alpha", C.ORDER), Arg("p", C.OPEN_UNIT)),
              "RDP of binary randomized response, truthful with probability p.", (2.0, 0.75),
              accuracy=Accuracy("relative", 1e-14, "p in [1e-6, 1 - 1e-6], alpha in [1, 1e4]",
                                "tests/rdp/test_rdp_kernels.py::test_randomized_response_vs_mpmath"),
              python="dpbounds.rdp.randomized_response", group="rdp"),
    UfuncSpec("rdp_poisson_gaussian_exact", "dpb_rdp_poisson_gaussian",
              (Arg("alpha", C.ORDER), SIGMA, Arg("q", C.CLOSED_UNIT)),
              "RDP of the Poisson-subsampled Gaussian (add/remove), exact at every real alpha >= 1.",
              (2.5, 1.0, 0.01), fixed=("DPB_POISSON_EXACT",), choices=(("mode", "exact"),),
              accuracy=Accuracy("relative", 1e-12, "q in [1e-9, 0.9], sigma in [0.5, 30], alpha <= 256",
                                "tests/rdp/test_rdp_kernels.py::test_poisson_integer_vs_mpmath"),
              python="dpbounds.rdp.poisson_gaussian", group="rdp"),
    UfuncSpec("rdp_poisson_gaussian_compat", "dpb_rdp_poisson_gaussian",
              (Arg("alpha", C.ORDER), SIGMA, Arg("q", C.CLOSED_UNIT)),
              "Poisson-subsampled Gaussian RDP with the |C(a, i)| series at fractional alpha "
              "(the convention of TF-Privacy, dp-accounting and Opacus).",
              (2.5, 1.0, 0.01), fixed=("DPB_POISSON_COMPAT",), choices=(("mode", "compat"),),
              accuracy=Accuracy("relative", 1e-10, "sigma in [0.7, 5], q in [1e-6, 0.05], fractional alpha "
                                "in [1.5, 10.5], against the infinite |C| series (outside that box, near q = 1/2 at "
                                "sigma >= 1e3, up to 1e-9 above it was measured)",
                                "tests/rdp/test_rdp_kernels.py::test_poisson_compat_and_signed_series"),
              python="dpbounds.rdp.poisson_gaussian", group="rdp"),
    UfuncSpec("rdp_poisson_quad_log", "dpb_rdp_poisson_quad_log",
              (Arg("alpha", C.ORDER), SIGMA, Arg("q", C.CLOSED_UNIT)),
              "log(A_alpha - 1) of the Poisson-subsampled Gaussian by quadrature (alpha > 1), log KL at alpha = 1.",
              (2.5, 1.0, 0.01),
              accuracy=Accuracy("relative", 1e-12, "q in [1e-9, 0.9], sigma in [0.5, 30], alpha <= 20.5",
                                "tests/rdp/test_rdp_kernels.py::test_poisson_fractional_exact_vs_quadrature"),
              group="rdp"),
    UfuncSpec("rdp_poisson_negseries_log", "dpb_rdp_poisson_negseries_log",
              (Arg("alpha", C.ORDER), SIGMA, Arg("q", C.CLOSED_UNIT)),
              "log of the sum of the negative-coefficient terms of the binomial series (-inf at integer alpha).",
              (2.5, 1.0, 0.01), group="rdp"),
    *[UfuncSpec(f"rdp_eps_objective_{v}", "dpb_rdp_eps_objective",
                (Arg("alpha", C.ORDER), Arg("rdp", C.NONNEGATIVE), Arg("delta", C.OPEN_UNIT)),
                doc, (8.0, 0.5, 1e-5), fixed=(m,), choices=(("conversion", v),),
                accuracy=Accuracy("ulp", 4, "alpha in [1.01, 1e4], rdp in [1e-6, 1e3], delta in [1e-300, 0.5]; "
                                  "ulp of the largest term", "tests/rdp/test_rdp_kernels.py::test_conversion_objectives_vs_mpmath"),
                group="rdp")
      for v, m, doc in (
          ("classic", "DPB_CONV_CLASSIC", "rdp + log(1/delta)/(alpha - 1): the classic RDP -> (eps, delta) "
                                          "objective at one order."),
          ("improved", "DPB_CONV_IMPROVED", "The improved RDP -> (eps, delta) objective at one order "
                                            "(Balle et al. 2020)."))],
    *[UfuncSpec(f"rdp_logdelta_objective_{v}", "dpb_rdp_logdelta_objective",
                (Arg("alpha", C.ORDER), Arg("rdp", C.NONNEGATIVE), Arg("eps", C.NONNEGATIVE)),
                doc, (8.0, 0.5, 1.0), fixed=(m,), choices=(("conversion", v),),
                accuracy=Accuracy("ulp", 4, "alpha in [1.01, 1e4], rdp in [1e-6, 1e3], eps in [1e-300, 0.5]; "
                                  "ulp of the largest term", "tests/rdp/test_rdp_kernels.py::test_conversion_objectives_vs_mpmath"),
                group="rdp")
      for v, m, doc in (
          ("classic", "DPB_CONV_CLASSIC", "(alpha - 1)(rdp - eps), clipped at 0: the classic log delta at one order."),
          ("improved", "DPB_CONV_IMPROVED", "The improved log delta at one order (with the total-variation "
                                            "shortcut), clipped at 0."))],
    # the conversions rounded towards the safe side (csrc/dpb_rdp_outward.h): what the validated
    # conversions and the accountant evaluate
    *[UfuncSpec(f"_rdp_eps_up_{v}", "dpb_rdp_eps_up",
                (Arg("alpha", C.ORDER), Arg("rdp", C.NONNEGATIVE), Arg("delta", C.OPEN_UNIT)),
                f"The {v} RDP -> (eps, delta) objective at one order, never below its exact value and at "
                "most 8 ulp of its largest term above (the objective dpbounds.rdp.epsilon minimises; "
                "measured there).", (8.0, 0.5, 1e-5), fixed=(m,), choices=(("conversion", v),), group="rdp")
      for v, m in _CONV],
    *[UfuncSpec(f"_rdp_logdelta_up_{v}", "dpb_rdp_logdelta_up",
                (Arg("alpha", C.ORDER), Arg("rdp", C.NONNEGATIVE), Arg("eps", C.NONNEGATIVE)),
                f"The {v} log delta at one order (clipped at 0), never below its exact value and at most "
                "8 ulp of its largest term above (the objective dpbounds.rdp.delta minimises; measured "
                "there).", (8.0, 0.5, 1.0), fixed=(m,), choices=(("conversion", v),), group="rdp")
      for v, m in _CONV],
    *[UfuncSpec(f"_rdp_delta_up_{v}", "dpb_rdp_delta_up",
                (Arg("alpha", C.ORDER), Arg("rdp", C.NONNEGATIVE), Arg("eps", C.NONNEGATIVE)),
                f"The {v} delta at one order, never below its exact value (0 only where that is 0).",
                (8.0, 0.5, 1.0), fixed=(m,), choices=(("conversion", v),), group="rdp")
      for v, m in _CONV],
    UfuncSpec("_rdp_exp_up", "dpb_rdp_exp_up", (Arg("x", C.ANY),),
              "exp(x), never below the exact exponential (0 only at x = -inf), at most 1 for x <= 0.", (-1.0,),
              group="rdp"),
    UfuncSpec("rdp_interp", "dpb_rdp_interp",
              (Arg("alpha", C.ORDER), Arg("eps_floor", C.NONNEGATIVE), Arg("eps_ceil", C.NONNEGATIVE)),
              "Interpolation of the cumulant generating function between floor(alpha) and ceil(alpha) "
              "(Corollary 10 of the subsampling-without-replacement analysis); alpha <= 2 gives eps_ceil.",
              (2.5, 0.1, 0.2), group="rdp"),
])


_BY_NAME = {u.name: u for u in UFUNCS}

# The name suffix of each fixed choice; any other (argument, value) pair gives "_<value>".
_SUFFIX = {
    ("truncated", "false"): "",
    ("truncated", "true"): "_truncated",
    ("validity_at", "delta_min"): "",
    ("validity_at", "target"): "_at_target",
}


def choice_suffix(argument: str, value: str) -> str:
    """The part of a ufunc's name that a fixed choice contributes (naming rule above)."""
    return _SUFFIX.get((argument, value), "_" + value)


def stem(spec: UfuncSpec) -> str:
    """The ufunc's name without its choice suffixes and leading underscore: the C name minus ``dpb_``."""
    name = spec.name.lstrip("_")
    suffix = "".join(choice_suffix(a, v) for a, v in spec.choices)
    return name[: len(name) - len(suffix)] if suffix else name


def by_name(name: str) -> UfuncSpec:
    """The declaration of ufunc ``name`` (``KeyError`` if there is none)."""
    return _BY_NAME[name]
