"""The parameter domain of the random-allocation accountant (private)."""
from __future__ import annotations

from typing import Any

from dpbounds._errors import DPBoundsError
from dpbounds import _validation as V

__all__ = ["check_sigma_rounds", "SIGMA_MIN", "SIGMA_MAX", "ROUNDS_MAX"]

SIGMA_MIN, SIGMA_MAX = 0.3, 20.0
ROUNDS_MAX = 1e9


def check_sigma_rounds(sigma: Any, rounds: Any, sigma_name: str = "sigma",
                       rounds_name: str = "rounds") -> tuple[float, float]:
    """(sigma, M) as floats, or ValueError naming the parameter and the supported range."""
    s = float(V.check_finite_positive(sigma_name, sigma))
    if not (SIGMA_MIN <= s <= SIGMA_MAX):
        raise DPBoundsError(f"{sigma_name} must be in [{SIGMA_MIN}, {SIGMA_MAX}], got {s!r}")
    m = float(V.check_rounds(rounds_name, rounds, minimum=2))
    if m > ROUNDS_MAX:
        raise DPBoundsError(f"{rounds_name} must be <= 1e9, got {m!r}")
    return s, m
