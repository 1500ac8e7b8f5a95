"""Calibrate DP-SGD: the noise multiplier, the number of epochs or the batch size for a target (eps, delta).

Every answer is *certified on both sides*: the returned value's certified epsilon (the upper end
of the accountant's bracket) is at most the target -- it was computed, not interpolated -- and
the value one step beyond it (relative ``rtol`` for the noise multiplier, one epoch / one example
of batch size for the counts) exceeds it.

Sampling schemes and the accountant each uses:

* ``"random_allocation"``: each example in one uniformly chosen step of every epoch
  (:func:`dpbounds.sampling.random_allocation`); M = dataset_size // batch_size steps per epoch,
  steps = floor(epochs * M) (:func:`dpbounds.sampling.random_allocation_steps`);
  ``accountant="exact"`` (:class:`~dpbounds.RandomAllocationAccountant`), the only one available.
* ``"poisson"``: each example in each step independently with rate batch_size / dataset_size;
  steps = floor(epochs / rate) (Opacus' rule, :func:`dpbounds.sampling.poisson_steps`); ``"exact"`` (:class:`~dpbounds.PoissonAccountant`)
  or ``"rdp"`` (:class:`~dpbounds.rdp.RDPAccountant`).
* ``"without_replacement"``: fixed-size batches drawn without replacement, replace-one neighbours
  (sensitivity 2C, so the RDP bound is taken at noise multiplier / 2); ``"rdp"`` only.

The search starts from the Gaussian-DP asymptotics of the target (never from a tiny sigma) and
narrows a bracket by regula falsi on log epsilon (smooth and monotone in log sigma).
"""
from __future__ import annotations

import math
import warnings
from typing import Callable

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError, NoAnswer, PrecisionWarning
from dpbounds.sampling import MAX_STEPS, poisson_steps, random_allocation_steps

__all__ = ["calibrate_noise", "calibrate_epochs", "calibrate_batch_size"]

_SAMPLINGS = ("random_allocation", "poisson", "without_replacement")
_SIGMA_RANGE = {"random_allocation": (0.3, 20.0), "poisson": (0.05, 1e4), "without_replacement": (0.05, 1e4)}


