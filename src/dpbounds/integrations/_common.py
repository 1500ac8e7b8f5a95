"""What the framework integrations share, without any framework: history checks and brackets.

* :func:`check_history` validates an Opacus-style history ``[(noise_multiplier, sample_rate,
  num_steps), ...]`` (errors name the entry and the field);
* :func:`gaussian_bracket` is the exact bracket of a composition of Gaussian mechanisms (closed
  form, where its accuracy is claimed; the certified PLD of a rate-1 Poisson step elsewhere);
* :class:`HistoryFeed` keeps a dpbounds accountant in step with a growing history and answers
  for it; for random allocation with any noise multiplier > 0, not only the exact accountant's
  range [0.3, 20] (see its docstring).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError, PrecisionWarning
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._accountant import RandomAllocationAccountant
from dpbounds.accountant._params import ROUNDS_MAX, SIGMA_MAX, SIGMA_MIN
from dpbounds.accountant._poisson import PoissonPLD
from dpbounds.accountant._poisson_accountant import PoissonAccountant
from dpbounds.accountant._protocol import PrivacyAccountant, rounds_from_rate

__all__ = ["check_history", "check_entry", "check_rounds_rate", "gaussian_bracket", "HistoryFeed", "trailing_partial"]

#: Relative slack put around the closed-form Gaussian answers: above the relative error of 1e-13
#: that gdp_epsilon (mu <= 50) and gdp_delta (mu >= 0.1) claim and test against mpmath.
_GDP_SLACK = 1e-12
_GDP_MU_MAX = 50.0
_GDP_DELTA_MU_MIN = 0.1

#: Steps fed to the accountant one by one when it catches up with a history (each costs well under
#: a microsecond and keeps whatever the accountant reuses between queries); more are loaded at once.
_FEED_MAX = 20_000


def check_entry(entry: Any, i: int, name: str, random_allocation: bool) -> tuple[float, float, int]:
    """One history entry as (noise_multiplier, sample_rate, num_steps), or DPBoundsError naming it."""
    if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence) or len(entry) != 3:
        raise DPBoundsError(f"{name}[{i}] must be a (noise_multiplier, sample_rate, num_steps) triple, got {entry!r}")
    s = V.check_scalar(f"{name}[{i}] noise_multiplier", entry[0], V.Constraint.FINITE_POSITIVE)
    q = V.check_rate(f"{name}[{i}] sample_rate", entry[1])
    n = V.check_count(f"{name}[{i}] num_steps", entry[2], minimum=1)
    if random_allocation:
        check_rounds_rate(q, f"{name}[{i}] sample_rate")
    return s, q, n


def check_rounds_rate(q: float, name: str = "sample_rate") -> int:
    """M for a random-allocation sample rate q = 1/M (M an integer in [2, 1e9]), or DPBoundsError naming it."""
    try:
        m = rounds_from_rate(q)
    except DPBoundsError as exc:
        raise DPBoundsError(f"{name}: {exc}") from None
    if m > ROUNDS_MAX:
        raise DPBoundsError(f"{name} must be >= 1e-9 (at most 1e9 steps per epoch), got {q!r}")
    return m


def check_history(value: Any, name: str = "history", *, random_allocation: bool = False) -> list[list[Any]]:
    """A validated copy of an Opacus-style history, as ``[[noise_multiplier, sample_rate, num_steps], ...]``.

    Every entry is a triple of a noise multiplier (finite, > 0), a sample rate in (0, 1] (for
    random allocation 1/M with M an integer >= 2) and a number of steps (an integer >= 1); a bad
    entry raises :class:`~dpbounds.DPBoundsError` naming it (``history[2] num_steps must be ...``).
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise DPBoundsError(f"{name} must be a list of (noise_multiplier, sample_rate, num_steps) triples, "
                            f"got {type(value).__name__}")
    return [list(check_entry(e, i, name, random_allocation)) for i, e in enumerate(value)]


def trailing_partial(history: Sequence[Sequence[Any]]) -> tuple[int, int]:
    """(M, steps of the last epoch) of a random-allocation history, grouped as the accountant groups it.

    Consecutive steps at sample rate 1/M fill epochs of M steps; a new M starts a new epoch.
    Returns ``(0, 0)`` for an empty history; ``steps == 0`` when the last epoch is complete.
    """
    cur, k = 0, 0
    for _, q, n in history:
        m = rounds_from_rate(float(q))
        k = (k + int(n)) % m if m == cur else int(n) % m
        cur = m
    return cur, k


