"""The parameter domain of the random-allocation accountant (private)."""
from __future__ import annotations

from typing import Any

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError

__all__ = ["check_sigma_rounds", "check_max_lattice", "SIGMA_MIN", "SIGMA_MAX", "ROUNDS_MAX", "MAX_LATTICE_CAP"]

SIGMA_MIN, SIGMA_MAX = 0.3, 20.0
ROUNDS_MAX = 1e9
#: Largest ``max_lattice`` accepted: 2**26 lattice points, ~3 GiB at the composition's peak
#: (about six float64 arrays of the window are alive at once).  A larger value is refused
#: before anything is allocated.
MAX_LATTICE_CAP = 2 ** 26


def check_sigma_rounds(sigma: Any, rounds: Any, sigma_name: str = "sigma",
                       rounds_name: str = "rounds") -> tuple[float, float]:
    """(sigma, M) as floats, or ValueError naming the parameter and the supported range."""
    s = V.check_scalar(sigma_name, sigma, V.Constraint.FINITE_POSITIVE)
    if not (SIGMA_MIN <= s <= SIGMA_MAX):
        raise DPBoundsError(f"{sigma_name} must be in [{SIGMA_MIN}, {SIGMA_MAX}], got {s!r}")
    m = V.check_scalar(rounds_name, rounds, V.Constraint.INTEGER_GE_2)
    if m > ROUNDS_MAX:
        raise DPBoundsError(f"{rounds_name} must be <= 1e9, got {m!r}")
    return s, m


def check_max_lattice(value: Any) -> int:
    """``max_lattice`` as an int in [1024, MAX_LATTICE_CAP], or DPBoundsError naming it and the cap."""
    n = V.check_count("max_lattice", value, minimum=1024)
    if n > MAX_LATTICE_CAP:
        raise DPBoundsError(f"max_lattice must be <= 2**26 = {MAX_LATTICE_CAP:,} lattice points (the memory cap, "
                            f"~3 GiB at the peak of a composition), got {n:,}")
    return n
