"""Rényi DP of three subsampled mechanisms against the order: the companion paper's Figure 1."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds import rdp
from dpbounds.figures._canvas import new_figure
from dpbounds.figures._regimes import MECHANISMS, Regime, check_mechanisms, resolve

__all__ = ["rdp_bounds_figure", "BOUND_LABELS"]

FArr = NDArray[np.float64]

#: Each curve's legend label and line style, in drawing order.
BOUND_LABELS = {"theorem9": ("Theorem 9 (upper bound)", "-"),
                "improved": ("improved bound (upper bound)", "--"),
                "lower": ("lower bound", ":")}


def _orders(alpha_max: int, points: int) -> FArr:
    """Integer orders 2 .. alpha_max, about log-uniform (rounding merges the smallest ones)."""
    return np.unique(np.round(np.geomspace(2.0, float(alpha_max), points)))


def _curves(reg: Regime, mechanism: str, alpha: FArr) -> dict[str, FArr]:
    """bound -> eps'(alpha) of one subsampled mechanism (the numbers the figure draws)."""
    g = reg.gamma
    if mechanism == "gaussian":
        return {b: np.asarray(rdp.subsampled_gaussian_wor(alpha, reg.sigma, g, bound=b), dtype=np.float64)
                for b in BOUND_LABELS}
    base = reg.base(mechanism)
    out = {b: np.asarray(rdp.subsampled_wor(alpha, base, g, bound=b), dtype=np.float64)
           for b in ("theorem9", "improved")}
    # the divergence of a realisable pair, at integer orders only (docs/rdp.md, "Lower bound")
    out["lower"] = np.asarray(rdp.subsampled_wor(alpha, base, g, bound="lower"), dtype=np.float64)
    return out


def rdp_bounds_figure(regime: str = "high", *, sigma: float | None = None, laplace_b: float | None = None,
                      rr_p: float | None = None, gamma: float = 1e-3, alpha_max: int = 10_000,
                      points: int = 60, mechanisms: Sequence[str] = MECHANISMS) -> Any:
    """Figure 1 of the companion paper: RDP of subsampled mechanisms against the order alpha.

    For each base mechanism subsampled without replacement at ratio ``gamma`` (replace-one
    neighbours), the Rényi DP epsilon'(alpha) by Theorem 9 of "Subsampled Rényi Differential
    Privacy and Analytical Moments Accountant", by its improved (Pearson-Vajda) bound, and the
    lower bound that no analysis can beat (the divergence of a realisable pair), on log-log
    axes, one panel per mechanism.  Gaussian: :func:`dpbounds.rdp.subsampled_gaussian_wor`;
    Laplace and randomized response: :func:`dpbounds.rdp.subsampled_wor` for the upper bounds
    (the improved bound is valid for both: docs/composition.md), and the same lower-bound
    formula as the Gaussian's.  The orders are integers, where all three are
    exact (no interpolation).

    Parameters
    ----------
    regime : {"high", "low"}
        The paper's parameters: ``"high"`` privacy sigma = 5, b = 2, p = 0.6; ``"low"`` privacy
        sigma = 1, b = 0.5, p = 0.9.
    sigma, laplace_b, rr_p : float, optional
        Override the regime's Gaussian noise (std per unit L2 sensitivity, > 0), Laplace scale
        (> 0) or randomized-response truth probability (in (0.5, 1)).
    gamma : float
        Sampling ratio m/n in (0, 1] (the paper: 0.001).
    alpha_max : int
        Largest order, in [3, 100000] (default 10^4).  Cost grows as alpha_max^2 for the
        Laplace and randomized-response bounds (about 1 s each at 10^4).
    points : int >= 2
        Number of log-spaced orders before rounding to integers.
    mechanisms : sequence of str
        Which panels, from ``"gaussian"``, ``"laplace"``, ``"randomized_response"``.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per mechanism, each with three lines labelled by :data:`BOUND_LABELS`
        (x: the orders, y: epsilon'(alpha)).

    Examples
    --------
    >>> from dpbounds.figures import rdp_bounds_figure
    >>> fig = rdp_bounds_figure("high", alpha_max=100, mechanisms=["gaussian"])
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['Theorem 9 (upper bound)', 'improved bound (upper bound)', 'lower bound']
    >>> fig.savefig("rdp-bounds.png")  # doctest: +SKIP
    """
    reg = resolve(regime, sigma, laplace_b, rr_p, gamma)
    amax = V.check_count("alpha_max", alpha_max, minimum=3, maximum=100_000)
    n = V.check_count("points", points, minimum=2)
    names = check_mechanisms(mechanisms)
    alpha = _orders(amax, n)

    fig = new_figure(4.4 * len(names) + 0.4, 4.2)
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    for ax, mech in zip(axes, names):
        curves = _curves(reg, mech, alpha)
        for i, (bound, (label, style)) in enumerate(BOUND_LABELS.items()):
            ax.plot(alpha, curves[bound], style, color=f"C{i}", lw=1.5, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("order alpha")
        ax.set_title(reg.title(mech), fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    axes[0].set_ylabel("RDP epsilon'(alpha)")
    fig.suptitle(f"Rényi DP after subsampling without replacement, gamma = {reg.gamma:g} "
                 f"({'high' if regime == 'high' else 'low'}-privacy regime)", fontsize=11)
    return fig