class _Setting:
    """A DP-SGD run: sampling scheme, accountant, sizes and length (validated once)."""

    def __init__(self, sampling: str, accountant: str, dataset_size: int | None, batch_size: int | None,
                 epochs: float | None, steps: int | None, tolerance: float,
                 sample_rate: float | None = None) -> None:
        self.sampling = V.check_choice("sampling", sampling, _SAMPLINGS)
        self.accountant = V.check_choice("accountant", accountant, ("exact", "rdp"))
        if self.sampling == "random_allocation" and self.accountant != "exact":
            raise DPBoundsError("sampling='random_allocation' has the exact accountant only (accountant='exact')")
        if self.sampling == "without_replacement" and self.accountant != "rdp":
            raise DPBoundsError("sampling='without_replacement' has no exact accountant in dpbounds: use accountant='rdp'")
        if sample_rate is not None:
            # what Opacus users have (get_noise_multiplier's arguments): the rate itself
            if dataset_size is not None or batch_size is not None:
                raise DPBoundsError("give sample_rate, or dataset_size and batch_size, not both")
            q = V.check_rate("sample_rate", sample_rate)
            if self.sampling == "random_allocation":
                from dpbounds.accountant._protocol import rounds_from_rate

                self.M = rounds_from_rate(q)
                q = 1.0 / self.M
            self.rate = q
        else:
            if dataset_size is None or batch_size is None:
                raise DPBoundsError("give dataset_size and batch_size (or sample_rate)")
            # counts beyond 2^53 are not held exactly by the doubles every accountant computes with
            self.N = V.check_count("dataset_size", dataset_size, minimum=2, maximum=MAX_STEPS)
            self.B = V.check_count("batch_size", batch_size, minimum=1, maximum=self.N)
            if self.sampling == "random_allocation":
                self.M = self.N // self.B
                if self.M < 2:
                    raise DPBoundsError(f"dataset_size // batch_size must be >= 2, got {self.N} // {self.B}")
                self.rate = 1.0 / self.M
            else:
                self.rate = self.B / self.N
        if (epochs is None) == (steps is None):
            raise DPBoundsError("give exactly one of epochs and steps")
        self.epochs = None if epochs is None else V.check_scalar("epochs", epochs, V.Constraint.FINITE_POSITIVE)
        self.steps_arg = None if steps is None else V.check_count("steps", steps, minimum=1, maximum=MAX_STEPS)
        self.tolerance = V.check_scalar("tolerance", tolerance, V.Constraint.OPEN_UNIT)
        if self.steps_arg is not None:
            self.steps = self.steps_arg
        elif self.sampling == "random_allocation":
            assert self.epochs is not None
            self.steps = random_allocation_steps(self.epochs, self.M)
        else:
            assert self.epochs is not None
            self.steps = poisson_steps(self.epochs, self.rate)

    def epsilon(self, sigma: float, delta: float) -> float:
        """Certified epsilon(delta) (upper end) of this run at noise multiplier sigma."""
        from dpbounds.accountant import PoissonAccountant, RandomAllocationAccountant
        from dpbounds.rdp import PoissonGaussian, RDPAccountant, SubsampledGaussianWOR

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrecisionWarning)  # the upper end stays certified
            if self.sampling == "random_allocation":
                return RandomAllocationAccountant(sigma, self.M, steps=self.steps,
                                                  tolerance=self.tolerance).get_epsilon(delta)
            if self.accountant == "exact":
                return PoissonAccountant(sigma, self.rate, self.steps, tolerance=self.tolerance).get_epsilon(delta)
            acc = RDPAccountant()
            if self.sampling == "poisson":
                acc.compose(PoissonGaussian(sigma, self.rate), self.steps)
            else:  # replace-one neighbours: sensitivity 2C, i.e. RDP at noise multiplier / 2
                acc.compose(SubsampledGaussianWOR(sigma / 2.0, self.rate), self.steps)
            return acc.get_epsilon_bracket(delta).upper

    def _mu(self, sigma: float) -> float:
        """Gaussian-DP CLT mu of this run, q sqrt(T (e^{1/sigma^2} - 1)) (replace-one: twice)."""
        mu = self.rate * math.sqrt(float(self.steps) * math.expm1(min(1.0 / (sigma * sigma), 700.0)))
        return 2.0 * mu if self.sampling == "without_replacement" else mu

    def gdp_epsilon(self, sigma: float, delta: float) -> float:
        """The Gaussian-DP approximation of epsilon(delta) at sigma (a guide for the search only)."""
        from dpbounds.gdp import gdp_epsilon

        return float(gdp_epsilon(delta, self._mu(sigma)))

    def sigma_for_gdp_epsilon(self, target: float, delta: float) -> float:
        """sigma whose Gaussian-DP approximation gives ``target`` (closed form in mu)."""
        from dpbounds.gdp import gdp_delta

        lo, hi = 1e-6, 1e3  # mu with gdp delta(target; mu) = delta, by bisection in log mu
        for _ in range(80):
            mid = math.sqrt(lo * hi)
            if float(gdp_delta(target, mid)) > delta:
                hi = mid
            else:
                lo = mid
        mu = lo
        if self.sampling == "without_replacement":
            mu *= 0.5
        x = (mu / self.rate) ** 2 / float(self.steps)
        return 1.0 / math.sqrt(math.log1p(x)) if x > 0 else 1e4

    def sigma_guess(self, target: float, delta: float) -> float:
        """sigma from the Gaussian-DP CLT: mu(eps, delta) = q sqrt(T (e^{1/sigma^2} - 1))."""
        return self.sigma_for_gdp_epsilon(target, delta)


