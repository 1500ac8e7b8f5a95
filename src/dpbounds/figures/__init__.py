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

The companion paper, "Subsampled Rényi Differential Privacy and Analytical Moments Accountant"
(Section 4):

rdp_bounds_figure(...)   its Figure 1: RDP of the subsampled Gaussian, Laplace and randomized
                         response against the order (Theorem 9, improved and lower bounds)
composition_figure(...)  its Figure 2: epsilon over k compositions, the analytical moments
                         accountant against naive and strong composition

Reading order: ``_canvas`` (a figure on its own Agg canvas, saving by suffix) and
``_adaptive`` (adaptive sampling of a curve for drawing), then one module per figure --
``_rounds``, ``_tradeoff``, ``_epsilon`` -- and, for the companion paper, ``_regimes`` (its
parameter regimes and base mechanisms) with ``_rdp_bounds`` and ``_composition``.
"""
from __future__ import annotations

from dpbounds.figures._canvas import save_figure
from dpbounds.figures._composition import composition_figure
from dpbounds.figures._epsilon import epsilon_figure, epsilon_series
from dpbounds.figures._rdp_bounds import rdp_bounds_figure
from dpbounds.figures._rounds import rounds_figure
from dpbounds.figures._tradeoff import tradeoff_curves, tradeoff_figure

__all__ = [
    "composition_figure",
    "epsilon_figure",
    "epsilon_series",
    "rdp_bounds_figure",
    "rounds_figure",
    "save_figure",
    "tradeoff_curves",
    "tradeoff_figure",
]
