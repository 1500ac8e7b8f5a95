"""``dpbounds plot rdp-bounds`` and ``dpbounds plot composition``: the companion paper's figures.

Figures 1 and 2 of "Subsampled Rényi Differential Privacy and Analytical Moments Accountant"
(Section 4).  :func:`register` adds the two subcommands to the sub-parsers of ``dpbounds plot``
(:mod:`dpbounds.cli._plot`), whose output options and file writing they share.
"""
from __future__ import annotations

import argparse
from typing import Any, Callable

from dpbounds._errors import DPBoundsError
from dpbounds.cli._numbers import count, real, whole
from dpbounds.cli._plot import add_output_options, write_figure

__all__ = ["register"]

_PAPER = "\"Subsampled Renyi Differential Privacy and Analytical Moments Accountant\""
_REGIMES = ("high", "low")
_MECHANISMS = ("gaussian", "laplace", "randomized_response")


def _add_regime(p: argparse.ArgumentParser) -> None:
    """The paper's regime and the per-mechanism overrides, shared by both figures."""
    p.add_argument("--regime", choices=_REGIMES, default="high",
                   help="the paper's parameters: high privacy sigma=5, b=2, p=0.6; low privacy sigma=1, b=0.5, p=0.9")
    p.add_argument("--sigma", type=real, default=None,
                   help="override the Gaussian's noise std per unit (replace-one) L2 sensitivity")
    p.add_argument("--laplace-b", type=real, default=None, help="override the Laplace scale b")
    p.add_argument("--rr-p", type=real, default=None,
                   help="override randomized response's probability of a truthful answer, in (0.5, 1)")
    p.add_argument("--gamma", type=real, default=1e-3, help="sampling ratio m/n (without replacement)")
    p.add_argument("--mechanisms", nargs="+", choices=_MECHANISMS, default=list(_MECHANISMS),
                   help="the panels to draw")


def _write(args: argparse.Namespace, make: Callable[[], Any]) -> int:
    """write_figure, with the figure function's parameter names given as this command's options."""
    try:
        return write_figure(args, make)
    except DPBoundsError as exc:
        # the API names its parameter first ("k_max must be ..."): say "--k-max" instead
        name, sep, rest = str(exc).partition(" ")
        if sep and name.isidentifier() and name in vars(args):
            raise DPBoundsError(f"--{name.replace('_', '-')} {rest}") from None
        raise


def _rdp_bounds(args: argparse.Namespace) -> int:
    from dpbounds.figures import rdp_bounds_figure

    return _write(args, lambda: rdp_bounds_figure(
        args.regime, sigma=args.sigma, laplace_b=args.laplace_b, rr_p=args.rr_p, gamma=args.gamma,
        alpha_max=args.alpha_max, points=args.points, mechanisms=args.mechanisms))


def _composition(args: argparse.Namespace) -> int:
    from dpbounds.figures import composition_figure

    return _write(args, lambda: composition_figure(
        args.regime, sigma=args.sigma, laplace_b=args.laplace_b, rr_p=args.rr_p, gamma=args.gamma,
        delta=args.delta, k_min=args.k_min, k_max=args.k_max, points=args.points,
        conversion=args.conversion, bound=args.bound, gaussian_profile=args.gaussian_profile,
        optimal_points=args.optimal_points, mechanisms=args.mechanisms))


def register(plot_subparsers: Any) -> None:
    """Add ``rdp-bounds`` and ``composition`` to the sub-parsers of ``dpbounds plot``."""
    r = plot_subparsers.add_parser(
        "rdp-bounds", help=f"RDP of subsampled Gaussian, Laplace and randomized response vs the order (Figure 1 of {_PAPER})",
        description=f"Figure 1 of {_PAPER}: the Renyi DP eps'(alpha) of the Gaussian, Laplace and "
                    "randomized-response mechanisms subsampled without replacement (replace-one "
                    "neighbours), by Theorem 9, by the improved bound, and the lower bound no analysis "
                    "can beat, at integer orders 2..alpha-max, log-log axes, one panel per mechanism.",
        epilog="example:\n  dpbounds plot rdp-bounds --regime low -o fig1-low.pdf\n"
               "  dpbounds plot rdp-bounds --mechanisms gaussian --sigma 2 --alpha-max 1000")
    add_output_options(r, "rdp-bounds")
    _add_regime(r)
    r.add_argument("--alpha-max", type=count, default=10_000,
                   help="largest order (the Laplace and randomized-response bounds cost ~alpha-max^2)")
    r.add_argument("--points", type=count, default=60, help="number of log-spaced orders")
    r.set_defaults(func=_rdp_bounds)

    c = plot_subparsers.add_parser(
        "composition", help=f"eps over k compositions: RDP accountant vs naive and strong composition (Figure 2 of {_PAPER})",
        description=f"Figure 2 of {_PAPER}: eps at --delta after k compositions of each subsampled "
                    "mechanism, by the analytical moments accountant and by naive and strong (advanced) "
                    "composition after the subsampling lemma, with the base (eps, delta) and the slack "
                    "chosen per k; optionally the exact optimal composition (Kairouz-Oh-Viswanath) at "
                    "--optimal-points values of k (about 1 s each for the Gaussian).",
        epilog="example:\n  dpbounds plot composition --regime low -o fig2-low.png\n"
               "  dpbounds plot composition --mechanisms gaussian --optimal-points 6")
    add_output_options(c, "composition")
    _add_regime(c)
    c.add_argument("--delta", type=real, default=1e-8, help="target delta")
    c.add_argument("--k-min", type=count, default=1, help="smallest number of compositions")
    c.add_argument("--k-max", type=count, default=600_000, help="largest number of compositions")
    c.add_argument("--points", type=count, default=25, help="number of log-spaced k")
    c.add_argument("--conversion", choices=("improved", "classic"), default="improved",
                   help="the accountant's RDP -> (eps, delta) conversion (the paper used classic)")
    c.add_argument("--bound", choices=("improved", "theorem9"), default="improved",
                   help="the accountant's bound for subsampling without replacement")
    c.add_argument("--gaussian-profile", choices=("exact", "rdp"), default="exact",
                   help="the Gaussian baselines' eps0(delta0): its exact privacy profile, or the "
                        "Renyi-curve conversion the paper's baselines use")
    c.add_argument("--optimal-points", type=whole, default=0,
                   help="draw the optimal composition at this many k (0: not drawn)")
    c.set_defaults(func=_composition)