def _bracket_search(g: Callable[[float], float], x0: float, lo_lim: float, hi_lim: float,
                    rtol: float, name: str, step0: float = 1.1,
                    at_limit: Callable[[float, float], str] | None = None) -> tuple[float, float]:
    """A bracket (x_bad, x_ok) of the root of g (decreasing in x), x_ok / x_bad - 1 <= rtol.

    g(x) > 0 at x_bad and <= 0 at x_ok; both are evaluated points.  Returns (nan, x_ok) when g
    is <= 0 down to lo_lim.  Regula falsi (Illinois) in log x narrows the bracket; near the end
    it brackets the interpolated root tightly from both sides, so that the last two evaluations
    usually close it.
    """
    x0 = min(max(x0, lo_lim), hi_lim)
    g0 = g(x0)
    step = step0
    if x0 >= hi_lim and g0 > 0:
        raise NoAnswer(f"no {name} up to {hi_lim:g} meets the target" + (at_limit(x0, g0) if at_limit else ""))
    if g0 <= 0:  # feasible: walk down to an infeasible point
        x_ok, g_ok = x0, g0
        x = x0
        while True:
            if x <= lo_lim:
                return math.nan, x_ok  # feasible down to the range's end
            x = max(x / step, lo_lim)
            gx = g(x)
            if gx > 0:
                x_bad, g_bad = x, gx
                break
            x_ok, g_ok = x, gx
            step *= 2
    else:
        x_bad, g_bad = x0, g0
        x = x0
        while True:
            if x >= hi_lim:
                raise NoAnswer(f"no {name} up to {hi_lim:g} meets the target"
                                        + (at_limit(x, gx) if at_limit else ""))
            x = min(x * step, hi_lim)
            gx = g(x)
            if gx <= 0:
                x_ok, g_ok = x, gx
                break
            x_bad, g_bad = x, gx
            step *= 2
    side = 0
    while x_ok / x_bad - 1.0 > rtol:
        la, lb = math.log(x_bad), math.log(x_ok)
        t = g_bad / (g_bad - g_ok) if g_bad != g_ok and math.isfinite(g_ok) else 0.5
        root = la + t * (lb - la)
        half = 0.5 * math.log1p(rtol)
        if side == 0 and lb - la > 4 * half:
            lm = root                                 # first: the interpolated root itself
        else:
            # aim just beside the root, on the side that shrinks the bracket most
            lm = root + 0.9 * half if side <= 0 else root - 0.9 * half
        lm = min(max(lm, la + 0.02 * (lb - la)), lb - 0.02 * (lb - la))
        xm = math.exp(lm)
        gm = g(xm)
        if gm <= 0:
            x_ok, g_ok = xm, gm
            if side == 1:
                g_bad *= 0.5
            side = 1
        else:
            x_bad, g_bad = xm, gm
            if side == -1:
                g_ok *= 0.5
            side = -1
    return x_bad, x_ok


