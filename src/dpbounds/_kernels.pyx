# cython: language_level=3
"""Hand-written compiled code that is not elementwise (the ufuncs are generated: _ufuncs.pyx).

* Kernels of the exact random-allocation accountant: the lognormal characteristic function
  (plain, tilted, on a grid), the log-domain convolution, the phase-exact Fourier series.
* Loops of the Renyi-DP bounds for subsampling without replacement, which share a workspace
  along the flattened arguments.
* The scalar fast paths of the validated Theorem 3.1 functions (``delta_bound``,
  ``rounds_closed_form``, ``rounds_required``, ``min_dataset_size``): a call with Python
  numbers goes straight to C; anything else is validated as whole arrays and dispatched to
  the ufuncs.  Bad arguments are reported by the constraint vocabulary of
  :mod:`dpbounds._validation`, the same messages as the array path.
* The Cartesian-grid kernels behind :mod:`dpbounds.outer` (``outer_*``, raw: the ufuncs' NaN
  conventions), run tile by tile with the GIL released and Ctrl-C checked between tiles.
"""
cimport cython
import numpy as np
cimport numpy as cnp
from libc.math cimport NAN, INFINITY, isnan, isinf, floor, lgamma, sqrt
from libc.stdlib cimport malloc, free
from cpython.exc cimport PyErr_CheckSignals, PyErr_Occurred
from dpbounds._interrupt cimport dpb_watch, dpb_watch_start, dpb_watch_block_end, dpb_watch_stop
from dpbounds._core cimport *

from dpbounds import _ufuncs
from dpbounds import _errors
from dpbounds._errors import DPBoundsError, status_reasons
from dpbounds._validation import (
    Constraint, as_float_array, broadcast, check_args, check_choice, check_constraint, scalar_or_array,
)

cnp.import_array()


cdef inline int _check_alloc(int rc, str kernel) except -1:
    """The one translation of the C core's DPB_ENOMEM (an allocation failed) into MemoryError."""
    if rc != 0:
        raise MemoryError(f"{kernel}: out of memory")
    return 0


# ================================================================ exact accountant kernels
def lognormal_cf_m1(double sigma, t, bint size_biased=False):
    """r(t) = E[exp(i t (Z - 1))] - 1 - i t (E Z - 1) for Z = Y or Z = wY (complex array)."""
    cdef double[::1] tt = np.ascontiguousarray(np.ravel(t), dtype=np.float64)
    cdef long n = tt.shape[0]
    re_arr = np.empty(n, dtype=np.float64)
    im_arr = np.empty(n, dtype=np.float64)
    cdef double[::1] re = re_arr
    cdef double[::1] im = im_arr
    if n > 0:
        with nogil:
            dpb_exact_lognormal_cf(sigma, 1 if size_biased else 0, n, &tt[0], &re[0], &im[0])
    out = re_arr + 1j * im_arr
    return out.reshape(np.shape(t))


def lognormal_cf_m1_tilted(double sigma, t, double lam, bint size_biased=False, bint raw=False):
    """r(tau) = E[exp(i tau (Z - 1))] - 1 - i tau (E Z - 1) at tau = t + i lam, lam >= 0 (complex array).

    ``raw=True``: chi(tau) = E[exp(i tau (Z - 1))] itself (no subtraction).
    """
    cdef double[::1] tt = np.ascontiguousarray(np.ravel(t), dtype=np.float64)
    cdef long n = tt.shape[0]
    re_arr = np.empty(n, dtype=np.float64)
    im_arr = np.empty(n, dtype=np.float64)
    cdef double[::1] re = re_arr
    cdef double[::1] im = im_arr
    cdef int rc = 0
    if n > 0:
        with nogil:
            rc = dpb_exact_lognormal_cf_tilted(sigma, 1 if size_biased else 0, 1 if raw else 0, n, &tt[0], lam,
                                               &re[0], &im[0])
    _check_alloc(rc, "lognormal_cf_m1_tilted")
    out = re_arr + 1j * im_arr
    return out.reshape(np.shape(t))


def lognormal_cf_m1_tilted_grid(double sigma, long n0, long count, double dt, double lam,
                                bint size_biased=False, bint raw=False):
    """:func:`lognormal_cf_m1_tilted` at t = (n0 + j) dt, j = 0 .. count - 1 (complex array)."""
    if count < 0:
        raise DPBoundsError("count must be >= 0")
    re_arr = np.empty(count, dtype=np.float64)
    im_arr = np.empty(count, dtype=np.float64)
    cdef double[::1] re = re_arr
    cdef double[::1] im = im_arr
    cdef int rc = 0
    if count > 0:
        with nogil:
            rc = dpb_exact_lognormal_cf_tilted_grid(sigma, 1 if size_biased else 0, 1 if raw else 0, n0, count,
                                                    dt, lam, &re[0], &im[0])
    _check_alloc(rc, "lognormal_cf_m1_tilted_grid")
    return re_arr + 1j * im_arr


