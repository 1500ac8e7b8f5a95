"""The six-term delta_min of Theorem 3.1 and its validity condition vs the mpmath oracle (docs/theorem31.md)."""
import numpy as np
import oracle
import pytest

import dpbounds
from dpbounds import ufuncs

CONDITION2 = dict((n, b) for n, b, _ in ufuncs.STATUS_BITS)["CONDITION2"]

RTOL = 1e-14  # stated in csrc/dpb_theorem31.h and delta_bound's docstring


def _grid(rng, n=150):
    sig = 10 ** rng.uniform(np.log10(0.07), 4, n)
    m = np.floor(10 ** rng.uniform(np.log10(3), 15, n))
    extra_s = np.array([0.07, 0.5, 1.0, 2.0, 1e4, 1.0, 0.75, 3.0])
    extra_m = np.array([3, 3, 1140369, 59097, 1e15, 1e12, 4, 1e15])
    return np.concatenate([sig, extra_s]), np.concatenate([m, extra_m])


@pytest.mark.parametrize("coefficient", ["simplified", "exact"])
def test_delta_min_and_terms_accuracy(rng, coefficient, record_accuracy):
    s, m = _grid(rng)
    dmin = getattr(ufuncs, f"delta_min_{coefficient}")(s, m)
    terms = getattr(ufuncs, f"delta_terms_{coefficient}")(s, m)
    # delta_bound and the checked variant return delta_min itself where Theorem 3.1 applies
    bound = getattr(ufuncs, f"delta_bound_{coefficient}")(s, m)
    checked = getattr(ufuncs, f"_delta_bound_checked_{coefficient}")(s, m)[0]
    worst = {"min": 0.0, "terms": 0.0, "bound": 0.0, "checked": 0.0}
    for i in range(s.size):
        ref_terms = oracle.t31_terms(s[i], m[i], coefficient)
        with oracle.workdps():  # the sum at the oracle's precision, not the ambient one
            ref = oracle.mp.fsum(ref_terms)
        if ref > 1e300:
            assert dmin[i] == np.inf
            continue
        e = oracle.rel_error(dmin[i], ref)
        assert e <= RTOL, (s[i], m[i])
        worst["min"] = max(worst["min"], e)
        for k in range(6):
            e = oracle.rel_error(terms[k][i], ref_terms[k])
            assert e <= RTOL, (k + 1, s[i], m[i])
            worst["terms"] = max(worst["terms"], e)
        for key, got in (("bound", bound[i]), ("checked", checked[i])):
            if not np.isnan(got):
                worst[key] = max(worst[key], oracle.rel_error(got, ref))
    regime = f"sigma in [0.07, 1e4], M in [3, 1e15], {s.size} points"
    for key, name in (("min", f"delta_min_{coefficient}"), ("terms", f"delta_terms_{coefficient}"),
                      ("bound", f"delta_bound_{coefficient}"), ("checked", f"_delta_bound_checked_{coefficient}")):
        record_accuracy(name, worst[key], "relative", regime + (" where Theorem 3.1 applies" if key in ("bound", "checked") else ""))
    assert worst["bound"] <= RTOL and worst["checked"] <= RTOL


def test_table1_term_sizes():
    # term sizes at two Table-1 solutions (sigma=1 simplified, M=1 140 369; sigma=2 exact, M=59 097):
    # independent values with 3 digits for T1-T3, T6 and 2 digits for T4, T5
    digits = [3, 3, 3, 2, 2, 3]
    t = dpbounds.delta_bound_terms(1.0, 1140369, "simplified")
    assert [float(f"{x:.{d - 1}e}") for x, d in zip(t, digits)] == [9.51e-3, 4.90e-4, 1.12e-6, 1.1e-10, 1.7e-14, 2.19e-7]
    t = dpbounds.delta_bound_terms(2.0, 59097, "exact")
    assert [float(f"{x:.{d - 1}e}") for x, d in zip(t, digits)] == [9.12e-3, 8.75e-4, 4.44e-6, 6.4e-10, 1.7e-13, 5.49e-6]


@pytest.mark.parametrize("coefficient", ["simplified", "exact"])
@pytest.mark.parametrize("mode", ["delta_min", "target"])
def test_validity_matches_oracle(rng, coefficient, mode):
    s = 10 ** rng.uniform(np.log10(0.3), np.log10(8), 120)
    m = np.floor(10 ** rng.uniform(np.log10(3), 9, 120))
    delta = 10 ** rng.uniform(-4, -1, 120)
    r = dpbounds.theorem31(s, m, delta=delta if mode == "target" else None, coefficient=coefficient, validity_at=mode)
    checked = 0
    for i in range(s.size):
        d = float(delta[i]) if mode == "target" else None
        margin = oracle.condition2_margin(s[i], m[i], d, coefficient)
        edge = oracle.mp.mpf(s[i]) ** 2 * oracle.mp.log(m[i]) - 3
        if abs(margin) < 1e-12 or abs(edge) < 1e-12:
            continue  # a tie at double precision; either answer is defensible
        if mode == "target" and abs(oracle.delta_min(s[i], m[i], coefficient) / delta[i] - 1) < 1e-12:
            continue
        expect = oracle.theorem31_valid(s[i], m[i], d, coefficient)
        assert (r.status[i] == 0) == expect, (s[i], m[i], d, r.reasons()[i])
        checked += 1
    assert checked > 100
    assert 0 < np.count_nonzero(r.status == 0) < s.size  # both outcomes exercised


