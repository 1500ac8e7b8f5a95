"""``dpbounds rdp``: eps(delta) of one DP-SGD configuration under three subsampling schemes.

Poisson sampling (RDP, add/remove, exact fractional orders), sampling without replacement
(RDP, replace-one: the clipped sum's sensitivity is 2C, so the WOR mechanism's sigma is
noise_multiplier/2), and random allocation (seed 000's Theorem 3.1 bound from the compiled
core, an (eps = 0, delta) guarantee per epoch, composed over epochs).
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
from typing import Any



def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rdp",
        help="eps(delta) for DP-SGD under Poisson, without-replacement and random-allocation sampling",
        description=__doc__,
    )
    p.add_argument("--sigma", type=float, required=True, help="noise multiplier (noise std / clip norm C)")
    p.add_argument("--dataset-size", type=float, required=True, help="N, number of records")
    p.add_argument("--batch-size", type=float, required=True, help="expected batch size B (rate B/N)")
    p.add_argument("--epochs", type=float, default=1.0, help="E passes over the data (steps = E N / B)")
    p.add_argument("--delta", type=float, default=1e-5, help="target delta")
    p.add_argument("--conversion", choices=("improved", "classic"), default="improved",
                   help="RDP -> (eps, delta) conversion (default improved)")
    p.add_argument("--wor-bound", choices=("improved", "theorem9"), default="improved",
                   help="WBK19 bound for sampling without replacement (default improved)")
    p.set_defaults(func=handler)


def _rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    _ufuncs: Any = importlib.import_module("dpbounds._ufuncs")
    from dpbounds import _validation as V
    from dpbounds.rdp import PoissonGaussian, RDPAccountant, SubsampledGaussianWOR

    sigma = float(V.check_finite_positive("sigma", args.sigma))
    n = float(V.check_finite_positive("dataset-size", args.dataset_size))
    b = float(V.check_finite_positive("batch-size", args.batch_size))
    e = float(V.check_finite_positive("epochs", args.epochs))
    delta = float(V.check_open_unit("delta", args.delta))
    if b > n:
        raise ValueError(f"batch-size must be <= dataset-size, got {b!r} > {n!r}")
    rate = b / n
    rounds = n / b
    steps = math.ceil(e * rounds)
    rows: list[dict[str, Any]] = []
    for name, mech, rel in [
        ("poisson", PoissonGaussian(sigma, rate, "exact"), "add/remove"),
        ("without-replacement", SubsampledGaussianWOR(sigma / 2.0, rate, args.wor_bound), "replace-one (sensitivity 2C)"),
    ]:
        acc = RDPAccountant(conversion=args.conversion).compose(mech, steps)
        eps, order = acc.get_epsilon(delta, return_order=True)  # type: ignore[misc]
        rows.append({"scheme": name, "neighbouring": rel, "rate": rate, "steps": steps,
                     "epsilon": eps, "delta": delta, "order": order,
                     "method": f"RDP ({'WBK19 ' + args.wor_bound if name != 'poisson' else 'MTZ exact'}, {args.conversion} conversion)"})
    # random allocation: Theorem 3.1 (seed 000) -- f >= 1 - a - delta_min per epoch, i.e. (0, delta_min)-DP
    m = math.floor(rounds)
    d_epoch = float(_ufuncs.delta_bound_exact(sigma, float(m))) if m >= 3 else math.nan
    epochs_int = math.ceil(e)
    d_total = float(_ufuncs.compose_delta(d_epoch, float(epochs_int))) if not math.isnan(d_epoch) else math.nan
    ok = (not math.isnan(d_total)) and d_total <= delta
    rows.append({"scheme": "random-allocation", "neighbouring": "add/remove (seed 000)", "rate": 1.0 / m if m else math.nan,
                 "steps": m * epochs_int, "epsilon": 0.0 if ok else math.inf, "delta": d_total, "order": None,
                 "method": "Theorem 3.1 bound (coef exact), (0, delta)-DP per epoch composed over epochs"
                           + ("" if not math.isnan(d_total) else "; NOT VALID here (Theorem 3.1 condition fails)")})
    return rows


def handler(args: argparse.Namespace) -> int:
    rows = _rows(args)
    if getattr(args, "json", False):
        clean = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()} for r in rows]
        print(json.dumps(clean, allow_nan=False))
        return 0
    print(f"DP-SGD: sigma={args.sigma:g}, N={args.dataset_size:g}, B={args.batch_size:g}, epochs={args.epochs:g}, "
          f"target delta={args.delta:g}")
    print(f"{'scheme':<20} {'neighbouring':<30} {'rate':>10} {'steps':>9} {'epsilon':>12} {'delta':>11}  method")
    for r in rows:
        eps = "inf" if math.isinf(r["epsilon"]) else f"{r['epsilon']:.6g}"
        dl = "n/a" if math.isnan(r["delta"]) else f"{r['delta']:.4g}"
        print(f"{r['scheme']:<20} {r['neighbouring']:<30} {r['rate']:>10.4g} {r['steps']:>9d} {eps:>12} {dl:>11}  {r['method']}")
    ra = rows[-1]
    if math.isnan(ra["delta"]):
        print("random allocation: Theorem 3.1 does not apply at these parameters (sigma too small or too few rounds).")
    elif math.isinf(ra["epsilon"]):
        print(f"random allocation: Theorem 3.1 certifies (0, {ra['delta']:.4g})-DP, which does not meet delta={args.delta:g}.")
    else:
        print(f"random allocation: Theorem 3.1 certifies (0, {ra['delta']:.4g})-DP <= target delta, so eps = 0 at delta={args.delta:g}.")
    print("note: WOR uses replace-one neighbours (sigma/2 per replace-one sensitivity); Poisson and random allocation use add/remove.")
    return 0