def logsum_convolve(qx, qz, double h, long K, off, w, coef, double tail_scale):
    """Density of log(X + Z) on the grid of ``qx``/``qz`` (see csrc/dpb_logsum.h).

    ``qz is qx`` (the same object) selects the doubling path.  ``off`` (J1,), ``w`` (J1, taps) and
    ``coef`` (J1,) are the near-part interpolation tables prepared by the caller.
    """
    cdef bint same = qz is qx
    cdef double[::1] x = np.ascontiguousarray(qx, dtype=np.float64)
    cdef double[::1] z = x if same else np.ascontiguousarray(qz, dtype=np.float64)
    cdef long n = x.shape[0]
    if z.shape[0] != n:
        raise DPBoundsError("qx and qz must have the same length")
    cdef long[::1] o = np.ascontiguousarray(off, dtype="l")
    cdef double[:, ::1] ww = np.ascontiguousarray(w, dtype=np.float64)
    cdef double[::1] cc = np.ascontiguousarray(coef, dtype=np.float64)
    cdef long J1 = o.shape[0]
    cdef int taps = <int>ww.shape[1]
    if ww.shape[0] != J1 or cc.shape[0] != J1 or J1 == 0:
        raise DPBoundsError("off, w and coef must describe the same J1 > 0 near-part nodes")
    out_arr = np.empty(n, dtype=np.float64)
    cdef double[::1] out = out_arr
    cdef int rc = 0
    cdef dpb_watch watch
    if n > 0:
        with nogil:
            # one convolution can take ~0.5 s: the C core asks _logsum_look between its nodes
            dpb_watch_start(&watch)
            rc = dpb_logsum_convolve_watched(n, &x[0], &z[0], 1 if same else 0, h, K, J1, taps, &o[0],
                                             &ww[0, 0], &cc[0], tail_scale, &out[0], _logsum_look, &watch)
    if rc == 1:
        _raise_pending()
    _check_alloc(rc, "logsum_convolve")
    return out_arr


cdef int _logsum_look(void *ctx) noexcept nogil:
    """The Ctrl-C watch of logsum_convolve (_interrupt.pxd), called by the C core between nodes."""
    return dpb_watch_stop(<dpb_watch *>ctx)


#: |fourier_series_re value - exact| <= FOURIER_SERIES_ERR_UNITS * 2**-53 * sum_n |c_n| (dpb_fourier_series.h)
FOURIER_SERIES_ERR_UNITS = float(DPB_FS_ERR_UNITS)


def fourier_series_re(q, coefs):
    """Re sum_{n=1}^{N} c[n-1] exp(-2 pi i frac(n q_j)) for each q_j and each array c in ``coefs``.

    ``coefs``: a sequence of 1 to 4 complex128 arrays of the same length N.  Returns a float array
    of shape (len(coefs), len(q)).  The phase is reduced exactly in units of the period (see
    csrc/dpb_fourier_series.h for the error bound); the GIL is released.
    """
    cdef double[::1] qq = np.ascontiguousarray(np.ravel(q), dtype=np.float64)
    cdef long nx = qq.shape[0]
    cdef int nc = len(coefs)
    if nc < 1 or nc > 4:
        raise DPBoundsError(f"coefs must hold 1 to 4 arrays, got {nc}")
    arrs = [np.ascontiguousarray(c, dtype=np.complex128) for c in coefs]
    cdef long N = arrs[0].shape[0]
    for c in arrs:
        if c.ndim != 1 or c.shape[0] != N:
            raise DPBoundsError("coefs must be 1-d arrays of the same length")
    out_arr = np.zeros((nc, nx), dtype=np.float64)
    cdef double[:, ::1] out = out_arr
    cdef const double *ptrs[4]
    cdef double[::1] view
    views = [a.view(np.float64) for a in arrs]
    cdef int k
    for k in range(nc):
        view = views[k]
        ptrs[k] = &view[0] if N > 0 else NULL
    if nx > 0 and N > 0:
        with nogil:
            dpb_fourier_series_re(N, nc, ptrs, nx, &qq[0], &out[0, 0])
    return out_arr



def lognormal_cf_m1_pair_grid(double sigma, long n0, long count, double dt):
    """(r0, r1): :func:`lognormal_cf_m1_tilted_grid` at lam = 0 for Y and for wY (size-biased) at
    t = (n0 + j) dt, j = 0 .. count - 1, from one pass of the kernel (complex arrays)."""
    if count < 0:
        raise DPBoundsError("count must be >= 0")
    re0_arr = np.empty(count, dtype=np.float64)
    im0_arr = np.empty(count, dtype=np.float64)
    re1_arr = np.empty(count, dtype=np.float64)
    im1_arr = np.empty(count, dtype=np.float64)
    cdef double[::1] re0 = re0_arr
    cdef double[::1] im0 = im0_arr
    cdef double[::1] re1 = re1_arr
    cdef double[::1] im1 = im1_arr
    cdef int rc = 0
    if count > 0:
        with nogil:
            rc = dpb_exact_lognormal_cf_pair_grid(sigma, n0, count, dt, &re0[0], &im0[0], &re1[0], &im1[0])
    _check_alloc(rc, "lognormal_cf_m1_pair_grid")
    return re0_arr + 1j * im0_arr, re1_arr + 1j * im1_arr

# ================================================================ Renyi DP, subsampling without replacement
# Ctrl-C in the integer-order loops: order j costs O(j) terms, so the orders are cut into chunks
# of about _WORK_CHUNK terms (~1-10 ms) and dpb_watch_stop (_interrupt.pxd) runs after each; it
# takes the GIL to look for a signal at most every 20 ms.  The chunks change only when the loop
# looks, never what an entry evaluates to (each entry is computed on its own).
cdef enum:
    _WORK_CHUNK = 1 << 20


