# The Cartesian-grid kernels behind dpbounds.outer (``outer_*``, raw: the ufuncs' NaN conventions),
# run tile by tile with the GIL released and Ctrl-C checked between tiles.  Included by _kernels.pyx.

_COEFFICIENTS = ("simplified", "exact")


cdef inline int _kind(object coefficient) except -1:
    """The C core's DPB_COEF_* of a coefficient name (DPBoundsError naming ``coefficient`` otherwise)."""
    if coefficient == "exact":
        return DPB_COEF_EXACT
    if coefficient == "simplified":
        return DPB_COEF_SIMPLIFIED
    check_choice("coefficient", coefficient, _COEFFICIENTS)
    return -1


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
