"""CLI sub-commands for trade-off curves and Gaussian DP (plugin of dpbounds.cli).

    dpbounds tradeoff --sigma 1 --rounds 1000 --a 0.1 0.5
    dpbounds gdp --mu 1 --eps 1 2          (delta(eps))
    dpbounds gdp --mu 1 --delta 1e-5       (eps(delta))
    dpbounds gdp-mu --sigma 1 --rounds 1000 --epochs 4
"""
from __future__ import annotations

import argparse
import json
import math
from typing import Any

import numpy as np

from dpbounds import tradeoff as T

_METHODS = ("gaussian", "clt", "clt-truncated", "edgeworth", "lower-bound")


def _emit(args: argparse.Namespace, rows: list[dict[str, Any]]) -> int:
    if getattr(args, "json", False):
        print(json.dumps(rows if len(rows) != 1 else rows[0], allow_nan=True))
        return 0
    if not rows:
        return 0
    keys = list(rows[0])
    print("  ".join(f"{k:>14}" for k in keys))
    for r in rows:
        print("  ".join(f"{r[k]:>14.8g}" if isinstance(r[k], float) else f"{str(r[k]):>14}" for k in keys))
    return 0


def _tradeoff(args: argparse.Namespace) -> int:
    a = np.asarray(args.a, dtype=float)
    methods = args.method or list(_METHODS)
    mu = float(T.mu_random_allocation(args.sigma, args.rounds, 1))
    cols: dict[str, Any] = {}
    for m in methods:
        if m == "gaussian":
            cols["gaussian"] = T.gaussian_tradeoff(a, mu)
        elif m == "clt":
            cols["clt"] = T.tradeoff_clt(a, args.sigma, args.rounds)
        elif m == "clt-truncated":
            cols["clt_truncated"] = T.tradeoff_clt(a, args.sigma, args.rounds, truncated=True)
        elif m == "edgeworth":
            cols["edgeworth"] = T.tradeoff_edgeworth(a, args.sigma, args.rounds)
        elif m == "lower-bound":
            cols["lower_bound"] = T.tradeoff_lower_bound(a, args.sigma, args.rounds, coefficient=args.coefficient)
    rows = []
    for i, ai in enumerate(a):
        row: dict[str, Any] = {"a": float(ai)}
        for k, v in cols.items():
            row[k] = float(np.asarray(v).reshape(-1)[i])
        rows.append(row)
    if not getattr(args, "json", False):
        print(f"# sigma={args.sigma} rounds={args.rounds} mu_M={mu:.6g}; gaussian/clt/edgeworth are "
              f"approximations, lower_bound is Theorem 3.1 (NaN where not valid)")
    return _emit(args, rows)


def _gdp(args: argparse.Namespace) -> int:
    rows = []
    if args.eps is not None:
        for e in args.eps:
            rows.append({"mu": args.mu, "eps": float(e), "delta": float(T.gdp_delta(e, args.mu))})
    if args.delta is not None:
        for d in args.delta:
            rows.append({"mu": args.mu, "delta": float(d), "eps": float(T.gdp_epsilon(d, args.mu))})
    if not rows:
        raise ValueError("give --eps and/or --delta")
    return _emit(args, rows)


def _gdp_mu(args: argparse.Namespace) -> int:
    M, E = args.rounds, args.epochs
    row = {
        "sigma": args.sigma, "rounds": M, "epochs": E,
        "random_allocation": float(T.mu_random_allocation(args.sigma, M, E)),
        "poisson_bu": float(T.mu_poisson(args.sigma, 1.0 / M, E * M)),
        "poisson_drs": float(T.mu_poisson_drs(args.sigma, 1.0 / M, E * M)),
    }
    if args.delta is not None:
        for k in ("random_allocation", "poisson_bu", "poisson_drs"):
            mu = row[k]
            row[f"eps_{k}"] = float(T.gdp_epsilon(args.delta, mu)) if math.isfinite(mu) else math.inf
    if not getattr(args, "json", False):
        print("# asymptotic Gaussian-DP parameters (CLT limits, not bounds); Poisson uses rate 1/M over E*M steps")
    return _emit(args, [row])


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("tradeoff", help="trade-off curve f(a) of random allocation (SPEC A.8-11)")
    p.add_argument("--sigma", type=float, required=True, help="noise multiplier")
    p.add_argument("--rounds", type=int, required=True, help="rounds per epoch M")
    p.add_argument("--a", type=float, nargs="+", required=True, help="type-I error(s) in [0, 1]")
    p.add_argument("--method", choices=_METHODS, action="append", help="repeatable; default: all")
    p.add_argument("--coefficient", choices=("exact", "simplified"), default="exact")
    p.set_defaults(func=_tradeoff)

    g = subparsers.add_parser("gdp", help="mu-GDP conversions: delta(eps) and eps(delta)")
    g.add_argument("--mu", type=float, required=True)
    g.add_argument("--eps", type=float, nargs="+")
    g.add_argument("--delta", type=float, nargs="+")
    g.set_defaults(func=_gdp)

    m = subparsers.add_parser("gdp-mu", help="mu of random allocation vs Poisson subsampling (Bu et al., Dong-Roth-Su)")
    m.add_argument("--sigma", type=float, required=True)
    m.add_argument("--rounds", type=int, required=True, help="rounds per epoch M (Poisson rate 1/M)")
    m.add_argument("--epochs", type=float, default=1.0)
    m.add_argument("--delta", type=float, help="also report eps(delta) for each mu")
    m.set_defaults(func=_gdp_mu)