cdef inline Py_ssize_t _orders_chunk_end(Py_ssize_t j0, Py_ssize_t jmax) noexcept nogil:
    """End (exclusive) of the chunk of orders j0, j0 + 1, .. <= jmax holding about _WORK_CHUNK terms."""
    # sum_{j0 <= j < j1} (j + 1) ~ (j1^2 - j0^2) / 2 = _WORK_CHUNK
    cdef double x = <double>(j0 + 1)
    cdef Py_ssize_t j1 = <Py_ssize_t>sqrt(x * x + 2.0 * <double>_WORK_CHUNK)
    if j1 <= j0:
        j1 = j0 + 1
    return jmax + 1 if j1 > jmax else j1


cdef int _pv_logd_chunked(long lmax, const double *logs, const double *lfact, double *logd,
                          dpb_watch *watch) noexcept nogil:
    """dpb_rdp_pv_logd in chunks of orders (O(l) each); 1 if a signal stopped it (exception set)."""
    cdef Py_ssize_t l0 = 0, l1
    while l0 <= lmax:
        l1 = _orders_chunk_end(l0, lmax)
        dpb_rdp_pv_logd_range(l0, l1 - 1, logs, lfact, logd)
        l0 = l1
        if dpb_watch_stop(watch):
            return 1
    return 0


cdef int _raise_pending() except -1:
    """Raise the exception a signal handler left set (KeyboardInterrupt) from the calling kernel."""
    if PyErr_Occurred() != NULL:
        return -1
    raise SystemError("a kernel stopped for a signal but no exception is set")

def wor_gaussian(alpha, sigma, gamma, long bound):
    """WOR-subsampled Gaussian RDP, broadcasting over (alpha, sigma, gamma).

    bound: 0 Theorem 9, 1 improved (Pearson-Vajda), 2 lower.  A workspace is shared
    along the flattened (C-order) arrays: put sigma on the slowest axis to reuse the
    O(alpha^2) Pearson-Vajda table of the improved bound.
    """
    a, s, g = np.broadcast_arrays(np.asarray(alpha, dtype=np.float64),
                                  np.asarray(sigma, dtype=np.float64),
                                  np.asarray(gamma, dtype=np.float64))
    shape = a.shape
    cdef double[::1] av = np.array(a, order="C", copy=True).ravel()
    cdef double[::1] sv = np.array(s, order="C", copy=True).ravel()
    cdef double[::1] gv = np.array(g, order="C", copy=True).ravel()
    out = np.empty(av.shape[0], dtype=np.float64)
    cdef double[::1] ov = out
    cdef Py_ssize_t i, i0 = 0, i1, n = av.shape[0]
    cdef dpb_rdp_work w
    cdef int b = <int>bound
    cdef int stop = 0
    cdef dpb_watch watch
    dpb_rdp_work_init(&w)
    with nogil:
        # blocks of orders with a look for Ctrl-C between them (_interrupt.pxd): one order of
        # the improved bound can cost O(alpha^2)
        dpb_watch_start(&watch)
        while i0 < n and not stop:
            i1 = dpb_watch_block_end(&watch, i0, n)
            for i in range(i0, i1):
                ov[i] = dpb_rdp_wor_gaussian(av[i], sv[i], gv[i], b, &w)
            i0 = i1
            if i0 < n:
                stop = dpb_watch_stop(&watch)
    dpb_rdp_work_free(&w)
    if stop:
        _raise_pending()
    if len(shape) == 0:
        return float(out[0])
    return out.reshape(shape)


def wor_table(eps_table, double eps_inf, gamma, long bound):
    """WOR bound at every integer order 2..amax from a base curve over integer orders.

    eps_table[j] is the base RDP at order j (entries 0 and 1 are ignored), amax =
    len(eps_table) - 1 for Theorem 9 and the lower bound, len(eps_table) - 2 for the
    improved bound (which needs the base curve up to order a + 1).  Returns an array of
    shape gamma.shape + (len(eps_table),) with NaN at orders 0, 1 (and above amax).
    """
    cdef double[::1] e = np.ascontiguousarray(eps_table, dtype=np.float64)
    g = np.asarray(gamma, dtype=np.float64)
    cdef double[::1] gv = np.array(g, order="C", copy=True).ravel()
    cdef Py_ssize_t m = e.shape[0], ng = gv.shape[0], i, j
    out = np.full((ng, m), np.nan)
    cdef double[:, ::1] ov = out
    cdef long amax = m - 1 if bound != 1 else m - 2
    cdef int b = <int>bound
    if m < 3:
        return out.reshape(g.shape + (m,))
    cdef double *lf = <double *>malloc(m * sizeof(double))
    cdef double *logs = <double *>malloc(m * sizeof(double))
    cdef double *logd = <double *>malloc(m * sizeof(double))
    if lf == NULL or logs == NULL or logd == NULL:
        free(lf); free(logs); free(logd)
        raise MemoryError()
    cdef Py_ssize_t j0, j1
    cdef int stop = 0
    cdef dpb_watch watch
    with nogil:
        dpb_watch_start(&watch)
        for j in range(m):
            lf[j] = lgamma(<double>j + 1.0)
            logs[j] = 0.0 if j < 2 else (j - 1) * e[j]
        if b == 1:
            stop = _pv_logd_chunked(m - 1, logs, lf, logd, &watch)
        # order j costs O(j): chunks of orders of about _WORK_CHUNK terms, a look for Ctrl-C
        # between chunks (amax = 1e6 is ~1e12 terms per gamma)
        i = 0
        while i < ng and not stop:
            j0 = 2
            while j0 <= amax and not stop:
                j1 = _orders_chunk_end(j0, amax)
                for j in range(j0, j1):
                    if b == 0:
                        ov[i, j] = dpb_rdp_wor_thm9_int(j, gv[i], &e[0], eps_inf, lf)
                    elif b == 1:
                        ov[i, j] = dpb_rdp_wor_pv_int(j, gv[i], &e[0], eps_inf, logd, lf)
                    else:
                        ov[i, j] = dpb_rdp_wor_lower_int(j, gv[i], &e[0], lf)
                j0 = j1
                stop = dpb_watch_stop(&watch)
            i += 1
    free(lf); free(logs); free(logd)
    if stop:
        _raise_pending()
    return out.reshape(g.shape + (m,))


