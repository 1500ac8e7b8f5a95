"""One accountant protocol for DP-SGD training loops (the Opacus conventions).

Every accountant of the package -- :class:`~dpbounds.RandomAllocationAccountant` (exact),
:class:`~dpbounds.PoissonAccountant` (exact PLD) and :class:`~dpbounds.rdp.RDPAccountant` --
implements it:

* ``step(*, noise_multiplier, sample_rate)`` records one training step (O(1));
* ``get_epsilon(delta) -> float`` is the *certified upper end*, the conservative answer;
  ``get_delta(epsilon) -> float`` likewise;
* ``get_epsilon_bracket(delta)`` / ``get_delta_bracket(epsilon)`` return the full
  :class:`~dpbounds.PrivacyBracket` (lower and upper end, whether the tolerance was met, how);
* ``history`` is a list of ``(noise_multiplier, sample_rate, num_steps)`` entries, consecutive
  equal steps grouped; ``len(accountant)`` is the number of steps taken;
* ``state_dict()`` / ``load_state_dict()`` round-trip plain JSON-able data, so a restarted job
  resumes its accounting.

Naming: accountants say ``noise_multiplier`` (the Opacus word); the mathematical functions of the
package say ``sigma`` for the same number.
"""
from __future__ import annotations

import abc
import math
from typing import Any

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds._result import PrivacyBracket

__all__ = ["PrivacyAccountant", "initial_steps"]

_STATE_VERSION = 1


class PrivacyAccountant(abc.ABC):
    """Base of the package's accountants (see the module docstring for the protocol)."""

    #: the mechanism name stored in ``state_dict()`` (checked by ``load_state_dict``)
    mechanism: str = ""

    def __init__(self) -> None:
        self._history: list[list[float]] = []  # [noise_multiplier, sample_rate, num_steps]
        self._last_raw: tuple[float, float] | None = None  # the last step's arguments, as passed

    # ---------------------------------------------------------------- recording
    def _check_step(self, noise_multiplier: float, sample_rate: float) -> tuple[float, float]:
        s = V.check_scalar("noise_multiplier", noise_multiplier, V.Constraint.FINITE_POSITIVE)
        q = V.check_rate("sample_rate", sample_rate)
        return s, q

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one step with this noise multiplier and sample rate (consecutive equal steps are grouped).

        O(1): a step equal to the previous one (the common case in a training loop) costs well
        under a microsecond; a new one is validated first.
        """
        if (type(noise_multiplier) is float and type(sample_rate) is float and self._history
                and (noise_multiplier, sample_rate) == self._last_raw):
            self._history[-1][2] += 1  # same arguments as the last (validated) step
            return
        s, q = self._check_step(noise_multiplier, sample_rate)
        self._record(s, q, 1)
        self._last_raw = (noise_multiplier, sample_rate) if type(noise_multiplier) is float and type(sample_rate) is float else None

    def _record(self, s: float, q: float, n: int) -> None:
        if n <= 0:
            return
        if self._history and self._history[-1][0] == s and self._history[-1][1] == q:
            self._history[-1][2] += n
        else:
            self._history.append([s, q, n])

    @property
    def history(self) -> list[tuple[float, float, int]]:
        """``(noise_multiplier, sample_rate, num_steps)`` entries, oldest first."""
        return [(s, q, int(n)) for s, q, n in self._history]

    def __len__(self) -> int:
        """The number of steps taken."""
        return int(sum(n for _, _, n in self._history))

    # ---------------------------------------------------------------- answers
    @abc.abstractmethod
    def get_epsilon_bracket(self, delta: float) -> PrivacyBracket:
        """The certified bracket of epsilon(delta) after the recorded steps."""

    @abc.abstractmethod
    def get_delta_bracket(self, epsilon: float) -> PrivacyBracket:
        """The certified bracket of delta(epsilon) after the recorded steps."""

    def get_epsilon(self, delta: float) -> float:
        """epsilon(delta): the certified upper end of :meth:`get_epsilon_bracket` (conservative)."""
        return self.get_epsilon_bracket(delta).upper

    def get_delta(self, epsilon: float) -> float:
        """delta(epsilon): the certified upper end of :meth:`get_delta_bracket` (conservative)."""
        return self.get_delta_bracket(epsilon).upper

    # ---------------------------------------------------------------- state
    def _options(self) -> dict[str, Any]:
        """Constructor options that change answers (stored in ``state_dict``)."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """Plain JSON-able state: the mechanism, options and history."""
        return {"mechanism": self.mechanism, "version": _STATE_VERSION, "options": self._options(),
                "history": [[s, q, int(n)] for s, q, n in self._history]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict` output (replaces the history; options must match)."""
        if not isinstance(state, dict) or state.get("mechanism") != self.mechanism:
            got = state.get("mechanism") if isinstance(state, dict) else type(state).__name__
            raise DPBoundsError(f"state must be a state_dict() of a {self.mechanism!r} accountant, got {got!r}")
        version = state.get("version")
        # an int, not a bool: True == 1 in Python, but a state with version True is not ours
        if type(version) is not int or version != _STATE_VERSION:
            raise DPBoundsError(f"state version {version!r} is not supported (expected {_STATE_VERSION})")
        opts = state.get("options", {})
        if opts != self._options():
            raise DPBoundsError(f"state options {opts!r} differ from this accountant's {self._options()!r}")
        hist = state.get("history")
        if not isinstance(hist, list):
            raise DPBoundsError("state['history'] must be a list of [noise_multiplier, sample_rate, num_steps]")
        new: list[list[float]] = []
        for i, entry in enumerate(hist):
            if not (isinstance(entry, (list, tuple)) and len(entry) == 3):
                raise DPBoundsError(f"state['history'][{i}] must be [noise_multiplier, sample_rate, num_steps]")
            s, q = self._check_step(entry[0], entry[1])
            n = V.check_count(f"state['history'][{i}] num_steps", entry[2], minimum=1)
            new.append([s, q, n])
        self._history = new
        self._last_raw = None

    def __repr__(self) -> str:
        steps = len(self)
        last = self._history[-1] if self._history else None
        tail = f", last noise_multiplier={last[0]:g}, sample_rate={last[1]:g}" if last else ""
        return f"{type(self).__name__}(steps={steps}, history_entries={len(self._history)}{tail})"


