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
cimport numpy as cnp
from libc.math cimport NAN, isinf, isnan, floor
from dpbounds._csrc cimport *

cnp.import_array()
cnp.import_ufunc()


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
# The Theorem 3.1 bound kernels have hand-written loops (dpb_t31_eval_n) that take two
# points at a time, so they are built with PyUFunc_FromFuncAndData rather than
# @cython.ufunc; each point is bit-identical to the one-point C functions.
cdef void _loop_t31(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps, void *data) noexcept nogil:
    cdef long flags = <long>data
    dpb_t31_eval_n(args[0], steps[0], args[1], steps[1], args[2], steps[2], NULL, 0,
                   dims[0], <int>(flags & 1), <int>(flags >> 1))

cdef void _loop_t31_checked(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps, void *data) noexcept nogil:
    cdef long flags = <long>data
    dpb_t31_eval_n(args[0], steps[0], args[1], steps[1], args[2], steps[2], args[3], steps[3],
                   dims[0], <int>(flags & 1), <int>(flags >> 1))

cdef cnp.PyUFuncGenericFunction _t31_loops[1]
cdef cnp.PyUFuncGenericFunction _t31_checked_loops[1]
cdef char _t31_types[3]
cdef char _t31_checked_types[4]
cdef void *_t31_data[6]
_t31_loops[0] = <cnp.PyUFuncGenericFunction>_loop_t31
_t31_checked_loops[0] = <cnp.PyUFuncGenericFunction>_loop_t31_checked
_t31_types[0] = cnp.NPY_DOUBLE
_t31_types[1] = cnp.NPY_DOUBLE
_t31_types[2] = cnp.NPY_DOUBLE
_t31_checked_types[0] = cnp.NPY_DOUBLE
_t31_checked_types[1] = cnp.NPY_DOUBLE
_t31_checked_types[2] = cnp.NPY_DOUBLE
_t31_checked_types[3] = cnp.NPY_BYTE
for _k in range(6):
    # data = coefficient | (mode << 1)
    _t31_data[_k] = <void *><long>((_k & 1) | ((_k >> 1) << 1))

_keep = []  # names and docstrings must outlive the ufuncs (numpy keeps the pointers)


cdef object _make_t31(int coefficient, int mode, str name, str doc):
    cdef bytes bname = name.encode(), bdoc = doc.encode()
    _keep.extend((bname, bdoc))
    cdef int k = coefficient | (mode << 1)
    if mode == DPB_T31_MODE_CHECKED:
        return cnp.PyUFunc_FromFuncAndData(_t31_checked_loops, &_t31_data[k], _t31_checked_types,
                                           1, 2, 2, cnp.PyUFunc_None, bname, bdoc, 0)
    return cnp.PyUFunc_FromFuncAndData(_t31_loops, &_t31_data[k], _t31_types,
                                       1, 2, 1, cnp.PyUFunc_None, bname, bdoc, 0)


delta_min_simplified = _make_t31(
    DPB_COEF_SIMPLIFIED, DPB_T31_MODE_DELTA_MIN, "delta_min_simplified",
    "Six-term delta_min(sigma, M) of Theorem 3.1 with coef_simplified. No validity check; NaN for M < 3.")
delta_min_exact = _make_t31(
    DPB_COEF_EXACT, DPB_T31_MODE_DELTA_MIN, "delta_min_exact",
    "Six-term delta_min(sigma, M) of Theorem 3.1 with coef_exact. No validity check; NaN for M < 3.")
delta_bound_simplified = _make_t31(
    DPB_COEF_SIMPLIFIED, DPB_T31_MODE_BOUND, "delta_bound_simplified",
    "delta_min with coef_simplified where Theorem 3.1 applies (condition (2) at delta_min), NaN elsewhere.")
delta_bound_exact = _make_t31(
    DPB_COEF_EXACT, DPB_T31_MODE_BOUND, "delta_bound_exact",
    "delta_min with coef_exact where Theorem 3.1 applies (condition (2) at delta_min), NaN elsewhere.")
_delta_bound_checked_simplified = _make_t31(
    DPB_COEF_SIMPLIFIED, DPB_T31_MODE_CHECKED, "_delta_bound_checked_simplified",
    "(delta_bound, status) in one pass: status 1 bad sigma, 2 rounds not an integer >= 3, "
    "4 theorem invalid (internal: argument checks inside the C loop for dpbounds.delta_bound).")
_delta_bound_checked_exact = _make_t31(
    DPB_COEF_EXACT, DPB_T31_MODE_CHECKED, "_delta_bound_checked_exact",
    "(delta_bound, status) in one pass: status 1 bad sigma, 2 rounds not an integer >= 3, "
    "4 theorem invalid (internal: argument checks inside the C loop for dpbounds.delta_bound).")

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


def _libmvec_in_use():
    """True when glibc's vector math library (libmvec) serves exp/expm1/erfc in this module."""
    return bool(dpb_vecmath_is_native())