def table_interp(alpha, table, double sigma, double at_inf):
    """An integer-order RDP table at real orders (Corollary 10), in one pass.

    ``alpha``: float64 orders with ceil(alpha) < len(table) where finite (the caller checks).
    A finite order gives dpb_rdp_interp(alpha, table[lo], table[hi]) with lo, hi = floor, ceil
    of alpha clipped at 2, then numpy's minimum with the Gaussian's alpha / (2 sigma^2) unless
    sigma is NaN; any other order gives ``at_inf``: the same doubles as the rdp_interp and
    rdp_gaussian ufuncs and numpy's minimum and where, without their temporaries.
    """
    a = np.asarray(alpha, dtype=np.float64)
    cdef const double[::1] av = np.ascontiguousarray(a).ravel()
    cdef const double[::1] t = np.ascontiguousarray(table, dtype=np.float64)
    out = np.empty(av.shape[0], dtype=np.float64)
    cdef double[::1] ov = out
    cdef Py_ssize_t i, n = av.shape[0], m = t.shape[0]
    cdef long lo, hi
    cdef double x, v, b
    cdef bint base = not isnan(sigma)
    for i in range(n):
        x = av[i]
        if not (x == x) or isinf(x):
            ov[i] = at_inf
            continue
        if x < 1.0:                    # below the orders: NaN, as rdp_interp and rdp_gaussian give
            ov[i] = NAN
            continue
        lo = <long>floor(x)
        hi = lo if x == <double>lo else lo + 1
        if lo < 2:
            lo = 2
        if hi < 2:
            hi = 2
        if hi >= m:
            raise ValueError("table_interp: order outside the table")
        v = dpb_rdp_interp(x, t[lo], t[hi])
        if base:
            b = dpb_rdp_gaussian(x, sigma)
            if not (v < b or v != v):   # numpy's minimum: the first if smaller or NaN
                v = b
        ov[i] = v
    return out.reshape(a.shape)


def pv_logd(logs):
    """log of the (padded) Pearson-Vajda forward differences D^l, even l, from log s_i."""
    cdef double[::1] ls = np.ascontiguousarray(logs, dtype=np.float64)
    cdef Py_ssize_t m = ls.shape[0], j
    out = np.empty(m)
    cdef double[::1] ov = out
    cdef double *lf = <double *>malloc(max(m, 1) * sizeof(double))
    if lf == NULL:
        raise MemoryError()
    cdef int stop = 0
    cdef dpb_watch watch
    with nogil:
        dpb_watch_start(&watch)
        for j in range(m):
            lf[j] = lgamma(<double>j + 1.0)
        if m > 0:
            stop = _pv_logd_chunked(m - 1, &ls[0], lf, &ov[0], &watch)
    free(lf)
    if stop:
        _raise_pending()
    return out


# ================================================================ Theorem 3.1 fast paths
_COEFFICIENTS = ("simplified", "exact")
_VALIDITY_AT = ("delta_min", "target")
cdef int _BAD_INPUT = [s.bit for s in _errors.STATUS_BITS if s.name == "BAD_INPUT"][0]

_SIGMA_ROUNDS = {"sigma": Constraint.FINITE_POSITIVE, "rounds": Constraint.INTEGER_GE_3}
_SIGMA_DELTA = {"sigma": Constraint.FINITE_POSITIVE, "delta": Constraint.OPEN_UNIT}
_SIGMA_DELTA_EPOCHS = dict(_SIGMA_DELTA, epochs=Constraint.INTEGER_GE_1)
_DATASET = {"sigma": Constraint.FINITE_POSITIVE, "rounds": Constraint.INTEGER_GE_1,
            "clip_norm": Constraint.FINITE_POSITIVE, "noise_ratio": Constraint.FINITE_POSITIVE}


cdef inline int _kind(object coefficient) except -1:
    if coefficient == "exact":
        return DPB_COEF_EXACT
    if coefficient == "simplified":
        return DPB_COEF_SIMPLIFIED
    check_choice("coefficient", coefficient, _COEFFICIENTS)
    return -1


