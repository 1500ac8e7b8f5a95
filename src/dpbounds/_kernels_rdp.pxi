# Loops of the Renyi-DP bounds for subsampling without replacement (dpbounds.rdp), which share a
# workspace along the flattened arguments.  Included by _kernels.pyx.

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


cdef void _wor_work_free(object capsule) noexcept:
    cdef dpb_rdp_work *w = <dpb_rdp_work *>PyCapsule_GetPointer(capsule, b"dpbounds.wor_work")
    if w != NULL:
        dpb_rdp_work_free(w)
        free(w)


def wor_work():
    """A workspace of the without-replacement Gaussian kernel, kept from one call to the next.

    Its tables (log-factorials, the Gaussian's curve and the Pearson-Vajda moments of one
    sigma, the order-independent part of one (sigma, gamma)) are caches: each entry depends on
    its index and sigma (gamma) alone, so a value is the same bit for bit whichever calls built
    them.  Passed to :func:`wor_gaussian` calls at one sigma (an order search: a scan, then its
    refinement), it spares each call rebuilding the O(alpha^2) Pearson-Vajda table.  Not to be
    shared between threads.
    """
    cdef dpb_rdp_work *w = <dpb_rdp_work *>malloc(sizeof(dpb_rdp_work))
    if w == NULL:
        raise MemoryError
    dpb_rdp_work_init(w)
    return PyCapsule_New(w, b"dpbounds.wor_work", _wor_work_free)


def wor_gaussian(alpha, sigma, gamma, long bound, work=None):
    """WOR-subsampled Gaussian RDP, broadcasting over (alpha, sigma, gamma).

    bound: 0 Theorem 9, 1 improved (Pearson-Vajda), 2 lower.  A workspace is shared
    along the flattened (C-order) arrays: put sigma on the slowest axis to reuse the
    O(alpha^2) Pearson-Vajda table of the improved bound.  ``work``: a workspace made by
    :func:`wor_work` to use (and keep filled) instead of one of this call's own; the values
    are the same either way.
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
    cdef dpb_rdp_work *wp = &w
    cdef int b = <int>bound
    cdef int stop = 0
    cdef dpb_watch watch
    if work is None:
        dpb_rdp_work_init(&w)
    else:
        wp = <dpb_rdp_work *>PyCapsule_GetPointer(work, b"dpbounds.wor_work")   # (raises if not one)
        if wp == NULL:
            raise TypeError("work must be a workspace made by wor_work()")
    with nogil:
        # blocks of orders with a look for Ctrl-C between them (_interrupt.pxd): one order of
        # the improved bound can cost O(alpha^2)
        dpb_watch_start(&watch)
        while i0 < n and not stop:
            i1 = dpb_watch_block_end(&watch, i0, n)
            for i in range(i0, i1):
                ov[i] = dpb_rdp_wor_gaussian(av[i], sv[i], gv[i], b, wp)
            i0 = i1
            if i0 < n:
                stop = dpb_watch_stop(&watch)
    if work is None:
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
