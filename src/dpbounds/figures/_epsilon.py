"""epsilon against epochs: random allocation and Poisson subsampling (exact) and RDP, one figure."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds.accountant import PoissonAccountant, RandomAllocationAccountant
from dpbounds.accountant._params import check_sigma_rounds
from dpbounds.figures._canvas import new_figure
from dpbounds.rdp import RDPAccountant

__all__ = ["epsilon_figure", "epsilon_series", "EPSILON_EPOCHS"]

#: The epochs drawn by default.
EPSILON_EPOCHS = (1, 2, 3, 5, 10, 20, 30, 50, 100)

FArr = NDArray[np.float64]


def epsilon_series(sigma: float, rounds: float, delta: float, epochs: Sequence[int],
                   tolerance: float = 2e-3) -> dict[str, tuple[FArr, FArr]]:
    """The numbers :func:`epsilon_figure` draws: key -> (lower, upper) epsilon per epoch count.

    ``random_allocation``: the exact accountant's certified bracket (M rounds per epoch);
    ``poisson``: the exact Poisson accountant's certified bracket at rate 1/M over E M steps;
    ``rdp``: the analytical moments accountant (Poisson-subsampled Gaussian, same rate and
    steps), an upper bound only, so lower = upper.
    """
    s, m = check_sigma_rounds(sigma, rounds)
    d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
    es = [V.check_count("epochs", e, minimum=1) for e in epochs]
    if not es:
        raise DPBoundsError("epochs must hold at least one epoch count")
    out: dict[str, tuple[FArr, FArr]] = {}
    ra = [RandomAllocationAccountant(s, m, e, tolerance=tolerance).get_epsilon_bracket(d) for e in es]
    out["random_allocation"] = (np.array([b.lower for b in ra]), np.array([b.upper for b in ra]))
    po = [PoissonAccountant(s, 1.0 / m, int(e * m), tolerance=tolerance).get_epsilon_bracket(d) for e in es]
    out["poisson"] = (np.array([b.lower for b in po]), np.array([b.upper for b in po]))
    rd = np.array([RDPAccountant(noise_multiplier=s, sample_rate=1.0 / m, steps=int(e * m)).get_epsilon_bracket(d).upper
                   for e in es])
    out["rdp"] = (rd, rd)
    return out


def _plain_log_ticks(axis: Any) -> None:
    """One tick format on a log axis: plain numbers (0.3, 1, 20) at 1, 2, 3 and 5 times the decades;
    labels at 1, 2 and 5 (3 too when the axis spans under two decades), never 10^x forms."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    lo, hi = sorted(axis.get_view_interval())
    few = hi / max(lo, 1e-300) < 100.0
    axis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0) if not few else (1.0, 2.0, 3.0, 5.0)))
    axis.set_minor_locator(LogLocator(base=10.0, subs=tuple(float(k) for k in range(1, 10)), numticks=100))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def epsilon_figure(sigma: float = 1.1, rounds: float = 234, delta: float = 1e-5, *,
                   epochs: Sequence[int] = EPSILON_EPOCHS, tolerance: float = 2e-3) -> Any:
    """epsilon(delta) against the number of epochs for random allocation, Poisson and RDP.

    Random allocation (M rounds per epoch) and Poisson subsampling (rate 1/M, E M steps) by
    their exact accountants, and the RDP moments accountant of the Poisson-subsampled
    Gaussian with the same sigma, rate and steps (see :func:`epsilon_series`).  The top panel
    draws the upper ends, log-log, with the certified brackets as bands at their true width;
    a bracket is about ``tolerance`` wide (relative), thinner than a line there, so the bottom
    panel draws each exact accountant's bracket [lower, upper] relative to its own upper end,
    in percent, as a band from 100 (lower / upper - 1) to 0, with the tolerance dashed.  The
    RDP value is an upper bound and has no band.  Tick labels are plain numbers throughout;
    the legend is outside the data.

    Parameters
    ----------
    sigma : float
        Noise multiplier, in [0.3, 20].
    rounds : float
        Rounds per epoch M (the expected batch size is N / M), an integer in [2, 1e9].
    delta : float in (0, 1)
    epochs : sequence of int >= 1
        The epoch counts (default 1, 2, 3, 5, 10, 20, 30, 50, 100).
    tolerance : float
        Relative width of the exact accountants' brackets.

    Returns
    -------
    matplotlib.figure.Figure
        ``axes[0]``: epsilon (one line per accountant, a band per exact one); ``axes[1]``: each
        exact accountant's bracket relative to its upper end (a band and its lower edge).

    Examples
    --------
    >>> from dpbounds.figures import epsilon_figure
    >>> fig = epsilon_figure(sigma=1.1, rounds=234, epochs=[1, 2])
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['random allocation (exact)', 'Poisson (exact)', 'Poisson (RDP)']
    """
    series = epsilon_series(sigma, rounds, delta, epochs, tolerance)
    e = np.array([float(x) for x in epochs])
    fig = new_figure(6.4, 6.2)
    ax, ax_rel = fig.subplots(2, 1, sharex=True, height_ratios=(2.2, 1.0))
    for key, label, color, marker in (("random_allocation", "random allocation (exact)", "C0", "o"),
                                      ("poisson", "Poisson (exact)", "C1", "s"),
                                      ("rdp", "Poisson (RDP)", "C2", "^")):
        lo, hi = series[key]
        ax.plot(e, hi, "-", marker=marker, ms=4, color=color, label=label)
        if key != "rdp":
            ax.fill_between(e, lo, hi, color=color, alpha=0.3, lw=0)
            # the bracket relative to its own upper end: [100 (lower / upper - 1), 0] percent
            rel_lo = 100.0 * (lo / hi - 1.0)
            ax_rel.fill_between(e, rel_lo, 0.0, color=color, alpha=0.35, lw=0,
                                label=f"{label}: certified bracket")
            ax_rel.plot(e, rel_lo, "-", color=color, lw=1.0, marker=marker, ms=3, label="_nolegend_")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel(f"epsilon at delta = {float(delta):g}")
    ax.set_title(f"sigma = {float(sigma):g}, M = {float(rounds):g} rounds per epoch (Poisson rate 1/M); "
                 "RDP: upper bound", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.margins(x=0.05)
    _plain_log_ticks(ax.xaxis)
    _plain_log_ticks(ax.yaxis)
    ax_rel.axhline(0.0, color="0.3", lw=0.6)
    ax_rel.axhline(-100.0 * tolerance, color="0.3", lw=0.8, ls="--", label=f"tolerance ({tolerance:g})")
    ax_rel.set_ylim(min(-100.0 * tolerance, float(np.nanmin(ax_rel.get_ylim()))) * 1.15, 100.0 * tolerance * 0.15)
    ax_rel.set_xlabel("epochs E")
    ax_rel.set_ylabel("bracket: lower / upper - 1 (%)", fontsize=9)
    ax_rel.grid(True, which="both", alpha=0.3)
    ax_rel.xaxis.set_major_formatter(ax.xaxis.get_major_formatter())
    handles, labels = ax.get_legend_handles_labels()
    h2, l2 = ax_rel.get_legend_handles_labels()
    fig.legend(handles + h2, labels + l2, loc="outside lower center", ncol=2, fontsize=8, frameon=False)
    return fig