cdef inline bint _as_double(object o, double *out):
    """Fast unboxing of Python floats (incl. numpy.float64) and small ints; False otherwise."""
    if isinstance(o, float):
        out[0] = <double>o
        return True
    if type(o) is int and -(1 << 62) < o < (1 << 62):
        out[0] = <double>o
        return True
    return False


# Scalar twins of the Constraint predicates the fast paths need (the rule's text and its
# array form live in dpbounds._validation; tests/test_validation.py checks these agree with
# Constraint.holds on a grid of hard values).  On failure the fast paths call check_args,
# so the message is always the array path's.
cdef inline bint _finite_positive(double x) noexcept nogil:
    return x > 0.0 and not isinf(x)


cdef inline bint _open_unit(double x) noexcept nogil:
    return x > 0.0 and x < 1.0


cdef inline bint _integer_ge(double x, double k) noexcept nogil:
    return x >= k and not isinf(x) and x == floor(x)


def _scalar_holds(str constraint, double x):
    """The scalar predicate used on the fast paths for ``Constraint[constraint]`` (for tests)."""
    if constraint == "FINITE_POSITIVE":
        return _finite_positive(x)
    if constraint == "OPEN_UNIT":
        return _open_unit(x)
    if constraint == "INTEGER_GE_1":
        return _integer_ge(x, 1.0)
    if constraint == "INTEGER_GE_3":
        return _integer_ge(x, 3.0)
    raise KeyError(constraint)


# One-entry cache of the sigma-only constants per coefficient: training loops call with a
# fixed sigma, and prepare (exp, expm1, erf) is most of a scalar call.  It holds no answer,
# only a deterministic function of sigma, so results never depend on call order; it is only
# touched with the GIL held, between no Python calls, so it is never torn.
cdef dpb_t31_sigma _cache[2]
cdef double _cache_sigma[2]
_cache_sigma[0] = NAN
_cache_sigma[1] = NAN


cdef inline const dpb_t31_sigma *_prepared(double s, int kind) noexcept:
    if not (s == _cache_sigma[kind]):
        dpb_t31_prepare(s, kind, &_cache[kind])
        _cache_sigma[kind] = s
    return &_cache[kind]


def delta_bound(sigma, rounds, coefficient="exact", *, on_invalid="nan"):
    """delta_bound(sigma, rounds, coefficient="exact", *, on_invalid="nan")

    The six-term delta_min of Theorem 3.1, returned only where the theorem applies.

    For one epoch of ``rounds`` = M rounds of DP-SGD with random allocation and noise
    multiplier sigma, Theorem 3.1 gives f(a) >= 1 - a - delta for every
    delta >= delta_min(sigma, M), provided condition (2) holds (evaluated at delta_min),
    M >= 3 and sigma >= sqrt(3/ln M).  See docs/theorem31.md and the paper "Trade-off
    Functions for DP-SGD with Subsampling based on Random Allocation: Tight Upper and
    Lower Bounds".

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    rounds : int or array_like
        Rounds per epoch M, an integer >= 3.
    coefficient : {"exact", "simplified"}
        ``"exact"`` (default): the Berry-Esseen coefficient with the exact third absolute
        moment, rho^3/(w - 1)^2 (section 3.1 of the paper): the smaller bound, equally
        valid.  ``"simplified"``: the theorem as stated, (w^3 + 4)/(w - 1)^2 (eq. (22));
        use it to reproduce the paper's tables.
    on_invalid : {"nan", "raise"}
        What to return where the theorem does not apply: NaN (default), or raise
        :class:`dpbounds.DPBoundsError` with the reason.  Never the unqualified number.

    Returns
    -------
    float or ndarray
        delta_min, or NaN where Theorem 3.1 does not apply.

    Raises
    ------
    DPBoundsError
        If sigma is not finite and positive, rounds is not an integer >= 3, the shapes do
        not broadcast, or (``on_invalid="raise"``) the theorem does not apply.

    Notes
    -----
    Accuracy: relative error <= 1e-14 against a 50-digit mpmath evaluation of the same
    formula for sigma in [0.07, 1e4] and M in [3, 1e15] (tests/test_theorem31.py).  Use
    :func:`dpbounds.theorem31` for the terms, the validity status and its reason.  For
    dask/xarray inputs call the raw ufunc ``dpbounds.ufuncs.delta_bound_exact`` (NaN for
    invalid or bad input).

    Examples
    --------
    >>> from dpbounds import delta_bound
    >>> round(delta_bound(1.0, 1140369, coefficient="simplified"), 6)
    0.01
    """
    cdef double s = 0.0, m = 0.0, r
    cdef int kind = _kind(coefficient), st
    if _as_double(sigma, &s) and _as_double(rounds, &m):
        st = dpb_t31_checked(_prepared(s, kind), m, &r)
        if st == 0:
            return r
        if st & _BAD_INPUT:
            check_args(_SIGMA_ROUNDS, sigma=sigma, rounds=rounds)
        if on_invalid == "nan":
            return NAN
        check_choice("on_invalid", on_invalid, ("nan", "raise"))
        raise DPBoundsError("Theorem 3.1 does not apply: " + "; ".join(status_reasons(st)))
    check_choice("on_invalid", on_invalid, ("nan", "raise"))
    checked = _ufuncs._delta_bound_checked_exact if kind == DPB_COEF_EXACT else _ufuncs._delta_bound_checked_simplified
    # as_float_array refuses what is not real numbers (complex, None, strings) naming the parameter
    sa, ra = as_float_array("sigma", sigma), as_float_array("rounds", rounds)
    try:
        out, status = checked(sa, ra)
    except ValueError:
        # shapes that do not broadcast: the checks name the parameters
        check_args(_SIGMA_ROUNDS, sigma=sigma, rounds=rounds)
        raise
    status = np.asarray(status)
    if status.size == 0:
        # an empty broadcast has no status to read: check the arguments themselves, as every
        # other validated function does (a NaN rounds next to an empty sigma is still refused)
        check_args(_SIGMA_ROUNDS, sigma=sigma, rounds=rounds)
    elif status.any():
        if (status & _BAD_INPUT).any():      # bad arguments: the constraint checks produce the message
            check_args(_SIGMA_ROUNDS, sigma=sigma, rounds=rounds)
        if on_invalid == "raise":
            raise DPBoundsError("Theorem 3.1 does not apply at " + _errors.describe_status(status).replace(
                " elements", " (sigma, rounds) points", 1))
    return scalar_or_array(out)