def test_validity_implies_sigma_edge(rng):
    # condition (2) with either coefficient implies sigma >= sqrt(3/ln M)
    s = 10 ** rng.uniform(np.log10(0.3), 1, 3000)
    m = np.floor(10 ** rng.uniform(0.5, 12, 3000))
    for kind in (0, 1):
        st = (ufuncs.theorem31_status_exact if kind else ufuncs.theorem31_status_simplified)(s, m, np.nan)
        cond2_ok = (st & CONDITION2) == 0
        assert np.all(s[cond2_ok] ** 2 * np.log(m[cond2_ok]) >= 3)


def test_delta_bound_nan_where_invalid_never_silent():
    # sigma = 0.5 at M = 100 violates sigma >= sqrt(3/ln M) and (2)
    assert np.isnan(dpbounds.delta_bound(0.5, 100))
    with pytest.raises(ValueError, match="does not apply"):
        dpbounds.delta_bound(0.5, 100, on_invalid="raise")
    out = dpbounds.delta_bound([0.5, 1.0], [100, 1140369], "simplified")
    assert np.isnan(out[0]) and out[1] == pytest.approx(0.01, rel=1e-6, abs=0)
    with pytest.raises(ValueError, match="1 of 2"):
        dpbounds.delta_bound([0.5, 1.0], [100, 1140369], on_invalid="raise")
    # the raw ufuncs agree with the validated function where valid (exact is the default)
    assert ufuncs.delta_bound_simplified(1.0, 1140369.0) == dpbounds.delta_bound(1.0, 1140369, "simplified")
    assert ufuncs.delta_bound_exact(1.0, 1140369.0) == dpbounds.delta_bound(1.0, 1140369)


@pytest.mark.parametrize("sigma, rounds", [(1.0, 1e6), (0.5, 100), (np.float64(1.0), 1e6), ([1.0], [1e6]),
                                           (-1.0, 1e6)])
def test_delta_bound_refuses_an_unknown_on_invalid_everywhere(sigma, rounds):
    # at a valid point, an invalid one and bad input, through the compiled fast path and the
    # Python function alike: the policy is checked before any answer is returned
    for f in (dpbounds.delta_bound, dpbounds.delta_bound.__wrapped__):
        with pytest.raises(dpbounds.DPBoundsError, match="on_invalid must be one of 'nan', 'raise', got 'bogus'"):
            f(sigma, rounds, on_invalid="bogus")


def test_theorem31_result_object():
    r = dpbounds.theorem31(1.0, 1140369, delta=0.01)
    assert r.valid and bool(r) and r.reason == "" and r.certified_delta == 0.01
    assert r.delta_min == pytest.approx(sum(r.terms), rel=1e-15, abs=0)
    r = dpbounds.theorem31(1.0, 1140369, delta=0.005)
    assert not r.valid and "target delta < delta_min" in r.reason and np.isnan(r.certified_delta)
    r = dpbounds.theorem31(0.5, 100)
    assert "sigma < sqrt(3/ln M)" in r.reason and "condition (2)" in r.reason
    ra = dpbounds.theorem31([1.0, 0.5], [1140369, 100])
    assert list(ra.valid) == [True, False] and "1 of 2" in ra.reason
    with pytest.raises(ValueError, match="ambiguous"):
        bool(ra)
    with pytest.raises(ValueError, match="target delta"):
        dpbounds.theorem31(1.0, 100, validity_at="target")


def test_target_mode_breaks_for_large_sigma():
    # the "target" reading of (2) (docs/theorem31.md): 1/2 - Phi(-kappa) drops below 0.01 at sigma ~ 4.52
    assert dpbounds.theorem31(4.6, 10**6, delta=0.01, validity_at="target", coefficient="exact").status & CONDITION2
    assert dpbounds.theorem31(4.6, 10**6, delta=0.01, coefficient="exact").valid


@pytest.mark.parametrize("f,args", [
    (dpbounds.delta_bound, (1.0, 1e6)),
    (dpbounds.delta_bound_terms, (1.0, 1e6)),
    (dpbounds.theorem31, (1.0, 1e6)),
])
def test_scalar_and_array_agree(f, args):
    s = f(*args)
    a = f(np.array([args[0]] * 3), np.array([args[1]] * 3))
    if isinstance(s, tuple):
        assert all(np.all(x == y) for x, y in zip(s, a))
    elif hasattr(s, "delta_min"):
        assert np.all(a.delta_min == s.delta_min)
    else:
        assert np.all(a == s)


