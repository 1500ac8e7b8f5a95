"""Trade-off curve and Gaussian-DP commands: ``tradeoff``, ``gdp``, ``gdp-mu``."""
from __future__ import annotations

import argparse
import math
from typing import Any, Callable

import numpy as np

from dpbounds import tradeoff as T
from dpbounds._errors import DPBoundsError
from dpbounds.cli._numbers import count, real
from dpbounds.cli._options import add_coefficient, add_json_flag, add_sigma
from dpbounds.cli._output import EXIT_OK, Column, emit_json, print_table

__all__ = ["register"]

#: --method name -> (JSON key, the curve at a for args)
_CURVES: dict[str, tuple[str, Callable[[Any, argparse.Namespace], Any]]] = {
    "gaussian": ("gaussian", lambda a, x: T.gaussian_tradeoff(a, T.gdp_mu_random_allocation(x.sigma, x.rounds, 1))),
    "clt": ("clt", lambda a, x: T.tradeoff_clt(a, x.sigma, x.rounds)),
    "clt-truncated": ("clt_truncated", lambda a, x: T.tradeoff_clt(a, x.sigma, x.rounds, truncated=True)),
    "edgeworth": ("edgeworth", lambda a, x: T.tradeoff_edgeworth(a, x.sigma, x.rounds)),
    "lower-bound": ("lower_bound",
                    lambda a, x: T.tradeoff_lower_bound(a, x.sigma, x.rounds, coefficient=x.coefficient)),
}


def _cell(v: Any) -> str:
    return f"{v:.8g}" if isinstance(v, float) else str(v)


def _column(key: str) -> Column:
    return Column(key, lambda r: _cell(r[key]), 14, gap=2)


def _emit(args: argparse.Namespace, rows: list[dict[str, Any]]) -> int:
    if getattr(args, "json", False):
        emit_json(rows if len(rows) != 1 else rows[0])
        return EXIT_OK
    if rows:
        print_table(rows, [_column(k) for k in rows[0]])
    return EXIT_OK


def _tradeoff(args: argparse.Namespace) -> int:
    a = np.asarray(args.a, dtype=float)
    cols = {}
    for name in args.method or list(_CURVES):
        key, curve = _CURVES[name]
        cols[key] = np.asarray(curve(a, args), dtype=float).reshape(-1)
    rows = [{"a": float(ai), **{k: float(v[i]) for k, v in cols.items()}} for i, ai in enumerate(a)]
    if not getattr(args, "json", False):
        mu = float(T.gdp_mu_random_allocation(args.sigma, args.rounds, 1))
        print(f"# sigma={args.sigma} rounds={args.rounds} mu_M={mu:.6g}; gaussian/clt/edgeworth are "
              f"approximations, lower_bound is Theorem 3.1 (NaN where not valid)")
    return _emit(args, rows)


def _gdp(args: argparse.Namespace) -> int:
    rows = []
    for e in args.eps or ():
        rows.append({"mu": args.mu, "eps": e, "delta": float(T.gdp_delta(e, args.mu))})
    for d in args.delta or ():
        rows.append({"mu": args.mu, "delta": d, "eps": float(T.gdp_epsilon(d, args.mu))})
    if not rows:
        raise DPBoundsError("give --eps and/or --delta")
    return _emit(args, rows)


def _gdp_mu(args: argparse.Namespace) -> int:
    M, E = args.rounds, args.epochs
    row: dict[str, Any] = {
        "sigma": args.sigma, "rounds": M, "epochs": E,
        "random_allocation": float(T.gdp_mu_random_allocation(args.sigma, M, E)),
        "poisson_bu": float(T.gdp_mu_poisson(args.sigma, 1.0 / M, E * M)),
        "poisson_drs": float(T.gdp_mu_poisson_drs(args.sigma, 1.0 / M, E * M)),
    }
    if args.delta is not None:
        for k in ("random_allocation", "poisson_bu", "poisson_drs"):
            mu = row[k]
            row[f"eps_{k}"] = float(T.gdp_epsilon(args.delta, mu)) if math.isfinite(mu) else math.inf
    if not getattr(args, "json", False):
        print("# asymptotic Gaussian-DP parameters (CLT limits, not bounds); Poisson uses rate 1/M over E*M steps")
    return _emit(args, [row])


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tradeoff", help="trade-off curve f(a) of one epoch of random allocation",
        description="The trade-off curve f(a) of one epoch of M rounds of random allocation: the "
                    "Gaussian, central-limit (CLT) and Edgeworth approximations, and Theorem 3.1's "
                    "certified lower bound, side by side.",
        epilog="example:\n  dpbounds tradeoff --sigma 1 --rounds 1000 --a 0.1 0.5\n"
               "  dpbounds tradeoff --sigma 2 --rounds 100 --a 0.3 --method clt --method lower-bound")
    add_json_flag(p)
    add_sigma(p, "noise multiplier sigma, e.g. 1")
    p.add_argument("--rounds", type=count, required=True, help="rounds per epoch M, e.g. 1000 or 1e4")
    p.add_argument("--a", type=real, nargs="+", required=True, help="type-I error(s) a in [0, 1]")
    p.add_argument("--method", choices=tuple(_CURVES), action="append",
                   help="curve to compute; repeat for several (default: all)")
    add_coefficient(p)
    p.set_defaults(func=_tradeoff)

    g = subparsers.add_parser(
        "gdp", help="mu-GDP conversions: delta(eps) and eps(delta)",
        description="Conversions of mu-Gaussian differential privacy to (eps, delta): delta(eps) for "
                    "each --eps and eps(delta) for each --delta.",
        epilog="example:\n  dpbounds gdp --mu 1 --eps 1 2\n  dpbounds gdp --mu 0.5 --delta 1e-5 --json")
    add_json_flag(g)
    g.add_argument("--mu", type=real, required=True, help="Gaussian-DP parameter mu, e.g. 1")
    g.add_argument("--eps", type=real, nargs="+", help="epsilon(s) at which to give delta")
    g.add_argument("--delta", type=real, nargs="+", help="delta(s) at which to give epsilon")
    g.set_defaults(func=_gdp)

    m = subparsers.add_parser(
        "gdp-mu", help="Gaussian-DP mu of random allocation vs Poisson subsampling (asymptotic)",
        description="The asymptotic Gaussian-DP mu of E epochs of random allocation with M rounds per "
                    "epoch, and of Poisson subsampling at rate 1/M over E*M steps (Bu et al.; Dong, "
                    "Roth and Su).  Central-limit approximations, not bounds.",
        epilog="example:\n  dpbounds gdp-mu --sigma 1 --rounds 1000 --epochs 4 --delta 1e-5")
    add_json_flag(m)
    add_sigma(m, "noise multiplier sigma, e.g. 1")
    m.add_argument("--rounds", type=count, required=True, help="rounds per epoch M (Poisson rate 1/M), e.g. 1000")
    m.add_argument("--epochs", type=real, default=1.0, help="number of epochs E (may be fractional)")
    m.add_argument("--delta", type=real, help="also give eps(delta) for each mu")
    m.set_defaults(func=_gdp_mu)
