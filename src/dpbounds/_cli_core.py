"""Core CLI commands: ``table1``, ``rounds``, ``delta``."""
from __future__ import annotations

import argparse
import json
import math
from typing import Any

from dpbounds.theorem31 import min_dataset_size, rounds_closed_form, rounds_required, theorem31

TABLE1_SIGMAS = (0.5, 0.75, 1.0, 1.5, 2.0)


def _positive_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _count(text: str) -> float:
    """Accept 1e6 as well as 1000000 for counts."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    return v


def _whole(text: str) -> int:
    """A whole number; accepts 60000, 6e4 and 6.0e4 (not 60000.5)."""
    v = _count(text)
    if not (math.isfinite(v) and v == int(v) and v >= 1 and v <= 2 ** 53):
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(v)


#: exit status when an answer is printed but its certified bracket is wider than the tolerance
EXIT_TOLERANCE_MISSED = 3


def table1_rows(delta: float = 0.01) -> list[dict[str, Any]]:
    """The rows of the paper's Table 1 (delta = 1/100, one epoch)."""
    rows = []
    for coefficient in ("simplified", "exact"):
        for sigma in TABLE1_SIGMAS:
            m_exact = rounds_required(sigma, delta, coefficient)
            rows.append(
                {
                    "coefficient": coefficient,
                    "sigma": sigma,
                    "rounds_closed_form": rounds_closed_form(sigma, delta, coefficient),
                    "rounds_exact": m_exact,
                    "min_dataset_size": min_dataset_size(sigma, m_exact),
                }
            )
    return rows


def _sig3(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.2e}"


def _int_or_inf(x: float) -> int | str:
    return "inf" if math.isinf(x) else int(x)


def _table1(args: argparse.Namespace) -> int:
    rows = table1_rows(args.delta)
    if args.json:
        print(json.dumps({"delta": args.delta, "rows": rows}, indent=2))
        return 0
    print(f"Table 1: random allocation, delta = {args.delta:g}, one epoch (Theorem 3.1, B = 0.4748)")
    for coefficient in ("simplified", "exact"):
        label = "coef (22), simplified" if coefficient == "simplified" else "exact third absolute moment"
        print(f"\n{label}")
        print(f"{'sigma':>6} {'M_BE+1/sqrt(2pi)':>17} {'M_exact':>10} {'Min N':>10}")
        for r in rows:
            if r["coefficient"] == coefficient:
                print(
                    f"{r['sigma']:>6g} {_sig3(r['rounds_closed_form']):>17} {_sig3(r['rounds_exact']):>10}"
                    f" {_sig3(r['min_dataset_size']):>10}"
                )
    return 0


def _rounds(args: argparse.Namespace) -> int:
    m = rounds_required(args.sigma, args.delta, args.coefficient, args.validity_at, epochs=args.epochs)
    cf = rounds_closed_form(args.sigma, args.delta if args.epochs == 1 else _per_epoch(args), args.coefficient)
    n = min_dataset_size(args.sigma, m, args.clip_norm, args.noise_ratio) if math.isfinite(m) else math.inf
    out = {
        "sigma": args.sigma,
        "delta": args.delta,
        "epochs": int(args.epochs),
        "coefficient": args.coefficient,
        "validity_at": args.validity_at,
        "rounds_exact": _int_or_inf(m),
        "rounds_closed_form": cf,
        "min_dataset_size": n,
    }
    if args.json:
        print(json.dumps(out, indent=2))
    elif math.isinf(m):
        print("no number of rounds M <= 2^53 satisfies Theorem 3.1 for these parameters")
    else:
        print(f"rounds per epoch (M_exact):  {int(m)}")
        print(f"closed form eq. (4):         {cf:.6g}")
        print(f"minimum dataset size N:      {n:.6g}")
    return 0


def _per_epoch(args: argparse.Namespace) -> float:
    from dpbounds.epochs import per_epoch_delta

    return float(per_epoch_delta(args.delta, int(args.epochs)))


def _delta(args: argparse.Namespace) -> int:
    if args.rounds != math.floor(args.rounds):
        raise ValueError(f"rounds must be an integer >= 3, got {args.rounds!r}")
    r = theorem31(args.sigma, int(args.rounds), coefficient=args.coefficient)
    out = {
        "sigma": args.sigma,
        "rounds": int(args.rounds),
        "coefficient": args.coefficient,
        "delta_min": r.delta_min,
        "terms": list(r.terms),
        "valid": r.valid,
        "reason": r.reason,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0 if r.valid else 1
    print(f"delta_min = {r.delta_min:.6g}")
    for i, t in enumerate(r.terms, 1):
        print(f"  T{i} = {t:.6g}")
    if r.valid:
        print("Theorem 3.1 applies: f(a) >= 1 - a - delta_min for all a")
    else:
        print(f"Theorem 3.1 does NOT apply: {r.reason}")
    return 0 if r.valid else 1


def add_json_flag(p: argparse.ArgumentParser) -> None:
    """Accept ``--json`` after the sub-command too (the global flag also works)."""
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="JSON output")


def register(sub: Any) -> None:
    p = sub.add_parser("table1", help="reproduce Table 1 of the random-allocation paper")
    add_json_flag(p)
    p.add_argument("--delta", type=_positive_float, default=0.01, help="target delta (default 0.01)")
    p.set_defaults(func=_table1)

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--sigma", type=_positive_float, required=True, help="noise multiplier")
    common.add_argument("--coefficient", choices=("simplified", "exact"), default="simplified")
    add_json_flag(common)

    p = sub.add_parser("rounds", parents=[common], help="rounds per epoch M needed for a target delta")
    p.add_argument("--delta", type=_positive_float, required=True, help="target delta (total over the epochs)")
    p.add_argument("--epochs", type=_count, default=1, help="number of epochs E (default 1)")
    p.add_argument("--validity-at", choices=("delta_min", "target"), default="delta_min")
    p.add_argument("--clip-norm", type=_positive_float, default=1.0)
    p.add_argument("--noise-ratio", type=_positive_float, default=0.1)
    p.set_defaults(func=_rounds)

    p = sub.add_parser("delta", parents=[common], help="delta_min of Theorem 3.1 for sigma and M")
    p.add_argument("--rounds", type=_count, required=True, help="rounds per epoch M (e.g. 1e6)")
    p.set_defaults(func=_delta)