def _edge(kind, m, valid_s, invalid_s):
    a, b = valid_s, invalid_s
    for _ in range(100):
        mid = 0.5 * (a + b)
        if (ufuncs.theorem31_status_exact if kind else ufuncs.theorem31_status_simplified)(mid, m, np.nan) == 0:
            a = mid
        else:
            b = mid
    return a, b


@pytest.mark.parametrize("coefficient", ["simplified", "exact"])
@pytest.mark.parametrize("m", [10**4, 10**6, 10**12, 10**15])
def test_sigma_at_the_validity_edges(coefficient, m):
    # The sigma-range where Theorem 3.1 applies at fixed M is an interval: (2) binds before
    # sigma >= sqrt(3/ln M) at the lower end, and 1/2 - Phi(-kappa) ~ 1/(5 sigma^2) at the upper.
    # Locate both edges on our status; the oracle must agree just inside and just outside, and
    # the bound must be accurate just inside.
    kind = 1 if coefficient == "exact" else 0
    grid = np.linspace(np.sqrt(3 / np.log(m)), 10, 2000)
    ok = grid[(ufuncs.theorem31_status_exact if kind else ufuncs.theorem31_status_simplified)(grid, m, np.nan) == 0]
    assert ok.size
    edges = [_edge(kind, m, ok[0], np.sqrt(3 / np.log(m)))]
    if (ufuncs.theorem31_status_exact if kind else ufuncs.theorem31_status_simplified)(1e3, m, np.nan) != 0:
        edges.append(_edge(kind, m, ok[-1], 1e3))
    for inside, outside in edges:
        inside = inside + (inside - outside) * 1e3  # a few hundred ulp from the edge
        outside = outside - (inside - outside)
        assert oracle.theorem31_valid(inside, m, None, coefficient)
        assert not oracle.theorem31_valid(outside, m, None, coefficient)
        assert np.isnan(dpbounds.delta_bound(outside, m, coefficient))
        d = dpbounds.delta_bound(inside, m, coefficient)
        assert oracle.rel_error(d, oracle.delta_min(inside, m, coefficient)) <= RTOL


def _outcome(f, *args, **kwargs):
    try:
        # the array path warns where a result overflows (min_dataset_size near 1e308), the scalar
        # path does not: values and errors are compared, not warnings
        with np.errstate(all="ignore"):
            v = f(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return type(exc), str(exc)
    return type(v), np.asarray(v).tobytes()


_HARD = [-1.0, 0.0, 5e-324, 0.03, 0.0375, 0.5, 0.61, 1.0, 2.0, 2.5, 3.0, 4.6, 300.0, 1140369.0, 1e6, 1e15,
         2.0 ** 53, 1e150, 1e200, np.inf, np.nan]


@pytest.mark.parametrize("coefficient", ["exact", "simplified", "bogus"])
def test_fast_path_matches_array_path(coefficient):
    # The four functions are compiled entries (the scalar fast paths of _kernels_theorem31.pxi)
    # in front of the Python functions of dpbounds.theorem31 (__wrapped__).  Whichever answers,
    # a call gives the same value, type and error, bit for bit.
    pairs = [(f, f.__wrapped__) for f in (dpbounds.delta_bound, dpbounds.rounds_required,
                                          dpbounds.rounds_closed_form, dpbounds.min_dataset_size)]
    for (fast, slow) in pairs:
        assert fast is not slow and fast.__module__ == slow.__module__ == "dpbounds.allocation_bound"
    (db, db_py), (rr, rr_py), (cf, cf_py), (ds, ds_py) = pairs
    for s in _HARD:
        for x in _HARD:
            for on_invalid in ("nan", "raise"):
                assert _outcome(db, s, x, coefficient, on_invalid=on_invalid) == \
                    _outcome(db_py, s, x, coefficient, on_invalid=on_invalid), (s, x, on_invalid)
            assert _outcome(ds, s, x) == _outcome(ds_py, s, x), (s, x)
            assert _outcome(ds, 1.0, 100, s, x) == _outcome(ds_py, 1.0, 100, s, x), (s, x)
        for d in (-0.1, 0.0, 5e-324, 1e-12, 0.01, 0.49, 0.5, 1.0, np.nan):
            assert _outcome(cf, s, d, coefficient) == _outcome(cf_py, s, d, coefficient), (s, d)
            for epochs in (1, 2, 7, 1.5, 0):
                for vat in ("delta_min", "target"):
                    assert _outcome(rr, s, d, coefficient, vat, epochs=epochs) == \
                        _outcome(rr_py, s, d, coefficient, vat, epochs=epochs), (s, d, epochs, vat)


def test_public_functions_show_their_python_definition():
    import importlib
    import inspect

    module = importlib.import_module("dpbounds.allocation_bound")
    for name in ("delta_bound", "rounds_required", "rounds_closed_form", "min_dataset_size"):
        f = getattr(dpbounds, name)
        assert f is getattr(module, name)
        assert f.__doc__ == f.__wrapped__.__doc__ and "Parameters" in f.__doc__
        assert inspect.signature(f) == inspect.signature(f.__wrapped__)
        assert inspect.getsource(f).lstrip().startswith(f"@_kernels.scalar_fast_path\ndef {name}(")