def rounds_from_rate(sample_rate: float) -> int:
    """M with sample_rate = 1/M for random allocation, or ValueError saying how to pick it."""
    m = 1.0 / sample_rate
    r = round(m)
    if r < 2 or abs(m - r) > 1e-9 * m:
        raise DPBoundsError(
            f"random allocation takes sample_rate = 1/M for an integer number of rounds per epoch "
            f"M >= 2, got sample_rate={sample_rate!r} (1/sample_rate = {m:.6g}); with dataset_size N "
            "and batch_size B use M = N // B (expected batch size N / M >= B), i.e. "
            f"sample_rate = 1 / {max(int(math.floor(m)), 2)}")
    return int(r)


def initial_steps(noise_multiplier: float | None, sample_rate: float | None, steps: int | None,
                  epochs: float | None, dataset_size: int | None,
                  batch_size: int | None) -> tuple[float, float, int] | None:
    """(noise_multiplier, sample_rate, steps) a Poisson-sampled accountant starts with, or None.

    ``dataset_size``/``batch_size`` give sample_rate = B / N; ``epochs`` gives steps =
    floor(epochs / sample_rate) (Opacus' rule; :func:`dpbounds.sampling.poisson_steps`).
    ValueError naming the parameter otherwise.
    """
    if dataset_size is not None or batch_size is not None:
        if dataset_size is None or batch_size is None:
            raise DPBoundsError("dataset_size and batch_size go together (sample_rate = batch_size / dataset_size)")
        n = V.check_count("dataset_size", dataset_size, minimum=1)
        b = V.check_count("batch_size", batch_size, minimum=1, maximum=n)
        if sample_rate is not None and V.check_rate("sample_rate", sample_rate) != b / n:
            raise DPBoundsError(f"sample_rate={sample_rate!r} contradicts batch_size / dataset_size = {b / n!r}")
        sample_rate = b / n
    if steps is not None and epochs is not None:
        raise DPBoundsError("give steps or epochs, not both")
    if noise_multiplier is None:
        if steps is not None or epochs is not None:
            raise DPBoundsError("noise_multiplier and sample_rate are needed to start with a history")
        return None
    if sample_rate is None:
        raise DPBoundsError("sample_rate (or dataset_size and batch_size) is needed with noise_multiplier")
    s = V.check_scalar("noise_multiplier", noise_multiplier, V.Constraint.FINITE_POSITIVE)
    q = V.check_rate("sample_rate", sample_rate)
    if steps is None and epochs is None:
        raise DPBoundsError("give steps or epochs with noise_multiplier (or record steps with step())")
    if epochs is not None:
        from dpbounds.sampling import poisson_steps

        n_steps = poisson_steps(epochs, q)
    else:
        n_steps = V.check_count("steps", steps, minimum=1)
    return s, q, n_steps