def _closed_form_ok(mu: float, quantity: str) -> bool:
    return mu <= _GDP_MU_MAX and (quantity == "epsilon" or mu >= _GDP_DELTA_MU_MIN)


def gaussian_bracket(mu: float, quantity: str, at: float, tolerance: float, *, method: str,
                     lower_bound: bool = True, note: str = "") -> PrivacyBracket:
    """The bracket of epsilon(delta) or delta(epsilon) of a mu-Gaussian mechanism (mu-GDP, exact).

    A composition of Gaussian mechanisms with noise multipliers sigma_i (sensitivity 1) is exactly
    mu-GDP with mu = sqrt(sum 1 / sigma_i^2).  Closed form where its accuracy is claimed (the
    ends are widened by 1e-12 relative, above the claimed 1e-13); elsewhere the certified PLD of
    one rate-1 Poisson step (the Gaussian mechanism itself) at noise multiplier 1 / mu.
    ``lower_bound=False``: the Gaussian only bounds the mechanism from above (lower end 0).
    """
    from dpbounds.gdp import gdp_delta, gdp_epsilon

    if mu == 0.0:
        return PrivacyBracket(0.0, 0.0, quantity=quantity, at=at, tolerance=tolerance, method=method,
                              certified="no release depends on the data")
    if _closed_form_ok(mu, quantity):
        v = float(gdp_epsilon(at, mu)) if quantity == "epsilon" else float(gdp_delta(at, mu))
        lo, hi = v * (1.0 - _GDP_SLACK), v * (1.0 + _GDP_SLACK)
        if quantity == "delta":
            hi = min(hi, 1.0)
        how = f"{method}; Gaussian-DP closed form, mu = {mu:.6g}"
    else:
        pld = PoissonPLD.from_segments([(1.0 / mu, 1.0, 1)], tolerance=tolerance)
        b = pld.epsilon(at) if quantity == "epsilon" else pld.delta(at)
        lo, hi = b.lower, b.upper
        how = f"{method}; certified PLD of the Gaussian mechanism, mu = {mu:.6g}"
    if not lower_bound:
        lo = 0.0
    return PrivacyBracket(lo, hi, quantity=quantity, at=at, tolerance=tolerance, method=how, certified="the Gaussian mechanism's privacy profile (exact)",
                          estimated="" if lower_bound else "no lower bound (the Gaussian bounds from above only)",
                          note=note or "an upper bound only (no lower end)", warn=False)