def rounds_closed_form(sigma, delta, coefficient="exact"):
    """rounds_closed_form(sigma, delta, coefficient="exact")

    The closed-form number of rounds (eq. (4) of the paper) at which the two leading
    terms of delta_min reach delta,

        M = 1 + ( [2 B coef(sigma) sqrt(w - 1) + sqrt((w - 1)/(2 pi))] / delta )^2.

    An approximation of :func:`rounds_required` (within 0.2% on Table 1), not a certified
    value: it ignores T3..T6 and the validity condition.

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    delta : float or array_like
        Target delta in (0, 1).
    coefficient : {"exact", "simplified"}
        See :func:`delta_bound`.

    Returns
    -------
    float or ndarray
        M (real-valued), ``inf`` where it exceeds the double range.

    Notes
    -----
    Relative error <= 1e-14 against mpmath (tests/test_rounds.py).
    """
    cdef double s = 0.0, d = 0.0
    cdef int kind = _kind(coefficient)
    if _as_double(sigma, &s) and _as_double(delta, &d) and _finite_positive(s) and _open_unit(d):
        return dpb_rounds_closed_form(s, d, kind)
    sa, da = check_args(_SIGMA_DELTA, sigma=sigma, delta=delta)
    f = _ufuncs.rounds_closed_form_exact if kind == DPB_COEF_EXACT else _ufuncs.rounds_closed_form_simplified
    return scalar_or_array(f(sa, da))


def rounds_required(sigma, delta, coefficient="exact", validity_at="delta_min", *, epochs=1):
    """rounds_required(sigma, delta, coefficient="exact", validity_at="delta_min", *, epochs=1)

    M_exact: the smallest integer number of rounds M for which Theorem 3.1 certifies
    f(a) >= 1 - a - delta (per epoch).

    M_exact = min{ integer M >= 3 : delta_min(sigma, M) <= delta, condition (2) holds and
    sigma >= sqrt(3/ln M) }.  All three conditions are monotone in M; the search
    (closed-form start, exponential bracket, integer bisection, in C) uses the same
    delta_min evaluation as :func:`delta_bound`, so the result is exactly minimal: at
    M_exact - 1 some condition fails.

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    delta : float or array_like
        Target delta in (0, 1).  With ``epochs`` = E > 1 this is the total over E epochs:
        the per-epoch target is 1 - (1 - delta)^(1/E), because f^{xE}(a) >= (1 - delta_epoch)^E - a
        (composition of (0, delta) guarantees; see docs/epochs.md).
    coefficient : {"exact", "simplified"}
        See :func:`delta_bound`; ``"simplified"`` reproduces the paper's Table 1.
    validity_at : {"delta_min", "target"}
        Which delta enters condition (2): delta_min(sigma, M) (default, the logically
        weakest requirement) or the target delta (conservative).  The two readings agree
        on Table 1.
    epochs : int, optional
        Number of epochs E >= 1 (default 1).

    Returns
    -------
    float or ndarray
        Integer-valued M_exact, or ``inf`` when no M <= 2**53 qualifies (with
        ``validity_at="target"``: when delta >= 1/2 - Phi(-kappa), condition (2) can never
        hold, e.g. delta = 0.01 and sigma >= 4.6).

    Examples
    --------
    >>> from dpbounds import rounds_required
    >>> rounds_required(1.0, 0.01, coefficient="simplified")   # Table 1 of the paper
    1140369.0
    >>> rounds_required(2.0, 0.01)
    59097.0
    """
    cdef double s = 0.0, d = 0.0, e = 0.0
    cdef int kind = _kind(coefficient)
    cdef int tgt
    if validity_at == "delta_min":
        tgt = 0
    else:
        check_choice("validity_at", validity_at, _VALIDITY_AT)
        tgt = 1
    if (_as_double(sigma, &s) and _as_double(delta, &d) and _as_double(epochs, &e)
            and _finite_positive(s) and _open_unit(d) and _integer_ge(e, 1.0)):
        if e != 1.0:
            d = dpb_per_epoch_delta(d, e)
            if d == 0.0:
                # the per-epoch target underflowed (delta = 5e-324 over 2 epochs): it is below the
                # smallest double, so no M <= 2**53 reaches it -- the documented inf, not NaN
                return INFINITY
        return dpb_rounds_required(s, d, kind, tgt)
    sa, da, ea = check_args(_SIGMA_DELTA_EPOCHS, sigma=sigma, delta=delta, epochs=epochs)
    da = _ufuncs.per_epoch_delta(da, ea)
    name = "rounds_required_" + _COEFFICIENTS[kind] + ("_at_target" if tgt else "")
    m = getattr(_ufuncs, name)(sa, da)
    if (da == 0.0).any():   # as above: an underflowed per-epoch target is unreachable
        m = np.where(da == 0.0, np.inf, m)
    return scalar_or_array(m)


