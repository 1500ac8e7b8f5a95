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


def epsilon_figure(sigma: float = 1.1, rounds: float = 234, delta: float = 1e-5, *,
                   epochs: Sequence[int] = EPSILON_EPOCHS, tolerance: float = 2e-3) -> Any:
    """epsilon(delta) against the number of epochs for random allocation, Poisson and RDP.

    Random allocation (M rounds per epoch) and Poisson subsampling (rate 1/M, E M steps) by
    their exact accountants, and the RDP moments accountant of the Poisson-subsampled
    Gaussian with the same sigma, rate and steps (see :func:`epsilon_series`).  The exact
    accountants' certified brackets [lower, upper] are drawn as a shaded band around the
    upper end (relative width about ``tolerance``, so usually thinner than the line); the
    RDP value is an upper bound and has no band.

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

    Examples
    --------
    >>> from dpbounds.figures import epsilon_figure
    >>> fig = epsilon_figure(sigma=1.1, rounds=234, epochs=[1, 2])
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['random allocation (exact)', 'Poisson (exact)', 'Poisson (RDP)']
    """
    series = epsilon_series(sigma, rounds, delta, epochs, tolerance)
    e = np.array([float(x) for x in epochs])
    fig = new_figure(6.4, 4.4)
    ax = fig.add_subplot()
    for key, label, color, marker in (("random_allocation", "random allocation (exact)", "C0", "o"),
                                      ("poisson", "Poisson (exact)", "C1", "s"),
                                      ("rdp", "Poisson (RDP)", "C2", "^")):
        lo, hi = series[key]
        ax.plot(e, hi, "-", marker=marker, ms=4, color=color, label=label)
        if key != "rdp":
            ax.fill_between(e, lo, hi, color=color, alpha=0.3, lw=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epochs E")
    ax.set_ylabel(f"epsilon at delta = {float(delta):g}")
    ax.set_title(f"sigma = {float(sigma):g}, M = {float(rounds):g} rounds per epoch (Poisson rate 1/M)\n"
                 "exact: certified brackets (shaded); RDP: upper bound", fontsize=10)
    from matplotlib.ticker import ScalarFormatter

    for axis in (ax.xaxis, ax.yaxis):  # plain numbers, not 10^x
        axis.set_major_formatter(ScalarFormatter())
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig
