"""Theorem 3.1 commands: ``table1``, ``rounds``, ``delta``."""
from __future__ import annotations

import argparse
import math
from typing import Any

from dpbounds.allocation_bound import (
    BERRY_ESSEEN_CONSTANT,
    min_dataset_size,
    rounds_closed_form,
    rounds_required,
    theorem31,
)
from dpbounds.cli._numbers import count, real
from dpbounds.cli._options import add_coefficient, add_json_flag, add_sigma
from dpbounds.cli._output import EXIT_NOT_VALID, EXIT_OK, Column, emit_json, print_table
from dpbounds.epochs import per_epoch_delta

__all__ = ["TABLE1_SIGMAS", "register", "table1_rows"]

#: The noise multipliers of the paper's Table 1.
TABLE1_SIGMAS = (0.5, 0.75, 1.0, 1.5, 2.0)

_PAPER = ('"Trade-off Functions for DP-SGD with Subsampling based on Random Allocation: '
          'Tight Upper and Lower Bounds"')


def table1_rows(delta: float = 0.01) -> list[dict[str, Any]]:
    """The rows of the paper's Table 1 (one epoch), for both Berry-Esseen coefficients.

    The paper's table uses the coefficient as the theorem states it ("simplified"); the "exact"
    rows are the same table with the exact third absolute moment.  Both are passed explicitly.
    """
    rows = []
    for coefficient in ("simplified", "exact"):
        for sigma in TABLE1_SIGMAS:
            m_exact = rounds_required(sigma, delta, coefficient=coefficient)
            rows.append(
                {
                    "coefficient": coefficient,
                    "sigma": sigma,
                    "rounds_closed_form": rounds_closed_form(sigma, delta, coefficient=coefficient),
                    "rounds_exact": m_exact,
                    "min_dataset_size": min_dataset_size(sigma, m_exact),
                }
            )
    return rows


def _sig3(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.2e}"


def _table1(args: argparse.Namespace) -> int:
    rows = table1_rows(args.delta)
    if args.json:
        emit_json({"delta": args.delta, "rows": rows})
        return EXIT_OK
    print(f"Table 1: random allocation, delta = {args.delta:g}, one epoch (Theorem 3.1, B = {BERRY_ESSEEN_CONSTANT:g})")
    columns = [
        Column("sigma", lambda r: f"{r['sigma']:g}", 6),
        Column("M_BE+1/sqrt(2pi)", lambda r: _sig3(r["rounds_closed_form"]), 17),
        Column("M_exact", lambda r: _sig3(r["rounds_exact"]), 10),
        Column("Min N", lambda r: _sig3(r["min_dataset_size"]), 10),
    ]
    for coefficient in ("simplified", "exact"):
        label = "coef (22), simplified" if coefficient == "simplified" else "exact third absolute moment"
        print(f"\n{label}")
        print_table([r for r in rows if r["coefficient"] == coefficient], columns)
    return EXIT_OK


def _rounds(args: argparse.Namespace) -> int:
    m = rounds_required(args.sigma, args.delta, coefficient=args.coefficient, validity_at=args.validity_at,
                        epochs=args.epochs)
    # the closed form (4) is a one-epoch formula: over E epochs it is read at the per-epoch target
    per_epoch = args.delta if args.epochs == 1 else float(per_epoch_delta(args.delta, args.epochs))
    cf = rounds_closed_form(args.sigma, per_epoch, coefficient=args.coefficient)
    n = min_dataset_size(args.sigma, m, args.clip_norm, args.noise_ratio) if math.isfinite(m) else math.inf
    if args.json:
        emit_json({
            "sigma": args.sigma,
            "delta": args.delta,
            "epochs": args.epochs,
            "coefficient": args.coefficient,
            "validity_at": args.validity_at,
            "rounds_exact": int(m) if math.isfinite(m) else None,
            "rounds_closed_form": cf,
            "min_dataset_size": n,
        })
    elif math.isinf(m):
        print("no number of rounds M <= 2^53 satisfies Theorem 3.1 for these parameters")
    else:
        print(f"rounds per epoch (M_exact):  {int(m)}")
        print(f"closed form eq. (4):         {cf:.6g}")
        print(f"minimum dataset size N:      {n:.6g}")
    return EXIT_OK if math.isfinite(m) else EXIT_NOT_VALID   # no M: no answer, as delta's "does not apply"


