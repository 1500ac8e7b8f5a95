"""The package's warning class (one for every precision shortfall)."""
from __future__ import annotations

__all__ = ["PrecisionWarning"]


class PrecisionWarning(UserWarning):
    """A result is valid but less precise than requested.

    Raised as a warning (never silently) when, for example, an exact accountant's certified
    bracket is wider than its ``tolerance`` because the lattice that would meet it needs more
    memory than the cap.  The result object's ``tolerance_met`` field says the same.  Turn it
    into an error with ``warnings.simplefilter("error", dpbounds.PrecisionWarning)``.
    """