class HistoryFeed:
    """A dpbounds accountant kept in step with a growing Opacus-style history; its certified answers.

    ``kind`` is ``"random_allocation"`` (:class:`~dpbounds.RandomAllocationAccountant`),
    ``"poisson"`` (:class:`~dpbounds.PoissonAccountant`) or ``"rdp"``
    (:class:`~dpbounds.rdp.RDPAccountant`).  The accountant is fed step by step as the history
    grows (:meth:`sync`), so whatever it reuses between queries is kept; a replaced history starts
    a fresh one (:meth:`reset`).

    Random allocation with any noise multiplier > 0, not only the exact accountant's range
    [0.3, 20]:

    * a noise multiplier above 20 is accounted at 20: more noise is a post-processing of less
      (add independent noise), so the answer is an upper bound; the lower end becomes 0;
    * a history with any noise multiplier below 0.3 is bounded, as a whole, without the
      amplification by random allocation: every epoch (or part of one) uses each example in at
      most one step, so it is at most one Gaussian mechanism at the smallest noise multiplier of
      its steps, and the epochs compose to mu-GDP with mu^2 = sum over epochs of 1/sigma^2.
      An upper bound only (lower end 0), and a :class:`~dpbounds.PrecisionWarning` says so.
    """

    def __init__(self, kind: str, tolerance: float, max_lattice: int) -> None:
        self.kind = kind
        self.tolerance = tolerance
        self.max_lattice = max_lattice
        self.reset()

    def _new_core(self) -> PrivacyAccountant:
        if self.kind == "random_allocation":
            return RandomAllocationAccountant(tolerance=self.tolerance, max_lattice=self.max_lattice)
        if self.kind == "poisson":
            return PoissonAccountant(tolerance=self.tolerance, max_lattice=self.max_lattice)
        from dpbounds.rdp import RDPAccountant

        return RDPAccountant()

    def reset(self) -> None:
        self.core = self._new_core()
        self._synced = (0, 0)  # entries[:i] fed in full, and c steps of entries[i]
        self.low = False       # random allocation: a noise multiplier below the exact range was seen
        self.clamped = False   # random allocation: one above it was seen

    def _sigma(self, s: float) -> float | None:
        """The noise multiplier the accountant is given for ``s`` (None: not given, see the class docs)."""
        if self.kind != "random_allocation":
            return s
        if s < SIGMA_MIN:
            self.low = True
            return None
        if s > SIGMA_MAX:
            self.clamped = True
            return SIGMA_MAX
        return s

    def sync(self, entries: Sequence[Sequence[Any]]) -> None:
        """Feed the accountant the steps of ``entries`` it has not seen (``entries`` only grows)."""
        i, c = self._synced
        todo = sum(int(e[2]) for e in entries[i:]) - c
        if todo <= 0:
            return
        if todo > _FEED_MAX:  # catching up on a long history: load it at once (a cold query anyway)
            self._load(entries)
            return
        for j in range(i, len(entries)):
            s, q, n = float(entries[j][0]), float(entries[j][1]), int(entries[j][2])
            start = c if j == i else 0
            sc = self._sigma(s)
            if sc is not None:
                for _ in range(n - start):
                    self.core.step(noise_multiplier=sc, sample_rate=q)
        self._synced = (len(entries) - 1, int(entries[-1][2]))

    def _load(self, entries: Sequence[Sequence[Any]]) -> None:
        self.reset()
        hist = []
        for s, q, n in entries:
            sc = self._sigma(float(s))
            if sc is not None:
                hist.append([sc, float(q), int(n)])
        state = self.core.state_dict()
        state["history"] = hist
        self.core.load_state_dict(state)
        self._synced = (len(entries) - 1, int(entries[-1][2]))

    def bracket(self, entries: Sequence[Sequence[Any]], quantity: str, at: float) -> PrivacyBracket:
        """epsilon(delta) (``quantity="epsilon"``, ``at`` = delta) or delta(epsilon) of the history."""
        if not entries:
            return PrivacyBracket(0.0, 0.0, quantity=quantity, at=at, tolerance=self.tolerance,
                                  method="no steps recorded", certified="no release depends on the data")
        self.sync(entries)
        if self.low:
            return self._unamplified(entries, quantity, at)
        b = self.core.get_epsilon_bracket(at) if quantity == "epsilon" else self.core.get_delta_bracket(at)
        if not self.clamped:
            return b
        return PrivacyBracket(0.0, b.upper, quantity=quantity, at=at, tolerance=self.tolerance,
                              method=f"{b.method}; noise multipliers above {SIGMA_MAX:g} accounted at "
                                     f"{SIGMA_MAX:g} (an upper bound: more noise is a post-processing)",
                              certified=b.certified, estimated=b.estimated,
                              note=f"noise multipliers above {SIGMA_MAX:g} are outside the exact accountant's "
                                   "range: the upper end bounds them, there is no lower end")

    def _unamplified(self, entries: Sequence[Sequence[Any]], quantity: str, at: float) -> PrivacyBracket:
        inv2 = 0.0
        cur, pos = 0, 0
        for s, q, n in entries:
            m = rounds_from_rate(float(q))
            if m != cur:
                cur, pos = m, 0
            # the epochs this entry's steps fall in, each at most one Gaussian release (an epoch
            # shared with the previous entry is counted in both: conservative)
            touched = (pos + int(n) - 1) // m + 1
            inv2 += touched / (float(s) * float(s))
            pos = (pos + int(n)) % m
        mu = math.sqrt(inv2)
        smallest = min(float(e[0]) for e in entries)
        note = (f"a noise multiplier of {smallest:g} is below the exact random-allocation range "
                f"[{SIGMA_MIN:g}, {SIGMA_MAX:g}]: each epoch is bounded by one Gaussian release, without the "
                "amplification by random allocation (an upper bound only)")
        b = gaussian_bracket(mu, quantity, at, self.tolerance, method="random allocation without amplification",
                             lower_bound=False, note=note)
        warnings.warn(f"{quantity} in [{b.lower:.6g}, {b.upper:.6g}]: {note}", PrecisionWarning, stacklevel=4)
        return b
