"""Figures of the random-allocation paper, drawn from the package's own numbers (matplotlib).

Each function returns a :class:`matplotlib.figure.Figure` built directly (no pyplot, no global
state; safe in threads) with an Agg canvas, so ``fig.savefig("name.png")`` works anywhere.
matplotlib is an optional extra: ``pip install "dpbounds[plot]"``.

rounds_figure(...)      rounds M required by Theorem 3.1 against sigma, for several delta
tradeoff_figure(...)    G_mu, Theorem 3.1's lower bound, CLT, Edgeworth and the exact curve
epsilon_figure(...)     epsilon against epochs: random allocation, Poisson (exact) and RDP
save_figure(fig, path)  write a figure as .png, .svg or .pdf (from the suffix)

The paper: "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation: Tight
Upper and Lower Bounds".  The command line draws the same figures: ``dpbounds plot``.
"""
from __future__ import annotations

from dpbounds.figures._canvas import save_figure
from dpbounds.figures._epsilon import epsilon_figure, epsilon_series
from dpbounds.figures._rounds import rounds_figure
from dpbounds.figures._tradeoff import tradeoff_curves, tradeoff_figure

__all__ = [
    "epsilon_figure",
    "epsilon_series",
    "rounds_figure",
    "save_figure",
    "tradeoff_curves",
    "tradeoff_figure",
]
