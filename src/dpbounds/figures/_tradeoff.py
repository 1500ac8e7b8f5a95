"""The trade-off curves of random allocation on one figure: asymptotic, approximations, bounds, exact."""
from __future__ import annotations

import math
from typing import Any, Callable, Literal

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds.accountant import RandomAllocationAccountant
from dpbounds.accountant._params import check_sigma_rounds
from dpbounds.allocation_bound import delta_bound
from dpbounds.figures._adaptive import sample
from dpbounds.figures._canvas import new_figure
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


#: Line style of each curve: colour, dash, width, z-order (the exact curve wide and underneath).
_STYLES = {"gaussian": ("C0", "-", 1.3, 2), "lower_bound": ("C3", "-", 1.3, 2), "clt": ("C1", "--", 1.3, 2),
           "edgeworth": ("C2", ":", 1.6, 2), "exact": ("0.55", "-", 3.0, 1)}


def tradeoff_figure(sigma: float = 1.0, rounds: float = 1e6, epochs: int = 1, *,
                    coefficient: str = "exact", tol: float = 1e-6) -> Any:
    """Trade-off curves of E epochs of random allocation with M rounds, drawn so that they differ.

    Near the diagonal -- at large M, every curve is within 10^-2 of 1 - a -- a plot of f(a)
    is one line.  So the left panel draws each curve's gap to the diagonal, 1 - a - f(a), on a
    log scale (Theorem 3.1's bound, a gap of delta_min, stands apart from the curves it
    bounds), and the right panel each curve's difference from the exact one, f(a) - f_exact(a),
    on a symmetric log scale, with the exact curve's error bound as a grey band (E = 1).  The
    curves: G_mu with the asymptotic mu, Theorem 3.1's lower bound, the CLT and Edgeworth
    approximations (single epoch only) and the exact curve -- for E > 1 the exact accountant's
    certified lower bound (see :func:`tradeoff_curves`).  One legend, below the panels.

    Each curve is sampled adaptively: segments are bisected where the midpoint lies more than
    ``tol`` off the chord (up to 4097 points), so corners of a polygon are the curve's own,
    not the sampling's; the differences are taken at each curve's own points, the exact curve
    evaluated there.  Where a curve is undefined (NaN: the theorem does not apply, the
    Edgeworth expansion cannot be inverted) the line is broken, never drawn, and the legend
    says so.

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
        Drawing tolerance in f (default 1e-6).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: ``axes[0]`` the gaps (one line per curve), ``axes[1]`` the differences from
        the exact curve (one line per other curve); each line's label names its curve.

    Examples
    --------
    >>> from dpbounds.figures import tradeoff_figure
    >>> fig = tradeoff_figure(sigma=1.0, rounds=1000)
    >>> [line.get_label() for line in fig.axes[0].get_lines()][:2]
    ['G_mu, asymptotic mu = 0.04147', 'Theorem 3.1 lower bound (exact coefficient)']
    """
    V.check_choice("coefficient", coefficient, ("exact", "simplified"))
    t = V.check_scalar("tol", tol, V.Constraint.OPEN_UNIT)
    curves = tradeoff_curves(sigma, rounds, epochs, coefficient)
    sampled = {key: sample(func, t) for key, (_, func) in curves.items()}
    # the exact curve (and its error bound, E = 1) at every point any curve was drawn at
    x_all = np.unique(np.concatenate([x for x, _ in sampled.values()]))
    s, m = check_sigma_rounds(sigma, rounds)
    acc = RandomAllocationAccountant(s, m, int(epochs))
    f_all, err_all = (np.asarray(v, dtype=np.float64) for v in acc.tradeoff(x_all))

    fig = new_figure(10.0, 4.9)
    ax_g, ax_d = fig.subplots(1, 2)
    gaps = []
    for key, (label, _) in curves.items():
        a, f = sampled[key]
        if not np.any(np.isfinite(f)):
            label += ": does not apply here"
        color, ls, lw, z = _STYLES[key]
        gap = 1.0 - a - f
        gaps.append(gap[np.isfinite(gap) & (gap > 0)])
        ax_g.plot(a, gap, ls, color=color, lw=lw, zorder=z, label=label)
        if key != "exact":
            exact_here = f_all[np.searchsorted(x_all, a)]
            ax_d.plot(a, f - exact_here, ls, color=color, lw=lw, zorder=z, label=label)
    if epochs == 1 and np.any(np.isfinite(err_all)):
        ax_d.fill_between(x_all, -err_all, err_all, color="0.55", alpha=0.5, lw=0, zorder=1,
                          label="exact: its error bound")
    # log gap axis from 1e-4 of the largest gap (the tails near a = 0 and 1 go to 0)
    top = max((float(np.max(g)) for g in gaps if g.size), default=1.0)
    ax_g.set_yscale("log")
    ax_g.set_ylim(top * 1e-4, top * 2.0)
    ax_g.set_xlim(0, 1)
    ax_g.set_xlabel("type I error a")
    ax_g.set_ylabel("gap to the diagonal, 1 - a - f(a)")
    ax_g.grid(True, which="both", alpha=0.3)
    diffs = np.concatenate([np.abs(ln.get_ydata()) for ln in ax_d.get_lines()] or [np.zeros(1)])
    diffs = diffs[np.isfinite(diffs) & (diffs > 0)]
    floor = float(np.nanmax(err_all)) if epochs == 1 and np.any(np.isfinite(err_all)) else 0.0
    small = max(floor, float(np.min(diffs)) if diffs.size else 1e-12, 1e-15)
    ax_d.set_yscale("symlog", linthresh=small, linscale=0.5)
    # ticks at 0 and at decades well outside the linear part, so that no two labels collide
    lo_k = math.floor(math.log10(small)) + 2
    hi_k = math.ceil(math.log10(max(float(np.max(diffs)) if diffs.size else small, small * 100)))
    step = max(1, math.ceil((hi_k - lo_k + 1) / 5))
    decades = [10.0 ** k for k in range(hi_k, lo_k - 1, -step)]
    from matplotlib.ticker import FixedLocator

    ax_d.yaxis.set_major_locator(FixedLocator([-d for d in decades] + [0.0] + decades[::-1]))
    ax_d.set_xlim(0, 1)
    ax_d.axhline(0.0, color="0.3", lw=0.6)
    ax_d.set_xlabel("type I error a")
    ax_d.set_ylabel("f(a) - f_exact(a)" if epochs == 1 else "f(a) - (exact accountant's lower bound)")
    ax_d.grid(True, which="major", alpha=0.3)
    handles, labels = ax_g.get_legend_handles_labels()
    h2, l2 = ax_d.get_legend_handles_labels()
    handles += [h for h, lab in zip(h2, l2) if lab not in labels]
    labels += [lab for lab in l2 if lab not in labels]
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    e = int(epochs)
    note = "" if e == 1 else "; CLT and Edgeworth are single-epoch only"
    fig.suptitle(f"Random allocation, sigma = {float(sigma):g}, M = {float(rounds):g}, E = {e}{note}", fontsize=10)
    return fig
