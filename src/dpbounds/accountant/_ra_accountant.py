"""The random-allocation accountant: (eps, delta), Gaussian-DP and trade-off answers for E epochs."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError, NoAnswer
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._curve import tradeoff_exact
from dpbounds.accountant._gdp import gdp_delta, gdp_epsilon, gdp_mu_random_allocation
from dpbounds.accountant._gdp_certificate import certified_gdp_mu
from dpbounds.accountant._history import Run, check_computable, history_delta, history_epsilon, runs_from_history
from dpbounds.accountant._laws.select import law_for, require_converged
from dpbounds.accountant._params import SIGMA_MIN, check_max_lattice, check_sigma_rounds
from dpbounds.accountant._protocol import PrivacyAccountant, rounds_from_rate
from dpbounds.accountant._ra_pld import RandomAllocationPLD

__all__ = ["RandomAllocationAccountant"]


class RandomAllocationAccountant(PrivacyAccountant):
    """Exact privacy accountant for DP-SGD with random allocation (balls-and-bins sampling).

    In every epoch each example is put into exactly one of the M steps, chosen uniformly and
    independently (:func:`dpbounds.sampling.random_allocation` realises it).  The accountant
    follows the package's accountant protocol (Opacus conventions): ``step(noise_multiplier=,
    sample_rate=1/M)`` in the training loop, ``get_epsilon(delta) -> float`` (the certified
    upper end), ``get_epsilon_bracket(delta)`` for the whole :class:`~dpbounds.PrivacyBracket`.

    Parameters
    ----------
    noise_multiplier : float, optional
        sigma, in [0.3, 20].  With ``rounds_per_epoch`` (or ``dataset_size``/``batch_size``) and
        ``epochs`` or ``steps``, the accountant starts with that history (default: one epoch);
        without it the accountant starts empty and ``step()`` records the training.
    rounds_per_epoch : int, optional
        M, the number of steps per epoch (sample rate 1/M), in [2, 1e9].
    epochs : int, optional
        E whole epochs (or give ``steps``; a trailing partial epoch is accounted as described in
        the documentation's accountant chapter).
    method : {"exact", "closed_form", "gdp_asymptotic"}
        ``"exact"``: certified numerical brackets.  ``"closed_form"``: Theorem 3.1's delta_min
        composed over epochs (an upper bound on delta, valid only where the theorem applies, else
        ValueError).  ``"gdp_asymptotic"``: the Gaussian-DP mu of Theorem 4.2,
        sqrt(E (e^{1/sigma^2} - 1) / (M - 1)) (:func:`dpbounds.gdp_mu_random_allocation`, E = steps / M)
        -- an asymptotic *approximation*, never a bound.
    tolerance : float
        Relative width target of the exact epsilon bracket (default 2e-3).
    max_lattice : int
        Memory cap of the loss lattice (see :class:`RandomAllocationPLD`); at most 2**26
        (~3 GiB peak), larger values raise DPBoundsError naming it.
    dataset_size, batch_size : int, optional
        N and B instead of ``rounds_per_epoch``: M = N // B (so the expected batch N / M is at
        least B).
    steps : int, optional
        Number of steps instead of ``epochs``.

    Examples
    --------
    >>> from dpbounds import RandomAllocationAccountant
    >>> acc = RandomAllocationAccountant(noise_multiplier=1.1, dataset_size=60000, batch_size=256, epochs=10)
    >>> acc.rounds, len(acc)
    (234.0, 2340)
    >>> eps = acc.get_epsilon(1e-5)        # a float: the certified upper end
    >>> f"{eps:.3f}", eps < 3
    ('0.881', True)

    In a training loop:

    >>> acc = RandomAllocationAccountant()
    >>> for _ in range(2 * 234):
    ...     acc.step(noise_multiplier=1.1, sample_rate=1 / 234)
    >>> acc.history
    [(1.1, 0.004273504273504274, 468)]
    """

    METHODS = ("exact", "closed_form", "gdp_asymptotic")
    mechanism = "random_allocation"

    def __init__(self, noise_multiplier: float | None = None, rounds_per_epoch: float | None = None,
                 epochs: float | None = None, *, method: str = "exact", tolerance: float = 2e-3,
                 max_lattice: int = 2 ** 21, dataset_size: int | None = None,
                 batch_size: int | None = None, steps: int | None = None):
        super().__init__()
        self.method = V.check_choice("method", method, self.METHODS)
        self.tolerance = V.check_scalar("tolerance", tolerance, V.Constraint.OPEN_UNIT)
        self.max_lattice = check_max_lattice(max_lattice)
        self.bound_kind = {"exact": "certified bracket", "closed_form": "upper bound (Theorem 3.1)",
                           "gdp_asymptotic": "asymptotic approximation (not a bound)"}[self.method]
        if dataset_size is not None or batch_size is not None:
            if dataset_size is None or batch_size is None:
                raise DPBoundsError("dataset_size and batch_size go together (M = dataset_size // batch_size)")
            n = V.check_count("dataset_size", dataset_size, minimum=2)
            b = V.check_count("batch_size", batch_size, minimum=1, maximum=n)
            m_from = n // b
            if m_from < 2:
                raise DPBoundsError(f"dataset_size // batch_size must be >= 2 rounds per epoch, got {n} // {b} = {m_from}")
            if rounds_per_epoch is not None and check_sigma_rounds(
                    SIGMA_MIN, rounds_per_epoch, "noise_multiplier", "rounds_per_epoch")[1] != m_from:
                raise DPBoundsError(f"rounds_per_epoch={rounds_per_epoch!r} contradicts dataset_size // batch_size = {m_from}")
            rounds_per_epoch = m_from
        if epochs is not None and steps is not None:
            raise DPBoundsError("give epochs or steps, not both")
        if noise_multiplier is None:
            if rounds_per_epoch is not None and (epochs is not None or steps is not None):
                raise DPBoundsError("noise_multiplier is needed to start with a history (epochs or steps)")
            if rounds_per_epoch is not None:
                check_sigma_rounds(SIGMA_MIN, rounds_per_epoch, "noise_multiplier", "rounds_per_epoch")
            self._M_hint = None if rounds_per_epoch is None else float(rounds_per_epoch)
            return
        if rounds_per_epoch is None:
            raise DPBoundsError("rounds_per_epoch (or dataset_size and batch_size) is needed with noise_multiplier")
        s, m = check_sigma_rounds(noise_multiplier, rounds_per_epoch, "noise_multiplier", "rounds_per_epoch")
        self._M_hint = m
        if steps is not None:
            n_steps = V.check_count("steps", steps, minimum=1)
        else:
            e = 1 if epochs is None else V.check_count("epochs", epochs, minimum=1)
            n_steps = e * int(m)
        if self.method == "exact":  # hopeless lengths refused before anything is recorded
            check_computable(runs_from_history([(s, 1.0 / m, n_steps)]), 0.5,
                             "steps" if steps is not None else "epochs")
        self._record(s, 1.0 / m, n_steps)

    # ---------------------------------------------------------------- protocol
    def _check_step(self, noise_multiplier: float, sample_rate: float) -> tuple[float, float]:
        s, q = super()._check_step(noise_multiplier, sample_rate)
        m = rounds_from_rate(q)
        check_sigma_rounds(s, m, "noise_multiplier", "rounds_per_epoch")
        return s, 1.0 / m  # the canonical rate of M rounds (grouping compares it exactly)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict` output; an exact accountant refuses a history too long
        to account (naming ``state['history']``) and keeps its own history then."""
        old = [list(h) for h in self._history], self._last_raw
        super().load_state_dict(state)
        if self.method == "exact" and self._history:
            try:
                check_computable(runs_from_history(self.history), 0.5, "state['history']")
            except DPBoundsError:
                self._history, self._last_raw = old
                raise

    def _options(self) -> dict[str, object]:
        return {"method": self.method, "tolerance": self.tolerance, "max_lattice": self.max_lattice}

    def _runs(self) -> tuple[Run, ...]:
        if not self._history:
            raise DPBoundsError("no steps recorded yet: call step() or construct with noise_multiplier, "
                             "rounds_per_epoch and epochs")
        return runs_from_history(self.history)

    def _homogeneous(self) -> tuple[float, float, int]:
        """(sigma, M, E) of a history of whole epochs with one (sigma, M), else ValueError."""
        runs = self._runs()
        if len(runs) != 1 or runs[0][3] != 0:
            raise DPBoundsError("this answer needs a history of whole epochs with one noise multiplier and "
                             f"one sample rate (got {len(runs)} runs of epochs, the last one partial: "
                             f"{runs[-1][3] != 0}); method='exact' get_epsilon/get_delta serve any history")
        s, m, e, _ = runs[0]
        return s, m, e

    @property
    def sigma(self) -> float:
        """The noise multiplier of a homogeneous history (ValueError otherwise)."""
        return self._homogeneous()[0]

    @property
    def rounds(self) -> float:
        """M, the rounds per epoch of the history (or the one the accountant was made with)."""
        if not self._history and self._M_hint is not None:
            return self._M_hint
        ms = {rounds_from_rate(q) for _, q, _ in self._history}
        if len(ms) != 1:
            raise DPBoundsError(f"the history uses several rounds per epoch: {sorted(ms)}")
        return float(ms.pop())

    @property
    def epochs(self) -> int:
        """Whole epochs of a homogeneous history (ValueError otherwise)."""
        return self._homogeneous()[2]

    @property
    def pld(self) -> RandomAllocationPLD:
        """The privacy-loss distribution of a homogeneous history of whole epochs."""
        s, m, e = self._homogeneous()
        return RandomAllocationPLD(s, m, e, self.tolerance, self.max_lattice)

    def gdp_mu(self) -> float:
        """mu of Gaussian DP.

        ``"gdp_asymptotic"``: sqrt(E (w - 1)/(M - 1)) with E = steps / M, the mu_M sqrt(E) of
        Theorem 4.2 (:func:`dpbounds.gdp_mu_random_allocation`; an approximation, not a bound).
        A history with several (sigma, M) adds the runs' mu^2.
        ``"exact"``: the smallest mu such that G_mu <= f_M on the *certified* single-epoch curve
        over a in [1e-10, 1 - 1e-10], composed as mu sqrt(E) (G_mu composes exactly; it is
        symmetric, so f_M^{-1} is covered too).  The single-epoch law gives boxes along the
        curve (points provably under and over it, :meth:`SingleEpochLaw.curve_points`); between
        them f_M lies above the secants through neighbouring boxes extended (convexity), and
        G_mu minus that piecewise-linear envelope is convex on each linear piece, so checking the
        piece ends certifies every a in between.  Below a = 1e-10 (both curves within 1e-10 of
        1) it is not certified.  ``gdp_mu_scan()`` gives the value checked only at the points.

        Accuracy (``"exact"``): an upper bound on the smallest such mu; relative gap to the
        largest Phi^{-1}(1 - a) - Phi^{-1}(f + err) over 4001 points of the curve computed
        pointwise by :func:`tradeoff_exact` (with its error bound) <= 0.01 where mu >= 0.1 and
        <= 0.2 where mu >= 0.005 (the curve's error bars dominate there; tests/accountant/test_gdp_mu.py,
        docs/contract.md).  Where the curve's error bars exceed f itself near a = 1 - 1e-10
        (sigma <= 0.4 with M = 2, or sigma = 0.3 with M >= 1000) the certificate can only give
        mu ~ 31.  Cost: the single-epoch law (built once per (sigma, M), shared with one-epoch
        queries): ~0.1-0.3 s CPU for sigma >= 0.7, up to ~1.5 s at sigma in [0.3, 0.6]; Ctrl-C
        stops it within 0.2 s.
        """
        return self._gdp_mu(certified=True)

    def gdp_mu_scan(self) -> float:
        """As :meth:`gdp_mu` for ``"exact"``, but checked only at the curve's points (not a certificate)."""
        return self._gdp_mu(certified=False)

    def _gdp_mu(self, certified: bool) -> float:
        if self.method == "closed_form":
            raise DPBoundsError("Theorem 3.1 gives no Gaussian-DP statement; use method='exact' "
                             "(certified scan) or 'gdp_asymptotic' (approximation)")
        if self.method == "gdp_asymptotic":
            return self._gdp_mu_asymptotic()
        s, m, e = self._homogeneous()
        law = law_for(s, m, "curve")
        require_converged(law)
        a_lo, a_hi, f_lo, f_hi = (np.asarray(v, dtype=float) for v in law.curve_points())
        return certified_gdp_mu(a_lo, a_hi, f_lo, f_hi, certified) * math.sqrt(e)

    def _gdp_mu_asymptotic(self) -> float:
        runs = self._runs()
        return math.sqrt(sum(gdp_mu_random_allocation(s, m, e + (k / m)) ** 2 for s, m, e, k in runs))

    def get_delta_bracket(self, epsilon: float) -> PrivacyBracket:
        """Bracket of delta(epsilon) after the recorded steps (exact: certified)."""
        eps = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_NONNEGATIVE) + 0.0  # -0.0 -> 0.0
        if self.method == "exact":
            return history_delta(self._runs(), eps, self.tolerance, self.max_lattice)[0]
        if self.method == "gdp_asymptotic":
            d = float(gdp_delta(eps, self._gdp_mu_asymptotic()))
            return PrivacyBracket(d, d, quantity="delta", at=eps, tolerance=self.tolerance,
                                  method="Gaussian-DP asymptotic approximation (not a bound)")
        return PrivacyBracket(0.0, self._closed_form_delta(), quantity="delta", at=eps, tolerance=math.inf,
                              method="Theorem 3.1 delta_min composed over epochs (upper bound only)",
                              certified="the closed form of Theorem 3.1", warn=False)

    def _closed_form_delta(self) -> float:
        from dpbounds import _ufuncs as U

        s, m, e = self._homogeneous()
        d = float(U.delta_bound_exact(s, m))
        if not math.isfinite(d):
            raise NoAnswer(
                f"Theorem 3.1 does not apply at sigma={s}, rounds={m} "
                "(condition (2) or M >= 3 / sigma >= sqrt(3/ln M) fails); use method='exact'")
        return float(U.compose_delta(d, float(e)))

    def get_epsilon_bracket(self, delta: float) -> PrivacyBracket:
        """Bracket of epsilon(delta) after the recorded steps (exact: certified, see PrivacyBracket)."""
        d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
        if self.method == "exact":
            return history_epsilon(self._runs(), d, self.tolerance, self.max_lattice)[0]
        if self.method == "gdp_asymptotic":
            e = float(gdp_epsilon(d, self._gdp_mu_asymptotic()))
            return PrivacyBracket(e, e, quantity="epsilon", at=d, tolerance=self.tolerance,
                                  method="Gaussian-DP asymptotic approximation (not a bound)")
        # Theorem 3.1 gives f >= f_{0, delta_min}: (0, delta)-DP for delta >= composed delta_min
        up = 0.0 if self._closed_form_delta() <= d else math.inf
        return PrivacyBracket(0.0, up, quantity="epsilon", at=d, tolerance=math.inf,
                              method="Theorem 3.1 delta_min composed over epochs (upper bound only)",
                              certified="the closed form of Theorem 3.1", warn=False)

    def tradeoff(self, a: Any) -> tuple[Any, Any]:
        """Trade-off information at type-I errors ``a`` (homogeneous histories of whole epochs).

        ``epochs == 1``: the exact curve f_M(a) of the dominating pair and its error bound
        (:func:`tradeoff_exact`).  ``epochs > 1``: ``(lower, nan)`` where ``lower`` is a
        certified lower bound on the E-epoch mechanism's symmetrised trade-off curve
        (:meth:`RandomAllocationPLD.tradeoff_lower`); no error bound/upper curve is provided.
        """
        if self.method != "exact":
            raise DPBoundsError("tradeoff(a) is available for method='exact'")
        s, m, e = self._homogeneous()
        if e == 1:
            return tradeoff_exact(a, s, m)
        lower = self.pld.tradeoff_lower(a)
        return lower, np.full(np.shape(lower), np.nan) if np.ndim(lower) else math.nan
