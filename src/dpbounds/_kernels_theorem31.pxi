# The scalar fast paths of the validated Theorem 3.1 functions of dpbounds.allocation_bound.  Included by
# _kernels.pyx.
#
# Each compiled entry below stands in front of the Python function of the same name (installed
# by scalar_fast_path, the decorator allocation_bound.py applies): it answers the common call -- Python
# numbers inside the domain and a known coefficient -- straight from C, and hands every other
# call, unchanged, to the Python function, which owns the docstring, the signature, the
# argument checks, the array path and the error policy.  A training loop calls with one sigma
# and Python numbers, and a Python frame would cost as much again as the whole call.  The
# entries compute exactly what the Python functions compute (the same C functions); the
# numbers never depend on which path answered (tools/check_identical.py, and
# tests/special/test_theorem31.py::test_fast_path_matches_array_path).

cdef int _BAD_INPUT = [s.bit for s in _errors.STATUS_BITS if s.name == "BAD_INPUT"][0]

# the validated Python functions (set once, at the import of dpbounds.allocation_bound)
cdef object _py_delta_bound = None
cdef object _py_rounds_closed_form = None
cdef object _py_rounds_required = None
cdef object _py_min_dataset_size = None


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
# array form live in dpbounds._validation; tests/contract/test_validation.py checks these agree with
# Constraint.holds on a grid of hard values).  Outside them the entries call the Python
# function, whose checks produce the message.
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
    # answers: delta_min where the theorem applies; NaN under the default policy where it does not
    cdef double s = 0.0, m = 0.0, r
    cdef int kind, st
    if coefficient == "exact":
        kind = DPB_COEF_EXACT
    elif coefficient == "simplified":
        kind = DPB_COEF_SIMPLIFIED
    else:
        return _py_delta_bound(sigma, rounds, coefficient, on_invalid=on_invalid)
    if not (on_invalid == "nan" or on_invalid == "raise"):   # refused, by name, even at a valid point
        return _py_delta_bound(sigma, rounds, coefficient, on_invalid=on_invalid)
    if _as_double(sigma, &s) and _as_double(rounds, &m):
        st = dpb_t31_checked(_prepared(s, kind), m, &r)
        if st == 0:
            return r
        if not (st & _BAD_INPUT) and on_invalid == "nan":
            return NAN
    return _py_delta_bound(sigma, rounds, coefficient, on_invalid=on_invalid)


def rounds_closed_form(sigma, delta, coefficient="exact"):
    cdef double s = 0.0, d = 0.0
    cdef int kind
    if coefficient == "exact":
        kind = DPB_COEF_EXACT
    elif coefficient == "simplified":
        kind = DPB_COEF_SIMPLIFIED
    else:
        return _py_rounds_closed_form(sigma, delta, coefficient)
    if _as_double(sigma, &s) and _as_double(delta, &d) and _finite_positive(s) and _open_unit(d):
        return dpb_rounds_closed_form(s, d, kind)
    return _py_rounds_closed_form(sigma, delta, coefficient)


def rounds_required(sigma, delta, coefficient="exact", validity_at="delta_min", *, epochs=1):
    cdef double s = 0.0, d = 0.0, e = 0.0
    cdef int kind, tgt
    if coefficient == "exact":
        kind = DPB_COEF_EXACT
    elif coefficient == "simplified":
        kind = DPB_COEF_SIMPLIFIED
    else:
        return _py_rounds_required(sigma, delta, coefficient, validity_at, epochs=epochs)
    if validity_at == "delta_min":
        tgt = 0
    elif validity_at == "target":
        tgt = 1
    else:
        return _py_rounds_required(sigma, delta, coefficient, validity_at, epochs=epochs)
    if (_as_double(sigma, &s) and _as_double(delta, &d) and _as_double(epochs, &e)
            and _finite_positive(s) and _open_unit(d) and _integer_ge(e, 1.0)):
        if e != 1.0:
            d = dpb_per_epoch_delta(d, e)
            if d == 0.0:
                # the per-epoch target underflowed (delta = 5e-324 over 2 epochs): below the
                # smallest double, no M <= 2**53 reaches it (the Python function's inf as well)
                return INFINITY
        return dpb_rounds_required(s, d, kind, tgt)
    return _py_rounds_required(sigma, delta, coefficient, validity_at, epochs=epochs)


def min_dataset_size(sigma, rounds, clip_norm=1.0, noise_ratio=0.1):
    cdef double s = 0.0, m = 0.0, cn = 0.0, nr = 0.0
    if (_as_double(sigma, &s) and _as_double(rounds, &m) and _as_double(clip_norm, &cn)
            and _as_double(noise_ratio, &nr) and _finite_positive(s) and _integer_ge(m, 1.0)
            and _finite_positive(cn) and _finite_positive(nr)):
        return dpb_min_dataset_size(s, m, cn, nr)
    return _py_min_dataset_size(sigma, rounds, clip_norm, noise_ratio)


def scalar_fast_path(func):
    """Decorator: the compiled scalar fast path of ``func`` (a function of dpbounds.allocation_bound), in front of it.

    Returns the compiled entry of the same name, which answers calls with Python numbers in
    the domain from C and passes every other call to ``func``.  The entry carries ``func``'s
    name, module, docstring and signature (``__wrapped__``), so help(), inspect and the
    documentation show the Python function.
    """
    global _py_delta_bound, _py_rounds_closed_form, _py_rounds_required, _py_min_dataset_size
    name = func.__name__
    if name == "delta_bound":
        entry, _py_delta_bound = delta_bound, func
    elif name == "rounds_closed_form":
        entry, _py_rounds_closed_form = rounds_closed_form, func
    elif name == "rounds_required":
        entry, _py_rounds_required = rounds_required, func
    elif name == "min_dataset_size":
        entry, _py_min_dataset_size = min_dataset_size, func
    else:
        raise KeyError(f"no compiled fast path for {name!r}")
    return functools.update_wrapper(entry, func)
