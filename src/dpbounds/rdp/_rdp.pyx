# cython: language_level=3
"""Raw kernels of :mod:`dpbounds.rdp` over the C core (csrc/dpb_rdp_*.h).

The ``@cython.ufunc`` functions are genuine numpy ufuncs; the others broadcast their
arguments with numpy and loop over the C kernels with the GIL released, sharing a
workspace (binomial tables, Pearson-Vajda differences cached per sigma) along the
flattened arrays.  Following numpy conventions none of them raise: NaN in gives NaN
out and arguments outside a kernel's domain give NaN.  :mod:`dpbounds.rdp` validates.
"""
cimport cython
import numpy as np
cimport numpy as cnp
from libc.math cimport NAN, INFINITY, lgamma, floor
from libc.stdlib cimport malloc, free
from dpbounds.rdp._rdp_csrc cimport *

cnp.import_array()


# ---------------------------------------------------------------- base mechanisms
@cython.ufunc
cdef double gaussian(double alpha, double sigma) noexcept nogil:
    """RDP of the Gaussian mechanism: alpha/(2 sigma^2); alpha in [1, inf]."""
    return dpb_rdp_gaussian(alpha, sigma)

@cython.ufunc
cdef double laplace(double alpha, double b) noexcept nogil:
    """RDP of the Laplace mechanism with scale b (L1 sensitivity 1); alpha in [1, inf]."""
    return dpb_rdp_laplace(alpha, b)

@cython.ufunc
cdef double randomized_response(double alpha, double p) noexcept nogil:
    """RDP of binary randomized response, truthful with probability p; alpha in [1, inf]."""
    return dpb_rdp_randomized_response(alpha, p)


# ---------------------------------------------------------------- Poisson-subsampled Gaussian
@cython.ufunc
cdef double poisson_gaussian_exact(double alpha, double sigma, double q) noexcept nogil:
    """Poisson-subsampled Gaussian RDP (add/remove), exact at real alpha >= 1."""
    return dpb_rdp_poisson_gaussian(alpha, sigma, q, DPB_POISSON_EXACT)

@cython.ufunc
cdef double poisson_gaussian_compat(double alpha, double sigma, double q) noexcept nogil:
    """Poisson-subsampled Gaussian RDP, |C(a,i)| series at fractional alpha (TF-Privacy/dp-accounting/Opacus)."""
    return dpb_rdp_poisson_gaussian(alpha, sigma, q, DPB_POISSON_COMPAT)

@cython.ufunc
cdef double poisson_quad_log(double alpha, double sigma, double q) noexcept nogil:
    """log(A_alpha - 1) by quadrature (alpha > 1) or log KL (alpha = 1)."""
    return dpb_rdp_poisson_quad_log(alpha, sigma, q)

@cython.ufunc
cdef double poisson_negseries_log(double alpha, double sigma, double q) noexcept nogil:
    """log of the sum of the negative-coefficient terms of the MTZ series (-inf for integer alpha)."""
    return dpb_rdp_poisson_negseries_log(alpha, sigma, q)


# ---------------------------------------------------------------- conversions
@cython.ufunc
cdef double eps_objective_classic(double alpha, double rdp, double delta) noexcept nogil:
    """rdp + log(1/delta)/(alpha-1): the classic RDP->(eps, delta) objective at one order."""
    return dpb_rdp_eps_objective(alpha, rdp, delta, DPB_CONV_CLASSIC)

@cython.ufunc
cdef double eps_objective_improved(double alpha, double rdp, double delta) noexcept nogil:
    """The improved (Balle et al. 2020) RDP->(eps, delta) objective at one order."""
    return dpb_rdp_eps_objective(alpha, rdp, delta, DPB_CONV_IMPROVED)

@cython.ufunc
cdef double logdelta_objective_classic(double alpha, double rdp, double eps) noexcept nogil:
    """(alpha-1)(rdp - eps), clipped at 0: classic log delta at one order."""
    return dpb_rdp_logdelta_objective(alpha, rdp, eps, DPB_CONV_CLASSIC)

@cython.ufunc
cdef double logdelta_objective_improved(double alpha, double rdp, double eps) noexcept nogil:
    """Improved log delta at one order (with the TV shortcut), clipped at 0."""
    return dpb_rdp_logdelta_objective(alpha, rdp, eps, DPB_CONV_IMPROVED)


# ---------------------------------------------------------------- subsampling without replacement
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
    cdef Py_ssize_t i, n = av.shape[0]
    cdef dpb_rdp_work w
    cdef int b = <int>bound
    dpb_rdp_work_init(&w)
    with nogil:
        for i in range(n):
            ov[i] = dpb_rdp_wor_gaussian(av[i], sv[i], gv[i], b, &w)
    dpb_rdp_work_free(&w)
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
    with nogil:
        for j in range(m):
            lf[j] = lgamma(<double>j + 1.0)
            logs[j] = 0.0 if j < 2 else (j - 1) * e[j]
        if b == 1:
            dpb_rdp_pv_logd(m - 1, logs, lf, logd)
        for i in range(ng):
            for j in range(2, amax + 1):
                if b == 0:
                    ov[i, j] = dpb_rdp_wor_thm9_int(j, gv[i], &e[0], eps_inf, lf)
                elif b == 1:
                    ov[i, j] = dpb_rdp_wor_pv_int(j, gv[i], &e[0], eps_inf, logd, lf)
                else:
                    ov[i, j] = dpb_rdp_wor_lower_int(j, gv[i], &e[0], lf)
    free(lf); free(logs); free(logd)
    return out.reshape(g.shape + (m,))


def pv_logd(logs):
    """log of the (padded) Pearson-Vajda forward differences D^l, even l, from log s_i."""
    cdef double[::1] ls = np.ascontiguousarray(logs, dtype=np.float64)
    cdef Py_ssize_t m = ls.shape[0], j
    out = np.empty(m)
    cdef double[::1] ov = out
    cdef double *lf = <double *>malloc(max(m, 1) * sizeof(double))
    if lf == NULL:
        raise MemoryError()
    with nogil:
        for j in range(m):
            lf[j] = lgamma(<double>j + 1.0)
        dpb_rdp_pv_logd(m - 1, &ls[0], lf, &ov[0])
    free(lf)
    return out


@cython.ufunc
cdef double interp(double alpha, double eps_floor, double eps_ceil) noexcept nogil:
    """Corollary 10: CGF interpolation between floor(alpha) and ceil(alpha); alpha <= 2 -> eps_ceil."""
    return dpb_rdp_interp(alpha, eps_floor, eps_ceil)
