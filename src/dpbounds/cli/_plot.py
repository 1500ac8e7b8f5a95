"""``dpbounds plot``: the random-allocation paper's figures as PNG, SVG or PDF files."""
from __future__ import annotations

import argparse
from typing import Any, Callable

from dpbounds.cli._numbers import count, real
from dpbounds.cli._options import add_coefficient, add_json_flag, add_sigma
from dpbounds.cli._output import EXIT_OK, emit_json, writing

__all__ = ["register", "add_output_options", "write_figure"]


def add_output_options(p: argparse.ArgumentParser, name: str) -> None:
    """``-o/--output`` (default NAME.png) and ``--dpi``, shared by every ``plot`` subcommand."""
    add_json_flag(p)
    p.add_argument("-o", "--output", default=f"{name}.png",
                   help="output file; the format comes from the suffix: .png, .svg or .pdf")
    p.add_argument("--dpi", type=real, default=100.0, help="resolution of PNG output, dots per inch")


def write_figure(args: argparse.Namespace, make: Callable[[], Any]) -> int:
    """Check the output's suffix first (before any work), draw, write, say where."""
    from dpbounds.figures._canvas import output_format, save_figure

    output_format(args.output, "--output")
    if not args.dpi > 0:
        from dpbounds._errors import DPBoundsError

        raise DPBoundsError(f"--dpi must be > 0, got {args.dpi:g}")
    try:
        fig = make()
    except ImportError as exc:  # matplotlib missing: one line naming the extra
        from dpbounds._errors import DPBoundsError

        raise DPBoundsError(str(exc)) from None
    with writing(args.output, "--output"):
        save_figure(fig, args.output, args.dpi, "--output")
    if getattr(args, "json", False):
        emit_json({"output": args.output, "figure": args.plot})
    else:
        print(f"wrote {args.output}")
    return EXIT_OK


def _rounds(args: argparse.Namespace) -> int:
    from dpbounds.figures import rounds_figure

    return write_figure(args, lambda: rounds_figure(
        deltas=args.delta, sigma_min=args.sigma_min, sigma_max=args.sigma_max, points=args.points,
        epochs=args.epochs))


def _tradeoff(args: argparse.Namespace) -> int:
    from dpbounds.figures import tradeoff_figure

    return write_figure(args, lambda: tradeoff_figure(args.sigma, args.rounds, args.epochs,
                                                      coefficient=args.coefficient))


def _epsilon(args: argparse.Namespace) -> int:
    from dpbounds.figures import epsilon_figure

    return write_figure(args, lambda: epsilon_figure(args.sigma, args.rounds, args.delta, epochs=args.epochs,
                                                     tolerance=args.tolerance))


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "plot", help="draw the papers' figures (PNG, SVG or PDF; needs matplotlib)",
        description="Figures drawn from the package's own numbers (needs the plot extra: "
                    "pip install \"dpbounds[plot]\").  'rounds': Figure 1 of \"Trade-off Functions for "
                    "DP-SGD with Subsampling based on Random Allocation: Tight Upper and Lower Bounds\", "
                    "the rounds M Theorem 3.1 requires against sigma; 'tradeoff': the trade-off curves "
                    "on one figure; 'epsilon': epsilon against epochs for random allocation, Poisson and RDP; "
                    "'rdp-bounds' and 'composition': Figures 1 and 2 of \"Subsampled Renyi Differential "
                    "Privacy and Analytical Moments Accountant\".",
        epilog="example:\n  dpbounds plot rounds -o rounds.png\n"
               "  dpbounds plot tradeoff --sigma 1 --rounds 1e6 -o tradeoff.svg\n"
               "  dpbounds plot epsilon --sigma 1.1 --rounds 234 --delta 1e-5")
    plots = p.add_subparsers(dest="plot", metavar="FIGURE", required=True,
                             help="the figure to draw: rounds, tradeoff, epsilon, rdp-bounds or composition")

    r = plots.add_parser("rounds", help="rounds M required against sigma for several delta (Figure 1)",
                         description="Rounds M required by Theorem 3.1 against sigma, one colour per delta: "
                                     "the simplified coefficient solid, the exact third moment dashed, "
                                     "log-scale M.  Where no M <= 2^53 qualifies the line is left out.",
                         epilog="example:\n  dpbounds plot rounds --delta 1e-2 1e-3 -o fig1.pdf")
    add_output_options(r, "rounds")
    r.add_argument("--delta", type=real, nargs="+", default=[1e-2, 1e-3, 1e-4, 1e-5], help="target deltas")
    r.add_argument("--sigma-min", type=real, default=0.4, help="smallest sigma")
    r.add_argument("--sigma-max", type=real, default=4.0, help="largest sigma")
    r.add_argument("--points", type=count, default=241, help="number of sigma values (log-spaced)")
    r.add_argument("--epochs", type=count, default=1, help="epochs E (delta is the total over E epochs)")
    r.set_defaults(func=_rounds)

    t = plots.add_parser("tradeoff", help="trade-off curves f(a): G_mu, Theorem 3.1, CLT, Edgeworth, exact",
                         description="The trade-off curves f(a) of E epochs of random allocation, drawn so that "
                                     "they differ: left their gaps 1 - a - f(a) on a log scale, right their "
                                     "differences from the exact curve on a symmetric log scale.  G_mu with the "
                                     "asymptotic mu, Theorem 3.1's lower bound, the CLT and Edgeworth "
                                     "approximations (one epoch) and the exact curve (E > 1: the exact "
                                     "accountant's certified lower bound), sampled adaptively.",
                         epilog="example:\n  dpbounds plot tradeoff --sigma 1 --rounds 1e6\n"
                                "  dpbounds plot tradeoff --sigma 1.1 --rounds 234 --epochs 10 -o e10.png")
    add_output_options(t, "tradeoff")
    add_sigma(t, "noise multiplier sigma", required=False, default=1.0)
    t.add_argument("--rounds", type=count, default=1_000_000, help="rounds per epoch M")
    t.add_argument("--epochs", type=count, default=1, help="number of epochs E")
    add_coefficient(t)
    t.set_defaults(func=_tradeoff)

    e = plots.add_parser("epsilon", help="epsilon against epochs: random allocation, Poisson (exact) and RDP",
                         description="epsilon(delta) against epochs for random allocation (exact accountant, M "
                                     "rounds per epoch), Poisson subsampling (exact accountant, rate 1/M) and "
                                     "the RDP moments accountant (same sigma and rate); below, each exact "
                                     "accountant's certified bracket relative to its upper end.",
                         epilog="example:\n  dpbounds plot epsilon --sigma 1.1 --rounds 234 --epochs 1 10 100")
    add_output_options(e, "epsilon")
    add_sigma(e, "noise multiplier sigma", required=False, default=1.1)
    e.add_argument("--rounds", type=count, default=234, help="rounds per epoch M (Poisson rate 1/M)")
    e.add_argument("--delta", type=real, default=1e-5, help="target delta")
    e.add_argument("--epochs", type=count, nargs="+", default=[1, 2, 3, 5, 10, 20, 30, 50, 100],
                   help="epoch counts")
    e.add_argument("--tolerance", type=real, default=2e-3, help="relative width of the exact brackets")
    e.set_defaults(func=_epsilon)

    # The companion paper's figures ('plot rdp-bounds', 'plot composition'); imported here, not at
    # the top, because that module builds on add_output_options and write_figure above
    from dpbounds.cli import _plot_companion

    _plot_companion.register(plots)
