"""The package's error and warning vocabulary, and the one table of status bits.

* :class:`DPBoundsError` -- the one error type (a ``ValueError``, so ``except ValueError``
  keeps working): bad arguments, and results that cannot be certified.
* :class:`PrecisionWarning` -- the one warning class: a valid result less precise than asked.
* :data:`STATUS_BITS` -- the meaning of every bit a compiled status output can set.  The C
  core reads the same table (``csrc/dpb_status.h`` is generated from it by
  ``tools/gen_ufuncs.py``), so a bit means one thing everywhere; :func:`status_reasons`
  and :func:`describe_status` are the only decoders (pyerfa's ``check_errwarn`` style:
  "N of M elements ...").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["DPBoundsError", "PrecisionWarning", "Status", "STATUS_BITS", "status_reasons", "describe_status"]


class DPBoundsError(ValueError):
    """An argument is outside its domain, or a requested guarantee cannot be certified.

    The message names the parameter and the rule it breaks (for arrays: how many elements
    break it and where the first one is), or says why no finite bound exists and what would
    give one.  A subclass of ``ValueError``.
    """


DPBoundsError.__module__ = "dpbounds"  # tracebacks show the public name, dpbounds.DPBoundsError


class PrecisionWarning(UserWarning):
    """A result is valid but less precise than requested.

    Raised as a warning (never silently) when, for example, an exact accountant's certified
    bracket is wider than its ``tolerance`` because the lattice that would meet it needs more
    memory than the cap.  The result object's ``tolerance_met`` field says the same.  Turn it
    into an error with ``warnings.simplefilter("error", dpbounds.PrecisionWarning)``.
    """


@dataclass(frozen=True)
class Status:
    """One bit of the shared status vocabulary (C enum ``DPB_STATUS_<name>``)."""

    name: str
    bit: int
    reason: str


# Bit 1 always means "an argument is outside its domain"; the others name the reason a
# certified value is not returned.  Append only: the values are part of the raw ufuncs' API.
STATUS_BITS: tuple[Status, ...] = (
    Status("BAD_INPUT", 1, "an argument is outside its domain"),
    Status("ROUNDS_BELOW_3", 2, "M < 3"),
    Status("SIGMA_BELOW_EDGE", 4, "sigma < sqrt(3/ln M)"),
    Status("CONDITION2", 8, "condition (2) fails: B*coef*mu + delta > 1/2 - Phi(-kappa)"),
    Status("DELTA_BELOW_MIN", 16, "target delta < delta_min"),
    Status("NOT_MONOTONE_AT_0", 32, "the Edgeworth polynomial is not increasing at 0"),
    Status("OUT_OF_RANGE", 64, "Phi^{-1}(1 - a) lies outside the monotone range of the Edgeworth polynomial"),
)


def status_reasons(bits: int) -> list[str]:
    """The reasons encoded in one status value, in bit order ([] for 0)."""
    return [s.reason for s in STATUS_BITS if int(bits) & s.bit]


def describe_status(status: Any) -> str:
    """Summarise a status array: "N of M elements: reason (count); ..." ("" if all are 0)."""
    st = np.asarray(status).astype(np.int64, copy=False)
    bad = int(np.count_nonzero(st))
    if bad == 0:
        return ""
    parts = [f"{s.reason} ({int(np.count_nonzero(st & s.bit))})" for s in STATUS_BITS if (st & s.bit).any()]
    return f"{bad} of {st.size} elements: " + "; ".join(parts)