def min_dataset_size(sigma, rounds, clip_norm=1.0, noise_ratio=0.1):
    """min_dataset_size(sigma, rounds, clip_norm=1.0, noise_ratio=0.1)

    Smallest dataset size N for which the per-round noise clip_norm * sigma * M / N of the
    averaged gradient stays at most ``noise_ratio`` (section 5 of the paper, Table 1's
    "Min N" with the paper's defaults C = 1 and ratio 0.1):

        N = clip_norm * sigma * rounds / noise_ratio      (real-valued).

    Parameters
    ----------
    sigma : float or array_like
        Noise multiplier, finite and > 0.
    rounds : int or array_like
        Rounds per epoch M (integer >= 1), typically :func:`rounds_required`.
    clip_norm, noise_ratio : float or array_like
        Clipping norm C > 0 and tolerated noise ratio > 0.
    """
    cdef double s = 0.0, m = 0.0, cn = 0.0, nr = 0.0
    if (_as_double(sigma, &s) and _as_double(rounds, &m) and _as_double(clip_norm, &cn)
            and _as_double(noise_ratio, &nr) and _finite_positive(s) and _integer_ge(m, 1.0)
            and _finite_positive(cn) and _finite_positive(nr)):
        return dpb_min_dataset_size(s, m, cn, nr)
    arrs = check_args(_DATASET, sigma=sigma, rounds=rounds, clip_norm=clip_norm, noise_ratio=noise_ratio)
    return scalar_or_array(_ufuncs.min_dataset_size(*arrs))


# ================================================================ Cartesian-grid (outer) kernels
# csrc/dpb_outer.h fills out[i, j] = f(sigma[i], x[j]) tile by tile.  The GIL is released for
# each tile and re-acquired between tiles to run PyErr_CheckSignals, so Ctrl-C interrupts a
# long grid within about one tile: a tile is a number of points that takes a few milliseconds
# (delta_bound ~2-10 ns/point, min_dataset_size ~1-3 ns/point, rounds_required ~0.3-3 us/point).
_OUTER_TILE_T31 = 1 << 18
_OUTER_TILE_DATASET = 1 << 19
_OUTER_TILE_ROUNDS = 1 << 10

cdef enum _OuterKind:
    _OUTER_DELTA_BOUND
    _OUTER_ROUNDS_REQUIRED
    _OUTER_MIN_DATASET_SIZE

cdef struct _OuterJob:
    _OuterKind kind
    const double *sigma
    const double *x
    dpb_outer_t31_cols *cols
    int coefficient
    int mode              # delta_bound: DPB_T31_MODE_*; rounds_required: validity at target
    double clip_norm
    double noise_ratio
    double *out
    signed char *status
    Py_ssize_t ns
    Py_ssize_t nm


cdef void _outer_tile(const _OuterJob *j, Py_ssize_t r0, Py_ssize_t r1, Py_ssize_t c0, Py_ssize_t c1) noexcept nogil:
    if j.kind == _OUTER_DELTA_BOUND:
        dpb_outer_delta_bound(j.sigma, r0, r1, j.cols, c0, c1, j.coefficient, j.mode, j.out, j.status, j.nm)
    elif j.kind == _OUTER_ROUNDS_REQUIRED:
        dpb_outer_rounds_required(j.sigma, r0, r1, j.x, c0, c1, j.coefficient, j.mode, j.out, j.nm)
    else:
        dpb_outer_min_dataset_size(j.sigma, r0, r1, j.x, c0, c1, j.clip_norm, j.noise_ratio, j.out, j.nm)


cdef int _outer_run(const _OuterJob *job, Py_ssize_t tile) except -1:
    """Whole rows per tile while a row is shorter than ``tile`` points, else pieces of one row."""
    cdef Py_ssize_t r0 = 0, r1, c0, c1, rows, ns = job.ns, nm = job.nm
    if ns == 0 or nm == 0:
        return 0
    if nm >= tile:
        for r0 in range(ns):
            c0 = 0
            while c0 < nm:
                c1 = c0 + tile if nm - c0 > tile else nm
                with nogil:
                    _outer_tile(job, r0, r0 + 1, c0, c1)
                PyErr_CheckSignals()
                c0 = c1
    else:
        rows = tile // nm
        while r0 < ns:
            r1 = r0 + rows if ns - r0 > rows else ns
            with nogil:
                _outer_tile(job, r0, r1, 0, nm)
            PyErr_CheckSignals()
            r0 = r1
    return 0


cdef inline object _axis(object a):
    return np.ascontiguousarray(np.ravel(a), dtype=np.float64)


