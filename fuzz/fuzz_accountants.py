"""Fuzz the accountants and calibration: RandomAllocationAccountant (all three methods, and
step()/state_dict()), PoissonAccountant, RandomAllocationPLD, calibrate_noise, calibrate_epochs,
calibrate_batch_size.

Sizes are capped in this harness so that one call takes milliseconds, not seconds: rounds per
epoch M <= 1000, epochs <= 3, steps <= 3000, dataset sizes <= 2000, and the noise multiplier is
drawn from [0.7, 20] for the exact accountants (building the exact law below sigma ~ 0.6 takes
seconds: RandomAllocationPLD(0.507, 389, 1) took 2.6 s CPU, a finding of this harness reported
to the interrupts-and-limits work; that regime is measured by the benchmarks, not fuzzed).  Out-of-range and
non-numeric values are still fed to every constructor (validation is cheap).

Checked where a call succeeds:

* every bracket has 0 <= lower <= upper; epsilon brackets have lower >= 0; delta brackets lie
  in [0, 1]; ``tolerance_met`` is False exactly when a PrecisionWarning was issued;
* epsilon and delta brackets are consistent.  With [e_lo, e_hi] = eps(delta) and the true
  delta(.) non-increasing: delta(e_hi) <= delta, so the lower end of the delta bracket at e_hi is
  <= delta (1 + 1e-9); and where e_lo > 0, delta(e_lo) >= delta, so the upper end of the delta
  bracket at e_lo is >= delta (1 - 1e-9).  Both ends are certified, so any violation is a wrong
  bracket;
* on pairs eps1 < eps2: lower delta(eps2) <= upper delta(eps1) (delta is non-increasing);
* calibrate_noise returns a finite sigma > 0; calibrate_epochs returns an int in [1, max_epochs],
  calibrate_batch_size an int >= 1.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _main import fuzz, instrument_dpbounds  # noqa: E402

instrument_dpbounds()

import _contract  # noqa: E402
from _contract import attempt, check  # noqa: E402
from _inputs import Draw  # noqa: E402

import dpbounds  # noqa: E402

M_MAX, EPOCHS_MAX, STEPS_MAX, N_MAX = 1000, 3, 3000, 2000
SIGMA_RANGE = (0.7, 20.0)
_NAMES = ("noise_multiplier", "rounds_per_epoch", "epochs", "method", "tolerance", "max_lattice", "dataset_size",
          "batch_size", "steps", "sample_rate", "sigma", "rounds", "delta", "epsilon")


def _sigma(d: Draw) -> float:
    lo, hi = SIGMA_RANGE
    return lo * (hi / lo) ** d.fdp.ConsumeProbability()


def _maybe_wild(d: Draw, tame: Any, kind: str) -> Any:
    """Usually the tame value; sometimes any scalar (validation paths).  A wild noise multiplier
    that is valid but below the cap is raised to it (validation is what the wild draw is for)."""
    if d.int(0, 7):
        return tame
    v = d.scalar(kind)
    if kind == "sigma" and isinstance(v, float) and 0 < v < SIGMA_RANGE[0]:
        return SIGMA_RANGE[0]
    return v


def _cheap(x: Any, cap: float) -> bool:
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        return True
    return not (math.isfinite(v) and v > cap)


def _check_bracket(b: Any, quantity: str, call: str, warned: bool) -> None:
    check(isinstance(b, dpbounds.PrivacyBracket), f"not a PrivacyBracket: {type(b)}", call)
    lo, hi = b
    check(not (math.isnan(lo) or math.isnan(hi)), f"NaN in bracket {b}", call)
    check(0 <= lo <= hi, f"bracket not 0 <= lower <= upper: {b}", call)
    if quantity == "delta":
        check(hi <= 1, f"delta bracket above 1: {b}", call)
    check(b.quantity == quantity, f"quantity {b.quantity}", call)
    check(b.tolerance_met or warned or b.tolerance == math.inf,
          "tolerance missed without a PrecisionWarning", call)


def _bracket(fn: Any, x: float, names: tuple[str, ...]) -> tuple[bool, Any, bool]:
    ok, b = attempt(fn, x, names=names, allow=(r"no (finite|steps)", "does not apply", "history", "unbounded",
                                                 "cannot", "needs"))
    return ok, b, any(issubclass(c, dpbounds.PrecisionWarning) for c in _contract.LAST_WARNINGS)


def _consistent(acc: Any, d: Draw, call: str) -> None:
    delta = min(max(abs(d.double("unit")), 1e-12), 0.5)
    ok, eb, warned = _bracket(acc.get_epsilon_bracket, delta, ("delta",))
    if not ok:
        return
    _check_bracket(eb, "epsilon", f"{call}.get_epsilon_bracket({delta!r})", warned)
    e_lo, e_hi = eb
    if math.isfinite(e_hi):
        ok, db, warned = _bracket(acc.get_delta_bracket, e_hi, ("epsilon",))
        if ok:
            _check_bracket(db, "delta", f"{call}.get_delta_bracket({e_hi!r})", warned)
            check(db.lower <= delta * (1 + 1e-9), f"delta bracket at the epsilon upper end {e_hi!r} is {db}: "
                  f"its lower end exceeds the target delta {delta!r}", call)
    if 0 < e_lo and math.isfinite(e_lo):
        ok, db, warned = _bracket(acc.get_delta_bracket, e_lo, ("epsilon",))
        if ok:
            check(db.upper >= delta * (1 - 1e-9), f"delta bracket at the epsilon lower end {e_lo!r} is {db}: "
                  f"its upper end is below the target delta {delta!r}", call)
    e1, e2 = sorted((abs(d.double("eps")), abs(d.double("eps"))))
    ok1, b1, w1 = _bracket(acc.get_delta_bracket, e1, ("epsilon",))
    ok2, b2, w2 = _bracket(acc.get_delta_bracket, e2, ("epsilon",))
    if ok1 and ok2:
        _check_bracket(b1, "delta", f"{call}.get_delta_bracket({e1!r})", w1)
        check(b2.lower <= b1.upper * (1 + 1e-9), f"delta({e2}) lower {b2.lower} > delta({e1}) upper {b1.upper}", call)


def fuzz_random_allocation(d: Draw) -> None:
    s = _maybe_wild(d, _sigma(d), "sigma")
    m = _maybe_wild(d, d.int(2, M_MAX), "rounds")
    e = _maybe_wild(d, d.int(1, EPOCHS_MAX), "count")
    method = d.pick(("exact", "exact", "closed_form", "gdp_asymptotic", "other"))
    if not (_cheap(m, M_MAX) and _cheap(e, EPOCHS_MAX)):
        return
    kw: dict[str, Any] = {"method": method}
    if d.int(0, 3) == 0:
        kw["tolerance"] = _maybe_wild(d, 1e-2, "unit")
    ok, acc = attempt(dpbounds.RandomAllocationAccountant, s, m, e, names=_NAMES, **kw)
    if not ok:
        return
    call = f"RandomAllocationAccountant({s!r}, {m!r}, {e!r}, {kw})"
    _consistent(acc, d, call)
    if method == "gdp_asymptotic" or (method == "exact" and d.int(0, 3) == 0):
        ok, mu = attempt(acc.gdp_mu, names=_NAMES, allow=("history", "converge", "cannot"))
        if ok:
            check(mu >= 0 and not math.isnan(mu), f"gdp_mu {mu}", call)
    # the same history recorded by step() answers the same (answers are pure functions of the history)
    if method == "exact" and d.int(0, 3) == 0 and float(m) * float(e) <= STEPS_MAX:
        acc2 = dpbounds.RandomAllocationAccountant(**kw)
        for _ in range(int(m) * int(e)):
            acc2.step(noise_multiplier=float(s), sample_rate=1.0 / float(m))
        check(acc2.history == acc.history, f"step() history {acc2.history} != {acc.history}", call)
        st = acc.state_dict()
        acc3 = dpbounds.RandomAllocationAccountant(**kw)
        acc3.load_state_dict(st)
        check(acc3.history == acc.history, "state_dict round trip changed the history", call)


def fuzz_poisson(d: Draw) -> None:
    s = _maybe_wild(d, _sigma(d), "sigma")
    q = _maybe_wild(d, d.pick((1e-3, 0.01, 0.1, 0.5, 1.0, 10 ** (-3 * d.fdp.ConsumeProbability()))), "unit")
    steps = _maybe_wild(d, d.int(1, STEPS_MAX), "count")
    if not _cheap(steps, STEPS_MAX):
        return
    ok, acc = attempt(dpbounds.PoissonAccountant, s, q, steps=steps, names=_NAMES)
    if ok:
        _consistent(acc, d, f"PoissonAccountant({s!r}, {q!r}, steps={steps!r})")


def fuzz_pld(d: Draw) -> None:
    s = _maybe_wild(d, _sigma(d), "sigma")
    m = _maybe_wild(d, d.int(2, M_MAX), "rounds")
    e = _maybe_wild(d, d.int(1, EPOCHS_MAX), "count")
    if not (_cheap(m, M_MAX) and _cheap(e, EPOCHS_MAX)):
        return
    ok, pld = attempt(dpbounds.RandomAllocationPLD, s, m, e, names=_NAMES + ("sigma", "rounds"))
    if not ok:
        return
    call = f"RandomAllocationPLD({s!r}, {m!r}, {e!r})"
    delta = min(max(abs(d.double("unit")), 1e-12), 0.5)
    ok, eb, warned = _bracket(pld.epsilon, delta, ("delta",))
    if ok:
        _check_bracket(eb, "epsilon", call, warned)
        if math.isfinite(eb.upper):
            ok, db, warned = _bracket(pld.delta, eb.upper, ("epsilon",))
            if ok:
                check(db.lower <= delta * (1 + 1e-9), f"delta({eb.upper}) = {db} above {delta}", call)


def fuzz_calibration(d: Draw) -> None:
    n = _maybe_wild(d, d.int(4, N_MAX), "count")
    b = _maybe_wild(d, d.int(1, 200), "count")
    eps_t = _maybe_wild(d, 10 ** (2 * d.fdp.ConsumeProbability() - 0.5), "eps")
    dl = _maybe_wild(d, 1e-5, "unit")
    sampling, accountant = d.pick((("random_allocation", "exact"), ("poisson", "exact"), ("poisson", "rdp"),
                                   ("without_replacement", "rdp"), ("random_allocation", "rdp")))
    if not _cheap(n, N_MAX):
        return
    which = d.int(0, 2)
    names = ("target_epsilon", "target_delta", "dataset_size", "batch_size", "epochs", "steps", "sampling",
             "accountant", "noise_multiplier", "rtol", "tolerance", "number of epochs", "batch size")
    allow = ("no .*(meets|suffices)", "cannot", "not even", "exceeds", "above", "below", "no noise", "even")
    if which == 0:
        ep = _maybe_wild(d, d.int(1, EPOCHS_MAX), "count")
        if not _cheap(ep, EPOCHS_MAX):
            return
        ok, s = attempt(dpbounds.calibrate_noise, eps_t, dl, dataset_size=n, batch_size=b, epochs=ep,
                        sampling=sampling, accountant=accountant, rtol=1e-2, tolerance=1e-2, names=names, allow=allow)
        if ok:
            check(s > 0 and math.isfinite(s), f"sigma {s}", "calibrate_noise")
    elif which == 1:
        ok, ep = attempt(dpbounds.calibrate_epochs, eps_t, dl, noise_multiplier=_sigma(d), dataset_size=n,
                         batch_size=b, sampling=sampling, accountant=accountant, max_epochs=EPOCHS_MAX,
                         tolerance=1e-2, names=names, allow=allow)
        if ok:
            check(isinstance(ep, int) and 1 <= ep <= EPOCHS_MAX, f"epochs {ep}", "calibrate_epochs")
    else:
        ok, bs = attempt(dpbounds.calibrate_batch_size, eps_t, dl, noise_multiplier=_sigma(d), dataset_size=n,
                         epochs=1, sampling=sampling, accountant=accountant, tolerance=1e-2, names=names, allow=allow)
        if ok:
            check(isinstance(bs, int) and bs >= 1, f"batch size {bs}", "calibrate_batch_size")


_FAMILY = (fuzz_random_allocation, fuzz_random_allocation, fuzz_poisson, fuzz_pld, fuzz_calibration)


def test_one_input(data: bytes) -> None:
    d = Draw(data)
    d.pick(_FAMILY)(d)


if __name__ == "__main__":
    fuzz(test_one_input)