def calibrate_noise(target_epsilon: float, target_delta: float, *, dataset_size: int | None = None,
                    batch_size: int | None = None, epochs: float | None = None, steps: int | None = None,
                    sampling: str = "random_allocation", accountant: str = "exact",
                    rtol: float = 1e-3, tolerance: float = 2e-3, sample_rate: float | None = None) -> float:
    """The smallest noise multiplier whose certified epsilon(target_delta) is at most ``target_epsilon``.

    Parameters
    ----------
    target_epsilon, target_delta : float
        The privacy target (epsilon > 0, 0 < delta < 1).
    dataset_size, batch_size : int
        N and B (random allocation: M = N // B steps per epoch; Poisson/without replacement:
        sample rate B / N).  Or give ``sample_rate`` instead.
    epochs, steps : exactly one of them.
        Random allocation: E whole epochs are E * M steps.  Poisson and without replacement:
        steps = int(epochs / sample_rate) (Opacus' rule).
    sample_rate : float, optional
        Instead of ``dataset_size`` and ``batch_size``, as in Opacus' ``get_noise_multiplier``
        (what ``1 / len(data_loader)`` gives): random allocation takes 1/M (M an integer >= 2);
        Poisson the inclusion probability q; without replacement the ratio B / N.
    sampling : {"random_allocation", "poisson", "without_replacement"}
    accountant : {"exact", "rdp"}
        See the module docstring for which accountant serves which sampling scheme.
    rtol : float
        Relative resolution: the returned sigma meets the target and sigma / (1 + rtol) does not.
    tolerance : float
        Relative bracket width of the exact accountants during the search.

    Returns
    -------
    float
        The noise multiplier (certified: its epsilon upper end was computed and is <= target).

    Examples
    --------
    >>> from dpbounds import calibrate_noise
    >>> s = calibrate_noise(3.0, 1e-5, dataset_size=60000, batch_size=256, epochs=10)
    >>> round(s, 2)
    0.68

    The same run described as Opacus describes it (M = 60000 // 256 = 234 batches per epoch):

    >>> calibrate_noise(3.0, 1e-5, sample_rate=1 / 234, epochs=10) == s
    True
    """
    eps_t = V.check_scalar("target_epsilon", target_epsilon, V.Constraint.FINITE_POSITIVE)
    d = V.check_scalar("target_delta", target_delta, V.Constraint.OPEN_UNIT)
    r = V.check_scalar("rtol", rtol, V.Constraint.OPEN_UNIT)
    run = _Setting(sampling, accountant, dataset_size, batch_size, epochs, steps, tolerance, sample_rate)
    lo_lim, hi_lim = _SIGMA_RANGE[run.sampling]
    log_t = math.log(eps_t)

    seen: dict[float, float] = {}

    def g(s: float) -> float:
        if s not in seen:
            e = run.epsilon(s, d)
            seen[s] = math.log(e) - log_t if e > 0 else -math.inf
        return seen[s]

    if run.accountant == "rdp":
        found = _rdp_noise(run, eps_t, d, r, lo_lim, hi_lim, g, seen)
        if found is not None:
            return found
    # 1. the Gaussian-DP guess; 2. one exact evaluation there rescales the Gaussian-DP curve
    # (epsilon_exact / epsilon_GDP varies slowly with sigma); 3. a secant step through both in
    # log-log (log epsilon is nearly linear in log sigma) lands within ~rtol; 4. two evaluations
    # straddling it, a factor 1 + rtol apart, certify both sides.  Else: the bracket search.
    s0 = min(max(run.sigma_guess(eps_t, d), lo_lim), hi_lim)
    s_start, step0 = s0, 1.1
    g0 = g(s0)
    if math.isfinite(g0):
        scale = math.exp(g0) * eps_t / run.gdp_epsilon(s0, d)
        s1 = min(max(run.sigma_for_gdp_epsilon(eps_t / scale, d), lo_lim), hi_lim)
        g1 = g(s1) if s1 != s0 else g0
        s2 = s1
        if math.isfinite(g1) and g1 != g0 and s1 != s0:
            l0, l1 = math.log(s0), math.log(s1)
            s2 = min(max(math.exp(l1 - g1 * (l1 - l0) / (g1 - g0)), lo_lim), hi_lim)
        ok, bad = s2 * (1 + 0.5 * r), s2 / (1 + 0.5 * r)
        if lo_lim <= bad and ok <= hi_lim:
            g_ok = g(ok)
            if g_ok <= 0 and g(bad) > 0:
                return ok
            s_start, step0 = (bad if g_ok <= 0 else ok), 1.0 + 2.0 * r
    def at_limit(s: float, gs: float) -> str:
        return (f": the smallest certified epsilon reachable is {math.exp(gs) * eps_t:.4g}, at noise multiplier "
                f"{s:g} (the largest the {run.sampling.replace('_', ' ')} calibration searches), above "
                f"target_epsilon={eps_t:g}")

    x_bad, x_ok = _bracket_search(g, s_start, lo_lim, hi_lim, r, "noise multiplier", step0, at_limit)
    if math.isnan(x_bad):
        raise DPBoundsError(f"every noise multiplier down to {lo_lim:g} meets the target: it is not binding "
                         f"(epsilon at {lo_lim:g} is {run.epsilon(lo_lim, d):.4g})")
    return x_ok


def _rdp_curve_at(run: _Setting, sigma: float, alpha: float) -> float:
    """The run's composed RDP at one order alpha, as the accountant composes it (_Setting.epsilon)."""
    import numpy as np

    from dpbounds.rdp import PoissonGaussian, SubsampledGaussianWOR

    mech = (PoissonGaussian(sigma, run.rate) if run.sampling == "poisson"
            else SubsampledGaussianWOR(sigma / 2.0, run.rate))   # replace-one: noise multiplier / 2
    return float(run.steps) * float(np.asarray(mech.rdp(np.array([alpha])), dtype=np.float64)[0])