def outer_delta_bound(sigma, rounds, coefficient, bint checked, cnp.ndarray out, status=None):
    """out[i, j] = ufuncs.delta_bound_<coefficient>(sigma[i], rounds[j]) (``checked``: the
    ``_delta_bound_checked_<coefficient>`` ufunc, whose status goes to ``status`` if given).

    Raw kernel: no argument errors, the ufuncs' NaN conventions.  ``sigma`` and ``rounds`` are
    read as 1-D float64; ``out`` must be a C-contiguous float64 array of shape
    (len(sigma), len(rounds)) and ``status`` None or a C-contiguous int8 array of that shape.
    """
    cdef double[::1] s = _axis(sigma)
    cdef double[::1] m = _axis(rounds)
    cdef Py_ssize_t ns = s.shape[0], nm = m.shape[0]
    cdef double[:, ::1] o = out
    cdef signed char[:, ::1] st
    if o.shape[0] != ns or o.shape[1] != nm:
        raise DPBoundsError(f"out must have shape {(ns, nm)}, got {(o.shape[0], o.shape[1])}")
    inv_m1 = np.empty(nm, dtype=np.float64)
    log_m = np.empty(nm, dtype=np.float64)
    tail = np.empty(nm, dtype=np.float64)
    odd = np.empty(nm, dtype=np.intp)
    cdef double[::1] vi = inv_m1, vl = log_m, vt = tail
    cdef Py_ssize_t[::1] vo = odd
    cdef dpb_outer_t31_cols cols
    cdef _OuterJob job
    if ns == 0 or nm == 0:
        return out
    cols.n = nm
    cols.rounds = &m[0]
    cols.inv_m1 = &vi[0]
    cols.log_m = &vl[0]
    cols.tail = &vt[0]
    cols.odd = &vo[0]
    cols.n_odd = 0
    job.kind = _OUTER_DELTA_BOUND
    job.mode = DPB_T31_MODE_CHECKED if checked else DPB_T31_MODE_BOUND
    job.coefficient = _kind(coefficient)
    job.sigma = &s[0]
    job.x = &m[0]
    job.cols = &cols
    job.out = &o[0, 0]
    job.status = NULL
    job.ns = ns
    job.nm = nm
    if status is not None:
        st = status
        if st.shape[0] != ns or st.shape[1] != nm:
            raise DPBoundsError(f"status must have shape {(ns, nm)}, got {(st.shape[0], st.shape[1])}")
        job.status = &st[0, 0]
    with nogil:
        dpb_outer_t31_columns(&cols, job.mode)
    _outer_run(&job, _OUTER_TILE_T31)
    return out


def outer_rounds_required(sigma, delta, coefficient, bint at_target, cnp.ndarray out):
    """out[i, j] = ufuncs.rounds_required_<coefficient>[_at_target](sigma[i], delta[j]).

    Raw kernel (NaN conventions of the ufunc); ``out`` as in :func:`outer_delta_bound`.
    """
    cdef double[::1] s = _axis(sigma)
    cdef double[::1] d = _axis(delta)
    cdef Py_ssize_t ns = s.shape[0], nm = d.shape[0]
    cdef double[:, ::1] o = out
    cdef _OuterJob job
    if o.shape[0] != ns or o.shape[1] != nm:
        raise DPBoundsError(f"out must have shape {(ns, nm)}, got {(o.shape[0], o.shape[1])}")
    job.coefficient = _kind(coefficient)
    if ns == 0 or nm == 0:
        return out
    job.kind = _OUTER_ROUNDS_REQUIRED
    job.mode = 1 if at_target else 0
    job.sigma = &s[0]
    job.x = &d[0]
    job.cols = NULL
    job.out = &o[0, 0]
    job.status = NULL
    job.ns = ns
    job.nm = nm
    _outer_run(&job, _OUTER_TILE_ROUNDS)
    return out


def outer_min_dataset_size(sigma, rounds, double clip_norm, double noise_ratio, cnp.ndarray out):
    """out[i, j] = ufuncs.min_dataset_size(sigma[i], rounds[j], clip_norm, noise_ratio).

    Raw kernel (NaN conventions of the ufunc); ``out`` as in :func:`outer_delta_bound`.
    """
    cdef double[::1] s = _axis(sigma)
    cdef double[::1] m = _axis(rounds)
    cdef Py_ssize_t ns = s.shape[0], nm = m.shape[0]
    cdef double[:, ::1] o = out
    cdef _OuterJob job
    if o.shape[0] != ns or o.shape[1] != nm:
        raise DPBoundsError(f"out must have shape {(ns, nm)}, got {(o.shape[0], o.shape[1])}")
    if ns == 0 or nm == 0:
        return out
    masked = np.empty(nm, dtype=np.float64)
    cdef double[::1] mk = masked
    with nogil:
        dpb_outer_dataset_columns(&m[0], nm, &mk[0])
    job.kind = _OUTER_MIN_DATASET_SIZE
    job.sigma = &s[0]
    job.x = &mk[0]
    job.cols = NULL
    job.clip_norm = clip_norm
    job.noise_ratio = noise_ratio
    job.out = &o[0, 0]
    job.status = NULL
    job.ns = ns
    job.nm = nm
    _outer_run(&job, _OUTER_TILE_DATASET)
    return out


def _libmvec_in_use():
    """True when glibc's vector math library (libmvec) serves exp/expm1/erfc in the C core."""
    return bool(dpb_vecmath_is_native())
