"""The exact (PLD) accountant for Poisson-subsampled DP-SGD, on the accountant protocol."""
from __future__ import annotations

from typing import Any

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._params import check_max_lattice
from dpbounds.accountant._poisson_pld import SIGMA_MAX, SIGMA_MIN, STEPS_MAX, PoissonPLD
from dpbounds.accountant._protocol import PrivacyAccountant, initial_steps

__all__ = ["PoissonAccountant"]


class PoissonAccountant(PrivacyAccountant):
    """Exact privacy accountant for DP-SGD with Poisson subsampling (certified PLD brackets).

    Each example joins each step independently with probability ``sample_rate``
    (:func:`dpbounds.sampling.poisson` realises it).  Answers come from the exact privacy-loss
    distribution of the subsampled Gaussian, composed over the history (:class:`PoissonPLD`):
    certified brackets, as tight as the tolerance asks.

    Parameters
    ----------
    noise_multiplier, sample_rate : float, optional
        With ``steps`` or ``epochs``, the accountant starts with that history; otherwise it starts
        empty and ``step()`` records the training.
    steps : int, optional
    epochs : float, optional
        Number of epochs instead of ``steps``: steps = int(epochs / sample_rate) (Opacus' rule).
    dataset_size, batch_size : int, optional
        N and B instead of ``sample_rate``: sample_rate = B / N.
    tolerance : float
        Relative width target of the epsilon bracket (default 2e-3; large epsilons are also
        resolved to an absolute width of 5 tolerance, see :class:`PoissonPLD`).
    max_lattice : int
        Memory cap of the loss lattice (see :class:`RandomAllocationPLD`); at most 2**26
        (~3 GiB peak), larger values raise DPBoundsError naming it.

    The computable range: noise multipliers in [0.05, 1e4] and at most 1e9 steps in all;
    anything else is refused with a DPBoundsError naming the parameter, when it is recorded.
    A call of :meth:`get_epsilon` after each step costs about as much as a cold one (the
    single-step laws are shared through the package's cache, the composition is redone): a
    few tens of milliseconds at 1e5 steps, and the answer depends only on the history.

    Examples
    --------
    >>> from dpbounds import PoissonAccountant
    >>> acc = PoissonAccountant(noise_multiplier=1.0, sample_rate=0.01, steps=1000)
    >>> br = acc.get_epsilon_bracket(1e-5)
    >>> br.lower <= acc.get_epsilon(1e-5) == br.upper
    True
    """

    mechanism = "poisson"

    def __init__(self, noise_multiplier: float | None = None, sample_rate: float | None = None,
                 steps: int | None = None, *, epochs: float | None = None,
                 dataset_size: int | None = None, batch_size: int | None = None,
                 tolerance: float = 2e-3, max_lattice: int = 2 ** 21):
        super().__init__()
        self.tolerance = V.check_scalar("tolerance", tolerance, V.Constraint.OPEN_UNIT)
        self.max_lattice = check_max_lattice(max_lattice)
        start = initial_steps(noise_multiplier, sample_rate, steps, epochs, dataset_size, batch_size)
        if start is not None:
            self._record(*start)

    def _check_step(self, noise_multiplier: float, sample_rate: float) -> tuple[float, float]:
        s, q = super()._check_step(noise_multiplier, sample_rate)
        _check_sigma(s)
        return s, q

    def _record(self, s: float, q: float, n: int) -> None:
        _check_sigma(s)
        total = _total(self._history) + n
        if total > STEPS_MAX:
            raise DPBoundsError(f"steps: the exact Poisson accountant composes at most {STEPS_MAX:.0e} steps in all, "
                                f"this history would hold {_count(total)}")
        super()._record(s, q, n)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict` output (the history is checked against the computable range)."""
        old = self._history
        super().load_state_dict(state)
        total = _total(self._history)
        if total > STEPS_MAX:
            self._history = old
            raise DPBoundsError(f"state['history']: the exact Poisson accountant composes at most {STEPS_MAX:.0e} "
                                f"steps in all, the state holds {_count(total)}")

    def _options(self) -> dict[str, object]:
        return {"tolerance": self.tolerance, "max_lattice": self.max_lattice}

    def _pld(self) -> PoissonPLD:
        if not self._history:
            raise DPBoundsError("no steps recorded yet: call step() or construct with steps or epochs")
        return PoissonPLD.from_segments([(s, q, int(n)) for s, q, n in self._history],
                                        tolerance=self.tolerance, max_lattice=self.max_lattice)

    def get_epsilon_bracket(self, delta: float) -> PrivacyBracket:
        """Certified bracket of epsilon(delta) after the recorded steps."""
        return self._pld().epsilon(delta)

    def get_delta_bracket(self, epsilon: float) -> PrivacyBracket:
        """Certified bracket of delta(epsilon) after the recorded steps."""
        eps = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_NONNEGATIVE) + 0.0  # -0.0 -> 0.0
        return self._pld().delta(eps)


def _check_sigma(s: float) -> None:
    if not (SIGMA_MIN <= s <= SIGMA_MAX):
        raise DPBoundsError(f"noise_multiplier must be in [{SIGMA_MIN:g}, {SIGMA_MAX:g}] for the exact Poisson "
                            f"accountant, got {s!r}")


def _total(history: list[list[float]]) -> int:
    return sum(int(n) for _, _, n in history)


def _count(n: int) -> str:
    return f"{n:,}" if n < 10 ** 15 else f"{float(n):.3g}"