def _rdp_sigma_at_order(run: _Setting, alpha: float, target: float, delta: float, s0: float,
                        lo_lim: float, hi_lim: float) -> float:
    """The sigma whose (eps, delta) conversion at the single order alpha is ``target`` (nan if not
    found in range).  That epsilon decreases in sigma; regula falsi in (log sigma, log epsilon)."""
    from dpbounds import _ufuncs

    log_t = math.log(target)

    def h(s: float) -> float:
        v = float(_ufuncs._rdp_eps_up_improved(alpha, _rdp_curve_at(run, s, alpha), delta))
        return math.log(v) - log_t if v > 0 else -math.inf

    a, ha = s0, h(s0)
    if not math.isfinite(ha) and ha != -math.inf:
        return math.nan
    b, hb = a, ha
    while (ha > 0) == (hb > 0):     # step out by factors of 1.2 until the sign changes
        a, ha = b, hb
        b = b * 1.2 if ha > 0 else b / 1.2
        if not lo_lim <= b <= hi_lim:
            return math.nan
        hb = h(b)
        if hb != hb:
            return math.nan
    side = 0
    for _ in range(60):
        if abs(math.log(b / a)) <= 1e-12 or not (math.isfinite(ha) and math.isfinite(hb)):
            break
        la, lb = math.log(a), math.log(b)
        c = math.exp(la + ha * (lb - la) / (ha - hb))
        hc = h(c)
        if hc != hc:
            return math.nan
        if (hc > 0) == (ha > 0):
            a, ha = c, hc
            if side == 1:
                hb *= 0.5
            side = 1
        else:
            b, hb = c, hc
            if side == -1:
                ha *= 0.5
            side = -1
        if hc == 0:
            return c
    return a if ha <= 0 else b


def _rdp_noise(run: _Setting, eps_t: float, delta: float, rtol: float, lo_lim: float, hi_lim: float,
               g: Callable[[float], float], seen: dict[float, float]) -> float | None:
    """The RDP accountant's noise multiplier by iterating on the optimal order (None: use the
    generic search, which reuses every evaluation made here through ``seen``).

    At the order alpha_k where the accountant's epsilon at sigma_k is attained, the conversion at
    that single order is an upper bound of epsilon (the accountant minimises over orders) and
    touches it at sigma_k; its root sigma_{k+1} (one order: microseconds per evaluation) is
    feasible and at least the true root, and the iteration converges from above at second order
    (the envelope theorem).  The start is the generic search's: the Gaussian-DP guess, rescaled
    by one evaluation.  Every sigma returned is certified by the accountant itself, as the
    generic search's: g(sigma) <= 0 and g(sigma / (1 + rtol)) > 0.
    """
    from dpbounds.rdp import PoissonGaussian, RDPAccountant, SubsampledGaussianWOR

    log_t = math.log(eps_t)

    def query(s: float) -> tuple[float, float]:
        """g(s) (recorded in ``seen``, the same value as g computes) and the optimal order."""
        mech = (PoissonGaussian(s, run.rate) if run.sampling == "poisson"
                else SubsampledGaussianWOR(s / 2.0, run.rate))   # replace-one: noise multiplier / 2
        e, a = RDPAccountant().compose(mech, run.steps).get_epsilon(delta, return_order=True)  # type: ignore[misc]
        seen[s] = math.log(e) - log_t if e > 0 else -math.inf
        return seen[s], float(a)

    s0 = min(max(run.sigma_guess(eps_t, delta), lo_lim), hi_lim)
    g0, _ = query(s0)
    if not math.isfinite(g0):
        return None
    scale = math.exp(g0) * eps_t / run.gdp_epsilon(s0, delta)
    s = min(max(run.sigma_for_gdp_epsilon(eps_t / scale, delta), lo_lim), hi_lim)
    ok = s0 if g0 <= 0 else math.inf
    for _ in range(8):
        gs, alpha = query(s)
        if gs <= 0:
            ok = min(ok, s)
        s_next = _rdp_sigma_at_order(run, alpha, eps_t, delta, s, lo_lim, hi_lim)
        if not math.isfinite(s_next):
            return None
        if ok <= s_next * (1.0 + 0.5 * rtol):
            break      # converged: ok is within rtol/2 of the root (s_next is at least the root)
        s = s_next
    if not math.isfinite(ok):
        return None
    # certify the other side: one step of rtol below must miss the target
    bad = ok / (1.0 + rtol)
    if bad < lo_lim or g(bad) <= 0:
        return None
    return ok


