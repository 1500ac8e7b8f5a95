"""The two parameter regimes of the companion paper's Section 4 and its three base mechanisms (private).

"Subsampled Rényi Differential Privacy and Analytical Moments Accountant" draws its Figures 1
and 2 for a Gaussian (noise sigma per unit L2 sensitivity), a Laplace (scale b) and a binary
randomized-response (truthful with probability p) mechanism, each subsampled without
replacement at ratio gamma = 0.001, in a high-privacy and a low-privacy regime.  Both figure
modules resolve their parameters here, so the regimes are declared once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds.rdp import Laplace, Mechanism, RandomizedResponse, SubsampledGaussianWOR, SubsampledWOR

__all__ = ["REGIMES", "MECHANISMS", "Regime", "resolve", "check_mechanisms"]

#: The paper's regimes: the base mechanisms' parameters (sigma, b, p).
REGIMES = {"high": (5.0, 2.0, 0.6), "low": (1.0, 0.5, 0.9)}

#: The three base mechanisms, in the order the paper's columns show them.
MECHANISMS = ("gaussian", "laplace", "randomized_response")


@dataclass(frozen=True)
class Regime:
    """Validated parameters of the three base mechanisms and the sampling ratio."""

    sigma: float
    laplace_b: float
    rr_p: float
    gamma: float

    def title(self, mechanism: str) -> str:
        """The panel title naming the mechanism and its parameter."""
        return {"gaussian": f"subsampled Gaussian, sigma = {self.sigma:g}",
                "laplace": f"subsampled Laplace, b = {self.laplace_b:g}",
                "randomized_response": f"subsampled randomized response, p = {self.rr_p:g}"}[mechanism]

    def pure_epsilon(self, mechanism: str) -> float:
        """The pure-DP epsilon of the Laplace (1/b) or randomized-response (log(p/(1-p))) base.

        Its RDP at order infinity: the same number the subsampled RDP bounds take as eps(inf).
        """
        return float(self.base(mechanism).rdp(np.array(np.inf)))

    def base(self, mechanism: str) -> Mechanism:
        """The Laplace or randomized-response base mechanism (the Gaussian is handled by its own bound)."""
        return Laplace(self.laplace_b) if mechanism == "laplace" else RandomizedResponse(self.rr_p)

    def subsampled(self, mechanism: str, bound: str) -> Mechanism:
        """The mechanism subsampled without replacement, for :class:`dpbounds.rdp.RDPAccountant`.

        ``bound="improved"`` is valid for all three: the Gaussian and Laplace mechanisms meet
        the improved bound's condition (docs/rdp.md), and binary randomized response does too:
        its only pair of distinct output distributions, (p, 1 - p) against (1 - p, p),
        maximises every Rényi and Pearson-Vajda divergence at once, and its Rényi curve is
        that pair's divergence.
        """
        if mechanism == "gaussian":
            return SubsampledGaussianWOR(self.sigma, self.gamma, bound)
        return SubsampledWOR(self.base(mechanism), self.gamma, bound)


def resolve(regime: str, sigma: float | None, laplace_b: float | None, rr_p: float | None,
            gamma: float) -> Regime:
    """The regime's parameters with any given override, validated (DPBoundsError naming the parameter)."""
    r = V.check_choice("regime", regime, tuple(REGIMES))
    s0, b0, p0 = REGIMES[r]
    s = V.check_scalar("sigma", s0 if sigma is None else sigma, V.Constraint.FINITE_POSITIVE)
    b = V.check_scalar("laplace_b", b0 if laplace_b is None else laplace_b, V.Constraint.FINITE_POSITIVE)
    p = V.check_scalar("rr_p", p0 if rr_p is None else rr_p, V.Constraint.OPEN_UNIT)
    if not p > 0.5:
        # p < 1/2 is the same mechanism with the answers swapped; p = 1/2 has no privacy loss
        # at all, which a log-scale axis cannot show
        raise DPBoundsError(f"rr_p must be in (0.5, 1), got {p!r}")
    g = V.check_rate("gamma", gamma)
    return Regime(s, b, p, g)


def check_mechanisms(mechanisms: str | Iterable[str]) -> tuple[str, ...]:
    """A non-empty sequence of distinct names from :data:`MECHANISMS`, in the given order."""
    names = (mechanisms,) if isinstance(mechanisms, str) else tuple(mechanisms)
    if not names:
        raise DPBoundsError("mechanisms must name at least one of " + ", ".join(map(repr, MECHANISMS)))
    for m in names:
        V.check_choice("mechanisms", m, MECHANISMS)
    if len(set(names)) != len(names):
        raise DPBoundsError(f"mechanisms must not repeat a name, got {list(names)!r}")
    return names
