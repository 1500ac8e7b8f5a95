# cython: language_level=3
"""Raw numpy ufuncs over the C core (csrc/).

Every function here is a genuine ``numpy.ufunc``: it broadcasts, accepts ``out=``
and ``where=``, releases the GIL inside its loop and dispatches through
``__array_ufunc__`` (dask and xarray arrays pass through lazily).  Following numpy
conventions these kernels never raise: NaN in gives NaN out, and arguments outside
a function's domain give NaN.  The validated functions in :mod:`dpbounds`
check their arguments and raise ``ValueError`` instead.
"""
cimport cython
from libc.math cimport NAN, isinf, isnan, floor
from dpbounds._csrc cimport *


# ---------------------------------------------------------------- normal
@cython.ufunc
cdef double ndtr(double x) noexcept nogil:
    """Standard normal CDF Phi(x); <= 4 ulp relative on [-37.5, 8.3], subnormal below."""
    return dpb_ndtr(x)

@cython.ufunc
cdef double log_ndtr(double x) noexcept nogil:
    """log Phi(x); <= 4 ulp relative on [-1e5, 8]."""
    return dpb_log_ndtr(x)

@cython.ufunc
cdef double ndtri(double p) noexcept nogil:
    """Phi^{-1}(p); <= 4 ulp relative on [1e-300, 1 - 2**-53] and subnormal p; NaN outside [0, 1]."""
    return dpb_ndtri(p)

@cython.ufunc
cdef double ndtri_complement(double a) noexcept nogil:
    """Phi^{-1}(1 - a) = -Phi^{-1}(a), without cancellation for tiny a."""
    return dpb_ndtri_complement(a)

@cython.ufunc
cdef double normal_pdf(double x) noexcept nogil:
    """Standard normal density n(x) = exp(-x^2/2)/sqrt(2 pi)."""
    return dpb_normal_pdf(x)


# ---------------------------------------------------------------- lognormal
@cython.ufunc
cdef double lognormal_variance(double sigma) noexcept nogil:
    """Var Y = e^{1/sigma^2} - 1 for Y = exp(X/sigma - 1/(2 sigma^2)); NaN for sigma <= 0."""
    return dpb_lognormal_variance(sigma)

@cython.ufunc
cdef double lognormal_mu3(double sigma) noexcept nogil:
    """Third central moment of Y; inf where it exceeds DBL_MAX (sigma < 0.0685)."""
    return dpb_lognormal_mu3(sigma)

@cython.ufunc
cdef double lognormal_mu4(double sigma) noexcept nogil:
    """Fourth central moment of Y; inf where it exceeds DBL_MAX (sigma < 0.0915)."""
    return dpb_lognormal_mu4(sigma)

@cython.ufunc
cdef double rho3(double sigma) noexcept nogil:
    """Exact third absolute central moment E|Y - 1|^3 (SPEC A.3); <= 1e-14 relative on [0.07, 1e4]."""
    return dpb_lognormal_rho3(sigma)

@cython.ufunc
cdef double coef_simplified(double sigma) noexcept nogil:
    """(w^3 + 4)/(w - 1)^2 with w = e^{1/sigma^2}: the coefficient of eq. (22)."""
    return dpb_coef_simplified(sigma)

@cython.ufunc
cdef double coef_exact(double sigma) noexcept nogil:
    """rho3/(w - 1)^2: the exact-moment coefficient of section 3.1."""
    return dpb_coef_exact(sigma)


# ---------------------------------------------------------------- Theorem 3.1
@cython.ufunc
cdef double delta_min_simplified(double sigma, double rounds) noexcept nogil:
    """Six-term delta_min(sigma, M) of Theorem 3.1 with coef_simplified. No validity check; NaN for M < 3."""
    return dpb_delta_min(sigma, rounds, DPB_COEF_SIMPLIFIED)

@cython.ufunc
cdef double delta_min_exact(double sigma, double rounds) noexcept nogil:
    """Six-term delta_min(sigma, M) of Theorem 3.1 with coef_exact. No validity check; NaN for M < 3."""
    return dpb_delta_min(sigma, rounds, DPB_COEF_EXACT)

cdef inline double _bound(double sigma, double rounds, int kind) noexcept nogil:
    cdef dpb_t31_sigma c
    cdef double dmin
    if dpb_t31_prepare_delta(sigma, kind, &c) != 0:
        return NAN
    if dpb_t31_status(&c, rounds, NAN, &dmin) != 0:
        return NAN
    return dmin

@cython.ufunc
cdef double delta_bound_simplified(double sigma, double rounds) noexcept nogil:
    """delta_min with coef_simplified where Theorem 3.1 applies (condition (2) at delta_min), NaN elsewhere."""
    return _bound(sigma, rounds, DPB_COEF_SIMPLIFIED)

