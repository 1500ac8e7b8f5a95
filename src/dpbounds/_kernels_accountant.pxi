# Kernels of the exact random-allocation accountant (dpbounds.accountant's laws): the lognormal
# characteristic function (plain, tilted, on a grid), the log-domain convolution and the
# phase-exact Fourier series.  Included by _kernels.pyx.

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


def tail_table_lower(lam, y, coefs):
    """g[i, j] = e^{-z} - 1 + z at z = lam[i] y[j] (series with ``coefs`` = (-1)^k / k!, k = 2 .. 10,
    below z = 0.1; see csrc/dpb_tailtab.h)."""
    cdef double[::1] l = np.ascontiguousarray(lam, dtype=np.float64)
    cdef double[::1] yy = np.ascontiguousarray(y, dtype=np.float64)
    cdef double[::1] c = np.ascontiguousarray(coefs, dtype=np.float64)
    if c.shape[0] != 9:
        raise DPBoundsError("coefs must hold 9 values")
    cdef long nl = l.shape[0], ny = yy.shape[0]
    out = np.empty((nl, ny), dtype=np.float64)
    cdef double[:, ::1] g = out
    if nl > 0 and ny > 0:
        with nogil:
            dpb_tailtab_lower(&l[0], nl, &yy[0], ny, &c[0], &g[0, 0])
    return out


def tail_table_upper(lam, b, w, y, seg, double c5, S, J):
    """Node sums of the upper truncated transforms into ``S``, ``J`` (float64 (len(b), len(lam)),
    C-contiguous, written in place where 1e-3 <= lam b <= 30): S = sum w (e^z - 1 - z),
    J = sum w y (e^z - 1), z = lam y, over the nodes seg[i] .. seg[i+1]-1 of level b[i]
    (see csrc/dpb_tailtab.h)."""
    cdef double[::1] l = np.ascontiguousarray(lam, dtype=np.float64)
    cdef double[::1] bb = np.ascontiguousarray(b, dtype=np.float64)
    cdef double[::1] ww = np.ascontiguousarray(w, dtype=np.float64)
    cdef double[::1] yy = np.ascontiguousarray(y, dtype=np.float64)
    cdef long[::1] sg = np.ascontiguousarray(seg, dtype=np.int_)
    cdef double[:, ::1] s_out = S
    cdef double[:, ::1] j_out = J
    cdef long nl = l.shape[0], nb = bb.shape[0]
    if ww.shape[0] != yy.shape[0] or sg.shape[0] != nb + 1 or (nb > 0 and (sg[0] < 0 or sg[nb] > ww.shape[0])):
        raise DPBoundsError("w, y and seg do not match")
    for i in range(nb):
        if sg[i + 1] < sg[i]:
            raise DPBoundsError("seg must be non-decreasing")
    if s_out.shape[0] != nb or s_out.shape[1] != nl or j_out.shape[0] != nb or j_out.shape[1] != nl:
        raise DPBoundsError("S and J must have shape (len(b), len(lam))")
    cdef int rc = 0
    if nl > 0 and nb > 0 and ww.shape[0] > 0:
        with nogil:
            rc = dpb_tailtab_upper(&l[0], nl, &bb[0], nb, &ww[0], &yy[0], &sg[0], c5, &s_out[0, 0], &j_out[0, 0])
    _check_alloc(rc, "tail_table_upper")


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


def tail_sums(u, double r, bint plain=True, bint discounted=True):
    """(a, d): a[i] = sum_{j >= i} u[j] (bit for bit ``np.cumsum(u[::-1])[::-1]``) and
    d[i] = sum_{j >= i} r^(j - i) u[j] (Horner form, within gamma_{2n} of the recurrence in
    exact arithmetic, relative to the sum of |terms|), from one backward pass; a sum not asked
    for is an empty array."""
    cdef double[::1] uu = np.ascontiguousarray(u, dtype=np.float64)
    cdef long n = uu.shape[0]
    a_arr = np.empty(n if plain else 0, dtype=np.float64)
    d_arr = np.empty(n if discounted else 0, dtype=np.float64)
    cdef double[::1] av = a_arr
    cdef double[::1] dv = d_arr
    cdef double *pa = &av[0] if plain and n > 0 else NULL
    cdef double *pd = &dv[0] if discounted and n > 0 else NULL
    if n > 0 and (plain or discounted):
        with nogil:
            dpb_tail_sums(n, &uu[0], r, pa, pd)
    return a_arr, d_arr