def _delta(args: argparse.Namespace) -> int:
    r = theorem31(args.sigma, args.rounds, coefficient=args.coefficient)
    status = EXIT_OK if r.valid else EXIT_NOT_VALID
    if args.json:
        emit_json({
            "sigma": args.sigma,
            "rounds": args.rounds,
            "coefficient": args.coefficient,
            "delta_min": r.delta_min,
            "terms": list(r.terms),
            "valid": r.valid,
            "reason": r.reason,
        })
        return status
    print(f"delta_min = {r.delta_min:.6g}")
    for i, t in enumerate(r.terms, 1):
        print(f"  T{i} = {t:.6g}")
    if r.valid:
        print("Theorem 3.1 applies: f(a) >= 1 - a - delta_min for all a")
    else:
        print(f"Theorem 3.1 does NOT apply: {r.reason}")
    return status


def register(sub: Any) -> None:
    p = sub.add_parser(
        "table1", help="reproduce Table 1 of the random-allocation paper",
        description=f"Table 1 of {_PAPER}: the rounds per epoch M that Theorem 3.1 needs for a target "
                    "delta (closed form (4) and the exact smallest M), and the smallest dataset, for "
                    "both Berry-Esseen coefficients (the paper's table is the 'simplified' one).",
        epilog="example:\n  dpbounds table1\n  dpbounds table1 --delta 1e-3 --json")
    add_json_flag(p)
    p.add_argument("--delta", type=real, default=0.01, help="target delta of one epoch")
    p.set_defaults(func=_table1)

    common = argparse.ArgumentParser(add_help=False)
    add_sigma(common, "noise multiplier sigma (noise std / clip norm), e.g. 1")
    add_coefficient(common)
    add_json_flag(common)

    p = sub.add_parser(
        "rounds", parents=[common], help="rounds per epoch M needed for a target delta (Theorem 3.1)",
        description="The smallest number of rounds per epoch M for which Theorem 3.1 certifies the "
                    "target delta, the closed form (4) and the smallest dataset size N (exit status 1 "
                    "when no M <= 2^53 does).",
        epilog="example:\n  dpbounds rounds --sigma 1 --delta 0.01\n"
               "  dpbounds rounds --sigma 1 --delta 1e-5 --epochs 4 --coefficient simplified")
    p.add_argument("--delta", type=real, required=True, help="target delta (the total over the epochs), e.g. 1e-5")
    p.add_argument("--epochs", type=count, default=1, help="number of epochs E")
    p.add_argument("--validity-at", choices=("delta_min", "target"), default="delta_min",
                   help="which delta enters the theorem's condition (2): delta_min or the target delta")
    p.add_argument("--clip-norm", type=real, default=1.0, help="clipping norm C, for the minimum dataset size")
    p.add_argument("--noise-ratio", type=real, default=0.1,
                   help="largest tolerated per-round noise C sigma M / N of the averaged gradient, for the "
                        "minimum dataset size")
    p.set_defaults(func=_rounds)

    p = sub.add_parser(
        "delta", parents=[common], help="delta_min of Theorem 3.1 for sigma and M",
        description="delta_min(sigma, M) of Theorem 3.1, its six terms, and whether the theorem applies "
                    "(exit status 1 when it does not).",
        epilog="example:\n  dpbounds delta --sigma 1 --rounds 1e6\n"
               "  dpbounds delta --sigma 1 --rounds 1e6 --coefficient simplified --json")
    p.add_argument("--rounds", type=count, required=True, help="rounds per epoch M, e.g. 1e6")
    p.set_defaults(func=_delta)