def _largest_count(ok: Callable[[int], bool], start: int, lo_lim: int, hi_lim: int, name: str) -> int:
    """Largest integer n in [lo_lim, hi_lim] with ok(n) (ok monotone: true then false)."""
    start = min(max(start, lo_lim), hi_lim)
    if ok(start):
        good, bad = start, None
        n = start
        while bad is None:
            n = min(2 * n, hi_lim)
            if ok(n):
                good = n
                if n == hi_lim:
                    return n
            else:
                bad = n
    else:
        bad, good = start, None
        n = start
        while good is None:
            n = max(n // 2, lo_lim)
            if ok(n):
                good = n
            else:
                bad = n
                if n == lo_lim:
                    raise NoAnswer(f"no {name} >= {lo_lim} meets the target")
    assert good is not None and bad is not None
    while bad - good > 1:
        mid = (good + bad) // 2
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def calibrate_epochs(target_epsilon: float, target_delta: float, *, noise_multiplier: float,
                     dataset_size: int | None = None, batch_size: int | None = None,
                     sampling: str = "random_allocation", accountant: str = "exact", max_epochs: int = 10 ** 6,
                     tolerance: float = 2e-3, sample_rate: float | None = None) -> int:
    """The largest whole number of epochs whose certified epsilon(target_delta) is at most ``target_epsilon``.

    One more epoch exceeds the target (certified on both sides).  Raises ValueError if not even
    one epoch meets it.  See :func:`calibrate_noise` for the parameters (``sample_rate`` instead
    of ``dataset_size`` and ``batch_size`` as there).
    """
    eps_t = V.check_scalar("target_epsilon", target_epsilon, V.Constraint.FINITE_POSITIVE)
    d = V.check_scalar("target_delta", target_delta, V.Constraint.OPEN_UNIT)
    s = V.check_scalar("noise_multiplier", noise_multiplier, V.Constraint.FINITE_POSITIVE)

    # the most epochs whose steps a count still holds (2^53): a larger max_epochs is refused by name
    one = _Setting(sampling, accountant, dataset_size, batch_size, 1, None, tolerance, sample_rate)  # argument errors first
    cap = MAX_STEPS // one.M if one.sampling == "random_allocation" else int(MAX_STEPS * one.rate)
    hi = V.check_count("max_epochs", max_epochs, minimum=1, maximum=max(cap, 1))

    def ok(E: int) -> bool:
        return _Setting(sampling, accountant, dataset_size, batch_size, E, None, tolerance,
                        sample_rate).epsilon(s, d) <= eps_t

    return _largest_count(ok, 1, 1, hi, "number of epochs")


def calibrate_batch_size(target_epsilon: float, target_delta: float, *, noise_multiplier: float,
                         dataset_size: int, epochs: float, sampling: str = "random_allocation",
                         accountant: str = "exact", tolerance: float = 2e-3) -> int:
    """The largest batch size whose certified epsilon(target_delta) is at most ``target_epsilon``
    for ``epochs`` epochs (one example more exceeds it).  See :func:`calibrate_noise`."""
    eps_t = V.check_scalar("target_epsilon", target_epsilon, V.Constraint.FINITE_POSITIVE)
    d = V.check_scalar("target_delta", target_delta, V.Constraint.OPEN_UNIT)
    s = V.check_scalar("noise_multiplier", noise_multiplier, V.Constraint.FINITE_POSITIVE)
    n = V.check_count("dataset_size", dataset_size, minimum=2, maximum=MAX_STEPS)
    hi = n // 2 if sampling == "random_allocation" else n

    def ok(b: int) -> bool:
        return _Setting(sampling, accountant, n, b, epochs, None, tolerance).epsilon(s, d) <= eps_t

    return _largest_count(ok, max(1, n // 1000), 1, hi, "batch size")
