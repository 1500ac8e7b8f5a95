"""The trade-off curves of random allocation on one figure: asymptotic, approximations, bounds, exact."""
from __future__ import annotations

import math
from typing import Any, Callable, Literal

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds.accountant import RandomAllocationAccountant
from dpbounds.accountant._params import check_sigma_rounds
from dpbounds.figures._adaptive import sample
from dpbounds.figures._canvas import new_figure
from dpbounds.theorem31 import delta_bound
from dpbounds.tradeoff import (
    gaussian_tradeoff,
    gdp_mu_random_allocation,
    multi_epoch_tradeoff,
    tradeoff_clt,
    tradeoff_edgeworth,
)

__all__ = ["tradeoff_figure", "tradeoff_curves"]

FArr = NDArray[np.float64]


def tradeoff_curves(sigma: float, rounds: float, epochs: int = 1,
                    coefficient: str = "exact") -> dict[str, tuple[str, Callable[[FArr], FArr]]]:
    """The curves :func:`tradeoff_figure` draws: key -> (legend label, f(a) for 1-d arrays a).

    ``gaussian``: G_mu with the asymptotic mu of E epochs (:func:`dpbounds.gdp_mu_random_allocation`);
    ``lower_bound``: Theorem 3.1's delta_min composed over the epochs,
    max((1 - delta_min)^E - a, 0) (NaN where the theorem does not apply);
    ``clt``, ``edgeworth``: the single-epoch approximations (E = 1 only);
    ``exact``: E = 1 the exact curve (:func:`dpbounds.tradeoff_exact`), E > 1 the exact
    accountant's certified lower bound (:meth:`dpbounds.RandomAllocationAccountant.tradeoff`).
    """
    s, m = check_sigma_rounds(sigma, rounds)
    e = V.check_count("epochs", epochs, minimum=1)
    V.check_choice("coefficient", coefficient, ("exact", "simplified"))
    mu = float(gdp_mu_random_allocation(s, m, e))
    coef: Literal["exact", "simplified"] = "exact" if coefficient == "exact" else "simplified"
    dmin = float(delta_bound(s, m, coefficient=coef))
    curves: dict[str, tuple[str, Callable[[FArr], FArr]]] = {
        "gaussian": (f"G_mu, asymptotic mu = {mu:.4g}", lambda a: np.asarray(gaussian_tradeoff(a, mu), dtype=np.float64)),
        "lower_bound": (f"Theorem 3.1 lower bound ({coefficient} coefficient)",
                        lambda a: np.asarray(multi_epoch_tradeoff(a, dmin, e), dtype=np.float64)
                        if math.isfinite(dmin) else np.full(np.shape(a), np.nan)),
    }
    if e == 1:
        curves["clt"] = ("CLT approximation", lambda a: np.asarray(tradeoff_clt(a, s, m), dtype=np.float64))
        curves["edgeworth"] = ("Edgeworth approximation",
                               lambda a: np.asarray(tradeoff_edgeworth(a, s, m), dtype=np.float64))
    acc = RandomAllocationAccountant(s, m, e)
    curves["exact"] = ("exact" if e == 1 else "exact accountant, certified lower bound",
                       lambda a: np.asarray(acc.tradeoff(a)[0], dtype=np.float64))
    return curves


def tradeoff_figure(sigma: float = 1.0, rounds: float = 1e6, epochs: int = 1, *,
                    coefficient: str = "exact", tol: float = 1e-6) -> Any:
    """Trade-off curves f(a) of E epochs of random allocation with M rounds, on one figure.

    Left panel the curves f(a), right panel their gaps 1 - a - f(a) (where they differ
    visibly at large M): G_mu with the asymptotic mu, Theorem 3.1's lower bound, the CLT and
    Edgeworth approximations (single epoch only) and the exact curve -- for E > 1 the exact
    accountant's certified lower bound (see :func:`tradeoff_curves`).  Each curve is sampled
    adaptively: segments are bisected where the midpoint lies more than ``tol`` off the chord
    (up to 4097 points), so corners of a polygon are the curve's own, not the sampling's.
    Where a curve is undefined (NaN: the theorem does not apply, the Edgeworth expansion
    cannot be inverted) the line is broken, never drawn.

    Parameters
    ----------
    sigma : float
        Noise multiplier, in [0.3, 20] (the exact accountant's range).
    rounds : float
        Rounds per epoch M, an integer in [2, 1e9].
    epochs : int
        Number of epochs E >= 1.
    coefficient : {"exact", "simplified"}
        Berry-Esseen coefficient of Theorem 3.1.
    tol : float
        Drawing tolerance in f (default 1e-6: the right panel's scale at M = 1e6 is ~1e-3).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes; each line's label names its curve.

    Examples
    --------
    >>> from dpbounds.figures import tradeoff_figure
    >>> fig = tradeoff_figure(sigma=1.0, rounds=1000)
    >>> [line.get_label() for line in fig.axes[1].get_lines()][:2]
    ['G_mu, asymptotic mu = 0.04147', 'Theorem 3.1 lower bound (exact coefficient)']
    """
    V.check_choice("coefficient", coefficient, ("exact", "simplified"))
    t = V.check_scalar("tol", tol, V.Constraint.OPEN_UNIT)
    curves = tradeoff_curves(sigma, rounds, epochs, coefficient)
    fig = new_figure(10.0, 4.6)
    ax_f, ax_g = fig.subplots(1, 2)
    styles = {"gaussian": ("C0", "-"), "lower_bound": ("C3", "-"), "clt": ("C1", "--"),
              "edgeworth": ("C2", ":"), "exact": ("0.55", "-")}
    for key, (label, func) in curves.items():
        a, f = sample(func, t)
        if not np.any(np.isfinite(f)):
            label += ": does not apply here"
        color, ls = styles[key]
        # the exact curve wide and underneath, so the approximations on it stay visible
        lw, z = (3.0, 1) if key == "exact" else (1.3, 2)
        ax_f.plot(a, f, ls, color=color, lw=lw, zorder=z, label=label)
        ax_g.plot(a, 1.0 - a - f, ls, color=color, lw=lw, zorder=z, label=label)
    ax_f.plot([0, 1], [1, 0], color="0.6", lw=0.8, ls=":", label="_nolegend_")
    ax_f.set_xlim(0, 1)
    ax_f.set_ylim(0, 1)
    ax_f.set_aspect("equal")
    ax_f.set_xlabel("type I error a")
    ax_f.set_ylabel("type II error f(a)")
    ax_g.set_xlim(0, 1)
    ax_g.set_ylim(bottom=0)
    ax_g.set_xlabel("type I error a")
    ax_g.set_ylabel("gap 1 - a - f(a)")
    ax_g.grid(True, alpha=0.3)
    ax_g.legend(fontsize=8)
    e = int(epochs)
    note = "" if e == 1 else "; CLT and Edgeworth are single-epoch only"
    fig.suptitle(f"Random allocation, sigma = {float(sigma):g}, M = {float(rounds):g}, E = {e}{note}", fontsize=10)
    return fig
