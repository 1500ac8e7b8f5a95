"""The result object of epsilon and delta queries of the exact accountants."""
from __future__ import annotations

import math
from typing import Any

from dpbounds._errors import PrecisionWarning
from dpbounds._errors import warn as issue_warning

__all__ = ["PrivacyBracket"]


class PrivacyBracket(tuple[float, float]):
    """A certified bracket ``[lower, upper]`` of epsilon(delta) or delta(epsilon).

    It is a 2-tuple ``(lower, upper)`` (so ``lo, hi = bracket`` works) with named fields:

    Attributes
    ----------
    quantity : {"epsilon", "delta"}
        What is bracketed.
    at : float
        The argument of the query (delta for an epsilon bracket, epsilon for a delta bracket).
    lower, upper : float
        The certified ends: the true value lies in ``[lower, upper]`` up to the estimated error
        terms listed in ``estimated``.  ``upper`` is the conservative answer.
    tolerance : float
        The requested relative width ``(upper - lower) / upper``.
    tolerance_met : bool
        Whether the bracket is that narrow.  When it is not, a
        :class:`dpbounds.PrecisionWarning` was issued with the reason (``note``).
    method : str
        How the bracket was computed (law and, for several epochs, the loss-lattice spacing).
    certified, estimated : str
        Which error terms are proved bounds and which are estimates.
    note : str
        Why the tolerance was missed (empty when it was met).

    ``float(bracket)`` is ``upper``.
    """

    quantity: str
    at: float
    tolerance: float
    tolerance_met: bool
    method: str
    certified: str
    estimated: str
    note: str

    def __new__(cls, lower: float, upper: float, *, quantity: str, at: float, tolerance: float,
                method: str, certified: str = "", estimated: str = "", note: str = "",
                warn: bool = True) -> "PrivacyBracket":
        self = super().__new__(cls, (float(lower), float(upper)))
        self.quantity = quantity
        self.at = float(at)
        self.tolerance = float(tolerance)
        self.tolerance_met = bool(self.relative_width <= tolerance)
        self.method = method
        self.certified = certified
        self.estimated = estimated
        if not self.tolerance_met and not note:
            note = (f"the certified bracket is {self.relative_width:.3g} wide (relative), "
                    f"wider than the tolerance {tolerance:g}")
        self.note = "" if self.tolerance_met else note
        if warn and not self.tolerance_met:
            issue_warning(f"{quantity}({'delta' if quantity == 'epsilon' else 'epsilon'}={at:g}) "
                 f"in [{self.lower:.6g}, {self.upper:.6g}]: {self.note}", PrecisionWarning)
        return self

    @property
    def lower(self) -> float:
        return self[0]

    @property
    def upper(self) -> float:
        return self[1]

    @property
    def relative_width(self) -> float:
        """(upper - lower) / upper (0 for a point, inf for an unbounded upper end)."""
        lo, hi = self
        if hi == lo:
            return 0.0
        if not math.isfinite(hi):
            return math.inf
        return (hi - lo) / hi

    def __float__(self) -> float:
        return self[1]

    def __repr__(self) -> str:
        return (f"PrivacyBracket({self.quantity}=[{self.lower!r}, {self.upper!r}], "
                f"tolerance_met={self.tolerance_met}, method={self.method!r})")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able fields (non-finite numbers as None)."""
        def num(v: float) -> float | None:
            return v if math.isfinite(v) else None
        return {"quantity": self.quantity, "at": self.at, "lower": num(self.lower),
                "upper": num(self.upper), "tolerance": self.tolerance,
                "tolerance_met": self.tolerance_met, "relative_width": num(self.relative_width),
                "method": self.method, "certified": self.certified, "estimated": self.estimated,
                "note": self.note}

    def __reduce__(self) -> Any:
        return (_rebuild, (self.lower, self.upper, self.to_dict()))


def _rebuild(lower: float, upper: float, d: dict[str, Any]) -> PrivacyBracket:
    return PrivacyBracket(lower, upper, quantity=d["quantity"], at=d["at"], tolerance=d["tolerance"],
                          method=d["method"], certified=d["certified"], estimated=d["estimated"],
                          note=d["note"], warn=False)
