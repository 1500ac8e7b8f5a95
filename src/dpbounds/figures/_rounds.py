"""Rounds M required by Theorem 3.1 against the noise multiplier, for several delta (Figure 1)."""
from __future__ import annotations

from typing import Any, Literal, Sequence

import numpy as np

from dpbounds import _ufuncs  # type: ignore[attr-defined, unused-ignore]
from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds.allocation_bound import rounds_required
from dpbounds.figures._canvas import new_figure

__all__ = ["rounds_figure", "ROUNDS_DELTAS", "M_MAX"]

#: The deltas drawn by default.
ROUNDS_DELTAS = (1e-2, 1e-3, 1e-4, 1e-5)
#: Largest M drawn: the largest M rounds_required searches, 2^53 (beyond, doubles no longer hold
#: every integer, and rounds_required gives inf).
M_MAX = float(_ufuncs.ROUNDS_MAX)


def rounds_figure(*, deltas: Sequence[float] = ROUNDS_DELTAS, sigma_min: float = 0.4,
                  sigma_max: float = 4.0, points: int = 241, epochs: int = 1) -> Any:
    """Figure 1 of the random-allocation paper: rounds M required against sigma, for several delta.

    For each delta, the smallest M with which Theorem 3.1 certifies f(a) >= 1 - a - delta
    (:func:`dpbounds.rounds_required`) with the paper's simplified Berry-Esseen coefficient
    (solid) and with the exact third absolute moment (dashed), on a log-scale y axis.
    Where no M <= 2^53 qualifies, or the theorem does not apply, the line is left out (a
    break in the line, its y data NaN there) and the legend says so; it is never drawn as a
    number.

    Parameters
    ----------
    deltas : sequence of float in (0, 1)
        The targets delta, one colour each (default 1e-2, 1e-3, 1e-4, 1e-5).
    sigma_min, sigma_max : float > 0
        The sigma range, sampled log-uniformly (default 0.4 to 4).
    points : int >= 2
        Number of sigma values (default 241).
    epochs : int >= 1
        With E > 1, delta is the total over E epochs (per-epoch target 1 - (1 - delta)^(1/E)).

    Returns
    -------
    matplotlib.figure.Figure
        One axes; every line's label names its delta and coefficient.

    Examples
    --------
    >>> from dpbounds.figures import rounds_figure
    >>> fig = rounds_figure(deltas=[0.01], points=5)
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['delta = 0.01, simplified', 'delta = 0.01, exact']
    >>> fig.savefig("rounds.png")  # doctest: +SKIP
    """
    dv = [float(d) for d in np.atleast_1d(V.check_open_unit("deltas", list(deltas))).ravel()]
    if not dv:
        raise DPBoundsError("deltas must hold at least one delta")
    lo = V.check_scalar("sigma_min", sigma_min, V.Constraint.FINITE_POSITIVE)
    hi = V.check_scalar("sigma_max", sigma_max, V.Constraint.FINITE_POSITIVE)
    if not hi > lo:
        raise DPBoundsError(f"sigma_max must be > sigma_min, got {hi:g} <= {lo:g}")
    n = V.check_count("points", points, minimum=2)
    e = V.check_count("epochs", epochs, minimum=1)
    sigma = np.geomspace(lo, hi, n)

    fig = new_figure(8.0, 4.6)
    ax = fig.add_subplot()
    left_out = False
    for i, d in enumerate(dv):
        color = f"C{i}"
        coefs: tuple[tuple[Literal["simplified", "exact"], str], ...] = (("simplified", "-"), ("exact", "--"))
        for coef, style in coefs:
            m = np.asarray(rounds_required(sigma, d, coef, epochs=e), dtype=np.float64)
            drop = ~np.isfinite(m) | (m > M_MAX)
            left_out |= bool(drop.any())
            ax.plot(sigma, np.where(drop, np.nan, m), style, color=color, lw=1.4,
                    label=f"delta = {d:g}, {coef}")
    ax.set_xscale("log")
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ticks = [t for t in (0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 15, 20) if lo <= t <= hi]
    if len(ticks) >= 2:  # plain numbers where they fit, not 10^x labels
        ax.set_xticks(ticks)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yscale("log")
    ax.set_xlabel("noise multiplier sigma")
    ax.set_ylabel("rounds M required" + (f" (total delta over E = {e} epochs)" if e > 1 else ""))
    ax.set_title("Rounds for f(a) >= 1 - a - delta (Theorem 3.1)\n"
                 "solid: simplified coefficient; dashed: exact third moment", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if left_out:
        # a legend entry without a line: the gaps in the lines are intentional
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], linestyle="none"))
        labels.append("gaps: no M <= 2^53 qualifies")
    ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