@cython.ufunc
cdef double delta_bound_exact(double sigma, double rounds) noexcept nogil:
    """delta_min with coef_exact where Theorem 3.1 applies (condition (2) at delta_min), NaN elsewhere."""
    return _bound(sigma, rounds, DPB_COEF_EXACT)

cdef inline (double, signed char) _checked(double sigma, double rounds, long kind) noexcept nogil:
    cdef dpb_t31_sigma c
    cdef double dmin
    cdef signed char bad = 0
    # isnan first: an ordered comparison with NaN raises the invalid flag
    if isnan(sigma) or not (sigma > 0.0) or isinf(sigma):
        bad |= 1
    if isnan(rounds) or not (rounds >= 3.0) or isinf(rounds) or rounds != floor(rounds):
        bad |= 2
    if bad:
        return NAN, bad
    dpb_t31_prepare_delta(sigma, <int>kind, &c)
    if dpb_t31_status(&c, rounds, NAN, &dmin) != 0:
        return NAN, 4
    return dmin, 0

@cython.ufunc
cdef (double, signed char) _delta_bound_checked(double sigma, double rounds, long kind) noexcept nogil:
    """(delta_bound, status) in one pass: status 1 bad sigma, 2 bad rounds, 4 theorem invalid.

    Internal: lets the validated :func:`dpbounds.delta_bound` check its arguments inside
    the C loop instead of in separate numpy passes.
    """
    return _checked(sigma, rounds, kind)

cdef inline (double, double, double, double, double, double) _terms(double sigma, double rounds, int kind) noexcept nogil:
    cdef dpb_t31_sigma c
    cdef double t[6]
    dpb_t31_prepare(sigma, kind, &c)
    dpb_t31_terms(&c, rounds, t)
    return t[0], t[1], t[2], t[3], t[4], t[5]

@cython.ufunc
cdef (double, double, double, double, double, double) delta_terms_simplified(double sigma, double rounds) noexcept nogil:
    """The six terms T1..T6 of delta_min (coef_simplified)."""
    return _terms(sigma, rounds, DPB_COEF_SIMPLIFIED)

@cython.ufunc
cdef (double, double, double, double, double, double) delta_terms_exact(double sigma, double rounds) noexcept nogil:
    """The six terms T1..T6 of delta_min (coef_exact)."""
    return _terms(sigma, rounds, DPB_COEF_EXACT)

@cython.ufunc
cdef int theorem31_status(double sigma, double rounds, double delta, long coefficient) noexcept nogil:
    """Bitmask of reasons Theorem 3.1 does not apply (0 = valid). delta = NaN evaluates (2) at delta_min.

    Bits: 1 rounds < 3; 2 sigma < sqrt(3/ln M); 4 condition (2) fails; 8 delta < delta_min;
    16 bad input. coefficient: 0 simplified, 1 exact.
    """
    return dpb_theorem31_status(sigma, rounds, delta, coefficient)


# ---------------------------------------------------------------- rounds, dataset size, epochs
@cython.ufunc
cdef double rounds_closed_form(double sigma, double delta, long coefficient) noexcept nogil:
    """Eq. (4): 1 + ((2 B coef sqrt(w-1) + sqrt((w-1)/(2 pi)))/delta)^2. coefficient: 0 simplified, 1 exact."""
    return dpb_rounds_closed_form(sigma, delta, coefficient)

@cython.ufunc
cdef double rounds_required(double sigma, double delta, long coefficient, long validity_at_target) noexcept nogil:
    """Smallest integer M with delta_min(sigma, M) <= delta and Theorem 3.1 valid; inf if none <= 2**53."""
    return dpb_rounds_required(sigma, delta, coefficient, validity_at_target)

@cython.ufunc
cdef double min_dataset_size(double sigma, double rounds, double clip_norm, double noise_ratio) noexcept nogil:
    """N = clip_norm * sigma * M / noise_ratio."""
    return dpb_min_dataset_size(sigma, rounds, clip_norm, noise_ratio)

@cython.ufunc
cdef double compose_delta(double delta, double epochs) noexcept nogil:
    """1 - (1 - delta)^E: the delta of f_{0,delta} composed E times."""
    return dpb_compose_delta(delta, epochs)

@cython.ufunc
cdef double per_epoch_delta(double delta_total, double epochs) noexcept nogil:
    """1 - (1 - delta_total)^(1/E): the per-epoch delta giving delta_total after E epochs."""
    return dpb_per_epoch_delta(delta_total, epochs)
