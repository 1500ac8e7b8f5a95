"""Exact random-allocation accountant commands: ``epsilon`` and ``curve``."""
from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from dpbounds import PrecisionWarning, PrivacyBracket, RandomAllocationAccountant
from dpbounds._errors import DPBoundsError, NoAnswer
from dpbounds.cli._numbers import count, real
from dpbounds.cli._options import add_json_flag, add_sigma
from dpbounds.cli._output import EXIT_NOT_VALID, EXIT_OK, EXIT_TOLERANCE_MISSED, emit_json, writing

__all__ = ["register"]


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "epsilon", help="epsilon(delta) of E epochs of random allocation (certified bracket)",
        description="epsilon(delta) of E epochs of DP-SGD with random allocation (M rounds per epoch): a "
                    "certified bracket from the exact accountant, Theorem 3.1's closed form, or the "
                    "asymptotic Gaussian-DP approximation.",
        epilog="example:\n  dpbounds epsilon --sigma 1.1 --rounds 234 --epochs 10 --delta 1e-5\n"
               "  dpbounds epsilon --sigma 1 --rounds 1e6 --delta 0.05 --method closed_form")
    add_json_flag(p)
    add_sigma(p, "noise multiplier sigma, e.g. 1.1")
    p.add_argument("--rounds", type=count, required=True, help="rounds (steps) per epoch M, e.g. 234 or 1e4")
    p.add_argument("--epochs", type=count, default=1, help="number of epochs E")
    p.add_argument("--delta", type=real, required=True, help="target delta, e.g. 1e-5")
    p.add_argument("--method", choices=RandomAllocationAccountant.METHODS, default="exact",
                   help="exact: certified bracket; closed_form: Theorem 3.1 bound; "
                        "gdp_asymptotic: Gaussian-DP approximation (not a bound)")
    p.add_argument("--tolerance", type=real, default=2e-3,
                   help="relative width of the certified bracket to reach (exact method); when it cannot "
                        "be reached the bracket is printed with a warning and exit status "
                        f"{EXIT_TOLERANCE_MISSED}")
    p.set_defaults(func=_epsilon)

    c = sub.add_parser(
        "curve", help="exact single-epoch trade-off curve f_M(a) to CSV (or PNG)",
        description="The exact trade-off curve f_M(a) of one epoch of random allocation on an even grid "
                    "of a in [0, 1], with its error bound, written as CSV (columns a, f, err) or plotted "
                    "as PNG.  With E > 1 epochs: a certified lower bound on the E-epoch curve.",
        epilog="example:\n  dpbounds curve --sigma 1 --rounds 100 --out curve.csv\n"
               "  dpbounds curve --sigma 1 --rounds 100 --epochs 3 --points 201 --out curve.png")
    add_json_flag(c)
    add_sigma(c, "noise multiplier sigma, e.g. 1")
    c.add_argument("--rounds", type=count, required=True, help="rounds per epoch M, e.g. 100 or 1e4")
    c.add_argument("--epochs", type=count, default=1,
                   help="E > 1 writes a certified LOWER bound on the E-epoch curve (err column = nan)")
    c.add_argument("--points", type=count, default=101, help="number of points a in [0, 1] (at least 2)")
    c.add_argument("--out", required=True, help="output file: curve.csv, or curve.png (PNG needs matplotlib)")
    c.set_defaults(func=_curve)


