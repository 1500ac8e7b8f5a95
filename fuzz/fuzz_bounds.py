"""Fuzz Theorem 3.1 and its inversions: delta_bound, delta_bound_terms, theorem31, rounds_required,
rounds_closed_form, min_dataset_size, compose_delta and per_epoch_delta.

Beyond the contract of every call (_contract.attempt), on scalar points where the call succeeds:

* delta_bound is in [0, 1] or NaN, NaN exactly where ``theorem31(...).valid`` is False, and
  otherwise equals ``theorem31(...).delta_min``; the float fast path equals the array path bit for bit;
* monotonicity on pairs of valid points: delta_bound(sigma, M) is non-increasing in M and in
  sigma (4 ulps of slack);
* rounds_required(sigma, delta, epochs=E) = M is minimal and certified: M is an integer >= 3
  (or inf), delta_bound(sigma, M) <= the per-epoch delta 1 - (1 - delta)^(1/E) with the theorem
  valid, and at M - 1 the theorem fails or delta_bound(sigma, M - 1) > that delta; with
  validity_at="target", theorem31(sigma, M, delta=..., validity_at="target") is valid;
* compose_delta / per_epoch_delta are in [0, 1], compose_delta(d, E) >= d, per_epoch_delta(d, E)
  <= d, and composing the per-epoch delta gives back the total to 1e-12 relative;
* theorem31's status uses the declared bits only, ``reason`` is empty exactly when valid.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _main import fuzz, instrument_dpbounds  # noqa: E402

instrument_dpbounds()

import numpy as np  # noqa: E402
from _contract import attempt, check, in_unit, ulps_le  # noqa: E402
from _inputs import Draw  # noqa: E402

import dpbounds  # noqa: E402

_COEF = ("exact", "simplified")
_STATUS_MASK = 1 | 2 | 4 | 8 | 16


def _coef(d: Draw) -> object:
    return d.pick(_COEF) if d.int(0, 15) else d.pick(("EXACT", "", None, 1))


def fuzz_delta_bound(d: Draw) -> None:
    s, m, c = d.value("sigma"), d.value("rounds"), _coef(d)
    raise_ = d.int(0, 3) == 0
    kw = {"on_invalid": "raise"} if raise_ else {}
    ok, r = attempt(dpbounds.delta_bound, s, m, c, names=("sigma", "rounds", "coefficient", "on_invalid"),
                    allow=(r"^Theorem 3\.1 does not apply", "shapes do not broadcast"), **kw)
    if not ok:
        return
    check(in_unit(r, nan_ok=not raise_), f"delta_bound out of [0, 1]: {r}", f"delta_bound({s!r}, {m!r}, {c!r})")
    ok2, t = attempt(dpbounds.theorem31, s, m, coefficient=c, names=("sigma", "rounds"))
    check(ok2, f"theorem31 rejected what delta_bound accepted: {t}", f"({s!r}, {m!r})")
    valid = np.asarray(t.status) == 0
    rv = np.asarray(r, dtype=np.float64)
    check(np.isnan(rv) == ~valid, "delta_bound NaN where theorem31 is valid (or the reverse)", f"({s!r}, {m!r})")
    check(rv[valid] == np.asarray(t.delta_min)[np.broadcast_to(valid, np.shape(t.delta_min))],
          "delta_bound != theorem31.delta_min", f"({s!r}, {m!r})")
    if np.ndim(r) == 0:
        # the fast scalar path and the array path agree bit for bit
        ok3, ra = attempt(dpbounds.delta_bound, np.array([float(np.asarray(s, dtype=np.float64))]),
                          np.array([float(np.asarray(m, dtype=np.float64))]), c, names=("sigma", "rounds"))
        check(ok3 and (ra[0] == r or (math.isnan(ra[0]) and math.isnan(r))),
              f"array path {ra} != scalar path {r}", f"delta_bound({s!r}, {m!r})")


def fuzz_monotone(d: Draw) -> None:
    # In sigma only with the exact coefficient: the simplified one, (w^3 + 4)/(w - 1)^2, grows
    # like 5 sigma^4 as sigma -> inf, so T1 = 2 B coef mu grows like sigma^3/sqrt(M) and the
    # printed theorem's delta_min is not monotone in sigma (e.g. M = 8.1e307: 1.3e-153 at
    # sigma = 1.2, 5.3e-142 at sigma = 1e4).  In M both readings are monotone.
    c = d.pick(_COEF)
    s1, s2 = sorted((d.double("sigma"), d.double("sigma")))
    m1, m2 = sorted((d.double("rounds"), d.double("rounds")))
    vals = {}
    for s in (s1, s2):
        for m in (m1, m2):
            ok, r = attempt(dpbounds.delta_bound, s, m, c, names=("sigma", "rounds"))
            vals[s, m] = r if ok else math.nan
    pairs = [((s1, m1), (s1, m2)), ((s2, m1), (s2, m2))]
    if c == "exact":
        pairs += [((s1, m1), (s2, m1)), ((s1, m2), (s2, m2))]
    for (sa, ma), (sb, mb) in pairs:
        a, b = vals[sa, ma], vals[sb, mb]
        if not (math.isnan(a) or math.isnan(b)):
            # up to twice delta_bound's documented relative error (1e-14 for M <= 1e15): two
            # values a few ulps apart in the true order can come out swapped; beyond M = 1e15 no
            # accuracy is claimed and only a 1e-13 swap is tolerated (found at M = 1.8e308: 2.3e-14)
            tol = 2e-14 if max(ma, mb) <= 1e15 else 1e-13
            check(b <= a * (1 + tol) or ulps_le(b, a),
                  f"delta_bound not non-increasing: ({sa}, {ma}) -> {a}, ({sb}, {mb}) -> {b}",
                  f"delta_bound coefficient={c}")


def fuzz_rounds_required(d: Draw) -> None:
    s, dl = d.double("sigma"), d.double("unit")
    e = d.pick((1, 1, 2, 3, 10, d.double("count")))
    c = d.pick(_COEF)
    vat = d.pick(("delta_min", "target"))
    call = f"rounds_required({s!r}, {dl!r}, {c!r}, {vat!r}, epochs={e!r})"
    ok, m = attempt(dpbounds.rounds_required, s, dl, c, vat, epochs=e,
                    names=("sigma", "delta", "epochs", "coefficient", "validity_at"))
    if not ok:
        return
    check(isinstance(m, float), f"not a float: {type(m)}", call)
    if math.isnan(m):
        check(False, "NaN", call)
    if math.isinf(m):
        return
    check(m >= 3 and m == math.floor(m), f"not an integer >= 3: {m}", call)
    de = dl if e == 1 else dpbounds.per_epoch_delta(dl, e)
    if m > 2.0 ** 53:
        return
    if vat == "target":
        t = dpbounds.theorem31(s, m, delta=de, coefficient=c, validity_at="target")
        check(t.valid, f"M = {m} not certified: {t.reason}", call)
    else:
        r = dpbounds.delta_bound(s, m, c)
        check(not math.isnan(r) and r <= de, f"M = {m} gives delta_bound {r} > {de}", call)
    if m > 3:
        if vat == "target":
            prev = dpbounds.theorem31(s, m - 1, delta=de, coefficient=c, validity_at="target")
            check(not prev.valid, f"M - 1 = {m - 1} already certified: not minimal", call)
        else:
            r = dpbounds.delta_bound(s, m - 1, c)
            check(math.isnan(r) or r > de, f"M - 1 = {m - 1} gives delta_bound {r} <= {de}: not minimal", call)
    ok, mc = attempt(dpbounds.rounds_closed_form, s, dl, c, names=("sigma", "delta"))
    check(ok and mc >= 1, f"rounds_closed_form {mc}", call)


def fuzz_dataset_and_epochs(d: Draw) -> None:
    s, m, cn, nr = d.value("sigma"), d.value("count"), d.value("positive"), d.value("positive")
    ok, n = attempt(dpbounds.min_dataset_size, s, m, cn, nr,
                    names=("sigma", "rounds", "clip_norm", "noise_ratio"), allow=("shapes do not broadcast",))
    if ok:
        # >= 0, not > 0: C sigma M / r of tiny C and sigma over a huge ratio underflows to 0
        check(np.asarray(n) >= 0, f"min_dataset_size < 0: {n}", "min_dataset_size")
    dl, e = d.double("unit"), d.scalar("count")
    call = f"compose_delta/per_epoch_delta({dl!r}, {e!r})"
    ok1, c = attempt(dpbounds.compose_delta, dl, e, names=("delta", "epochs"))
    ok2, p = attempt(dpbounds.per_epoch_delta, dl, e, names=("delta_total", "epochs"))
    check(ok1 == ok2, "one accepts what the other refuses", call)
    if ok1:
        check(in_unit(c) and in_unit(p), f"out of [0, 1]: {c}, {p}", call)
        check(c >= dl and p <= dl, f"compose {c} < delta or per-epoch {p} > delta", call)
        back = dpbounds.compose_delta(p, e)
        if p >= 1e-290 and dl < 1 - 1e-6:   # a subnormal per-epoch delta has lost its digits
            check(abs(back - dl) <= 1e-12 * dl, f"round trip {back} != {dl}", call)


def fuzz_theorem31(d: Draw) -> None:
    s, m = d.value("sigma"), d.value("rounds")
    dl = None if d.bool() else d.value("unit")
    vat = d.pick(("delta_min", "target"))
    ok, t = attempt(dpbounds.theorem31, s, m, dl, d.pick(_COEF), vat,
                    names=("sigma", "rounds", "delta", "validity_at"),
                    allow=("validity_at='target' needs a target delta", "shapes do not broadcast"))
    if not ok:
        return
    st = np.asarray(t.status)
    check((st & ~_STATUS_MASK) == 0, f"undeclared status bits {st}", "theorem31")
    if st.ndim == 0:
        check((t.reason == "") == (int(st) == 0), f"reason {t.reason!r} vs status {st}", "theorem31")
        check(bool(t) == t.valid, "bool(result) != valid", "theorem31")
    cd = np.asarray(t.certified_delta, dtype=np.float64)
    check(np.isnan(cd) == (st != 0), "certified_delta NaN does not match the status", "theorem31")
    ok, terms = attempt(dpbounds.delta_bound_terms, s, m, names=("sigma", "rounds"),
                        allow=("shapes do not broadcast",))
    if ok:
        for x in terms:
            xa = np.asarray(x)
            check((xa >= 0) | np.isnan(xa), f"negative term {x}", "delta_bound_terms")


_FAMILY = (fuzz_delta_bound, fuzz_monotone, fuzz_rounds_required, fuzz_dataset_and_epochs, fuzz_theorem31)


def test_one_input(data: bytes) -> None:
    d = Draw(data)
    d.pick(_FAMILY)(d)


if __name__ == "__main__":
    fuzz(test_one_input)