def _epsilon(args: argparse.Namespace) -> int:
    acc = RandomAllocationAccountant(args.sigma, args.rounds, args.epochs, method=args.method,
                                     tolerance=args.tolerance)
    with warnings.catch_warnings():
        # the result carries the shortfall (tolerance_met, note); it is reported below
        warnings.simplefilter("ignore", PrecisionWarning)
        try:
            res = acc.get_epsilon_bracket(args.delta)
        except NoAnswer:   # the closed form: Theorem 3.1 does not apply at (sigma, M)
            why = (f"Theorem 3.1 does not apply at sigma = {args.sigma:g}, M = {args.rounds} (needs M >= 3, "
                   "sigma >= sqrt(3 / ln M) and its condition (2)); --method exact gives a certified bracket")
            if getattr(args, "json", False):
                emit_json({"epsilon_lower": None, "epsilon_upper": None, "method": args.method,
                           "kind": acc.bound_kind, "reason": why})
            else:
                print(f"closed form (Theorem 3.1 + composition): no guarantee: {why}")
            return EXIT_NOT_VALID
    lo, hi = res
    met = bool(getattr(res, "tolerance_met", True))
    note = str(getattr(res, "note", ""))
    if getattr(args, "json", False):
        out = {"epsilon_lower": lo, "epsilon_upper": hi, "method": args.method, "kind": acc.bound_kind}
        if isinstance(res, PrivacyBracket):
            d = res.to_dict()
            out.update({"tolerance": d["tolerance"], "tolerance_met": d["tolerance_met"],
                        "relative_width": d["relative_width"], "computed_by": d["method"],
                        "certified": d["certified"], "estimated": d["estimated"], "note": d["note"]})
        emit_json(out)
    elif args.method == "exact":
        print(f"epsilon in [{lo:.6g}, {hi:.6g}]  (certified bracket; sigma={args.sigma:g}, M={args.rounds:g}, "
              f"E={args.epochs:g}, delta={args.delta:g})")
    elif args.method == "gdp_asymptotic":
        print(f"epsilon ~ {hi:.6g}  (asymptotic GDP approximation, NOT a bound)")
    else:
        txt = "0 (Theorem 3.1 certifies (0, delta)-DP)" if hi == 0 else "not certified at this delta"
        print(f"closed form (Theorem 3.1 + composition): epsilon = {txt}")
    if args.method == "closed_form" and hi != 0:
        return EXIT_NOT_VALID   # no epsilon is certified at this delta
    if not met:
        sys.stderr.write(f"dpbounds: warning: tolerance {args.tolerance:g} not met: {note}\n")
        return EXIT_TOLERANCE_MISSED
    return EXIT_OK


def _curve(args: argparse.Namespace) -> int:
    if args.points < 2:
        raise DPBoundsError(f"points must be >= 2 (the grid includes a = 0 and a = 1), got {args.points}")
    a = np.linspace(0.0, 1.0, args.points)
    f, err = RandomAllocationAccountant(args.sigma, args.rounds, args.epochs).tradeoff(a)
    f, err = np.asarray(f, dtype=float), np.asarray(err, dtype=float)
    if args.out.lower().endswith(".png"):
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise DPBoundsError("PNG output needs matplotlib (pip install matplotlib)") from None
        fig, ax = plt.subplots(figsize=(4, 4))
        what = "exact f_M" if args.epochs == 1 else f"lower bound, E={args.epochs}"
        ax.plot(a, f, label=f"{what}, sigma={args.sigma}, M={args.rounds}")
        ax.plot(a, 1 - a, "k:", lw=0.8)
        ax.set_xlabel("type I error a")
        ax.set_ylabel("type II error f(a)")
        ax.legend(fontsize=7)
        try:
            with writing(args.out, "--out"):
                fig.savefig(args.out, dpi=120, bbox_inches="tight")
        finally:
            plt.close(fig)
    else:
        with writing(args.out, "--out"):
            np.savetxt(args.out, np.column_stack([a, f, err]), delimiter=",", header="a,f,err", comments="")
    if getattr(args, "json", False):
        emit_json({"out": args.out, "points": int(a.size), "epochs": args.epochs,
                   "max_err": float(np.max(err)) if args.epochs == 1 else None})
    elif args.epochs == 1:
        print(f"wrote {a.size} points to {args.out} (max error bound {float(np.max(err)):.2g})")
    else:
        print(f"wrote {a.size} points of a certified lower bound (E={args.epochs}) to {args.out}")
    return EXIT_OK
