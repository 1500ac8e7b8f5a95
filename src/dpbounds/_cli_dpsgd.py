"""``dpbounds dpsgd`` (what epsilon do I get?) and ``dpbounds calibrate`` (what noise do I need?)."""
from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from typing import Any

from dpbounds._cli_core import EXIT_TOLERANCE_MISSED, _whole
from dpbounds._cli_core import _positive_float as _number


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset-size", type=_whole, required=True, metavar="N",
                   help="number of training examples N, e.g. 60000 or 6e4")
    p.add_argument("--batch-size", type=_whole, required=True, metavar="B",
                   help="(expected) batch size B, e.g. 256")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--epochs", type=_number, metavar="E", help="passes over the data, e.g. 10")
    g.add_argument("--steps", type=_whole, metavar="T", help="training steps instead of epochs, e.g. 2340")
    p.add_argument("--delta", type=_number, default=1e-5, help="target delta (default 1e-5)")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="JSON output")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "dpsgd", help="epsilon of one DP-SGD run under every sampling scheme (start here)",
        description="epsilon(delta) of one DP-SGD configuration: random allocation (exact, certified), "
                    "Poisson (exact PLD and RDP), sampling without replacement (RDP), Theorem 3.1's "
                    "closed form and the Gaussian-DP approximation, with the steps each scheme counts.  "
                    "Example: dpbounds dpsgd --dataset-size 60000 --batch-size 256 --epochs 10 "
                    "--noise-multiplier 1.1 --delta 1e-5")
    p.add_argument("--noise-multiplier", type=_number, required=True, metavar="SIGMA",
                   help="noise std / clipping norm, e.g. 1.1")
    _common(p)
    p.set_defaults(func=_dpsgd)

    c = sub.add_parser(
        "calibrate", help="the smallest noise multiplier that meets a target epsilon",
        description="The smallest noise multiplier whose certified epsilon(delta) meets the target "
                    "(certified on both sides).  Example: dpbounds calibrate --target-epsilon 3 "
                    "--delta 1e-5 --dataset-size 60000 --batch-size 256 --epochs 10")
    c.add_argument("--target-epsilon", type=_number, required=True, help="target epsilon, e.g. 3")
    _common(c)
    c.add_argument("--sampling", choices=("random_allocation", "poisson", "without_replacement"),
                   default="random_allocation", help="sampling scheme (default random_allocation)")
    c.add_argument("--accountant", choices=("exact", "rdp"), default=None,
                   help="exact (random allocation, Poisson) or rdp (Poisson, without replacement); "
                        "default: exact where available, else rdp")
    c.add_argument("--rtol", type=_number, default=1e-3, help="relative resolution of sigma (default 1e-3)")
    c.set_defaults(func=_calibrate)


def _rows(sigma: float, N: int, B: int, epochs: float | None, steps: int | None,
          delta: float) -> list[dict[str, Any]]:
    from dpbounds import PoissonAccountant, PrecisionWarning, RandomAllocationAccountant
    from dpbounds import _ufuncs as U
    from dpbounds.rdp import PoissonGaussian, RDPAccountant, SubsampledGaussianWOR
    from dpbounds.tradeoff import gdp_epsilon, mu_poisson, mu_random_allocation

    if B > N:
        raise ValueError(f"batch-size must be <= dataset-size, got {B} > {N}")
    M = N // B
    q = B / N
    ra_steps = steps if steps is not None else None
    if ra_steps is None:
        assert epochs is not None
        if epochs != int(epochs):
            raise ValueError(f"epochs must be a whole number for random allocation, got {epochs!r} (give --steps)")
        ra_steps = int(epochs) * M
    po_steps = steps if steps is not None else int(float(epochs or 0) / q)
    if po_steps < 1:
        raise ValueError(f"epochs / (batch-size / dataset-size) gives no step: {epochs} / {q}")
    rows: list[dict[str, Any]] = []

    def row(scheme: str, neigh: str, rate: float, nsteps: int, lo: float | None, hi: float | None,
            method: str, **extra: Any) -> None:
        rows.append({"scheme": scheme, "neighbouring": neigh, "sample_rate": rate, "steps": nsteps,
                     "epsilon_lower": lo, "epsilon_upper": hi, "method": method, **extra})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrecisionWarning)
        ra = RandomAllocationAccountant(sigma, M, steps=ra_steps).get_epsilon_bracket(delta)
        po = PoissonAccountant(sigma, q, po_steps).get_epsilon_bracket(delta)
    row("random allocation", "add/remove", 1.0 / M, ra_steps, ra.lower, ra.upper,
        f"exact, certified bracket (M = N // B = {M} steps per epoch)", tolerance_met=ra.tolerance_met)
    row("Poisson", "add/remove", q, po_steps, po.lower, po.upper,
        "exact PLD, certified bracket (steps = int(E / q))", tolerance_met=po.tolerance_met)
    rdp = RDPAccountant().compose(PoissonGaussian(sigma, q), po_steps).get_epsilon_bracket(delta)
    row("Poisson", "add/remove", q, po_steps, None, rdp.upper, "RDP upper bound (improved conversion)")
    wor = RDPAccountant().compose(SubsampledGaussianWOR(sigma / 2.0, q), po_steps).get_epsilon_bracket(delta)
    row("without replacement", "replace-one (sensitivity 2C: RDP at sigma/2)", q, po_steps, None, wor.upper,
        "RDP upper bound (improved bound, improved conversion)")
    # Theorem 3.1: (0, delta_min)-DP per epoch, composed; applies only to whole epochs where valid
    E_ra = ra_steps / M
    dmin = float(U.delta_bound_exact(sigma, float(M)))
    if ra_steps % M:
        row("random allocation", "add/remove", 1.0 / M, ra_steps, None, None,
            "Theorem 3.1 closed form: not applicable (a partial epoch)")
    elif not math.isfinite(dmin):
        row("random allocation", "add/remove", 1.0 / M, ra_steps, None, None,
            f"Theorem 3.1 closed form: does not apply at sigma = {sigma:g}, M = {M} "
            "(needs M >= 3, sigma >= sqrt(3 / ln M) and its condition (2))")
    else:
        dE = float(U.compose_delta(dmin, float(E_ra)))
        ok = dE <= delta
        row("random allocation", "add/remove", 1.0 / M, ra_steps, None, 0.0 if ok else None,
            f"Theorem 3.1 closed form: (0, {dE:.3g})-DP over {int(E_ra)} epochs"
            + ("" if ok else f" -- no epsilon at delta = {delta:g} (its delta is larger)"))
    mu_ra = float(mu_random_allocation(sigma, float(M), E_ra))
    mu_po = float(mu_poisson(sigma, q, float(po_steps)))
    row("random allocation", "add/remove", 1.0 / M, ra_steps, None, float(gdp_epsilon(delta, mu_ra)),
        f"Gaussian-DP approximation, mu = {mu_ra:.4g} (NOT a bound)")
    row("Poisson", "add/remove", q, po_steps, None, float(gdp_epsilon(delta, mu_po)),
        f"Gaussian-DP CLT approximation, mu = {mu_po:.4g} (NOT a bound)")
    for w in caught:
        sys.stderr.write(f"dpbounds: warning: {w.message}\n")
    return rows


def _fmt(v: float | None) -> str:
    return "-" if v is None else ("inf" if not math.isfinite(v) else f"{v:.5g}")


def _dpsgd(args: argparse.Namespace) -> int:
    from dpbounds import _validation as V

    sigma = float(V.check_finite_positive("noise-multiplier", args.noise_multiplier))
    delta = float(V.check_open_unit("delta", args.delta))
    if args.epochs is not None:
        V.check_finite_positive("epochs", args.epochs)
    rows = _rows(sigma, args.dataset_size, args.batch_size, args.epochs, args.steps, delta)
    if getattr(args, "json", False):
        print(json.dumps({"noise_multiplier": sigma, "dataset_size": args.dataset_size,
                          "batch_size": args.batch_size, "epochs": args.epochs, "steps": args.steps,
                          "delta": delta, "rows": rows}, indent=2, allow_nan=False))
    else:
        n_e = f"epochs={args.epochs:g}" if args.epochs is not None else f"steps={args.steps}"
        print(f"DP-SGD: noise_multiplier={sigma:g}, N={args.dataset_size}, B={args.batch_size}, {n_e}, delta={delta:g}")
        print(f"{'scheme':<20} {'rate':>10} {'steps':>7} {'epsilon':>21}  method")
        for r in rows:
            lo, hi = r["epsilon_lower"], r["epsilon_upper"]
            eps = f"[{_fmt(lo)}, {_fmt(hi)}]" if lo is not None else _fmt(hi)
            print(f"{r['scheme']:<20} {r['sample_rate']:>10.5g} {r['steps']:>7} {eps:>21}  {r['method']}")
        print("note: without replacement uses replace-one neighbours; the other rows add/remove. "
              "A shuffled loader with fixed-size batches is none of these schemes (see docs/sampling.md).")
    missed = [r for r in rows if r.get("tolerance_met") is False]
    return EXIT_TOLERANCE_MISSED if missed else 0


def _calibrate(args: argparse.Namespace) -> int:
    import time

    from dpbounds import calibrate_noise

    acc = args.accountant or ("rdp" if args.sampling == "without_replacement" else "exact")
    t0 = time.perf_counter()
    s = calibrate_noise(args.target_epsilon, args.delta, dataset_size=args.dataset_size,
                        batch_size=args.batch_size, epochs=args.epochs, steps=args.steps,
                        sampling=args.sampling, accountant=acc, rtol=args.rtol)
    dt = time.perf_counter() - t0
    if getattr(args, "json", False):
        print(json.dumps({"noise_multiplier": s, "target_epsilon": args.target_epsilon, "delta": args.delta,
                          "sampling": args.sampling, "accountant": acc, "rtol": args.rtol,
                          "seconds": round(dt, 3)}))
    else:
        print(f"noise_multiplier = {s:.6g}  ({args.sampling}, {acc} accountant: certified epsilon <= "
              f"{args.target_epsilon:g} at delta = {args.delta:g}; {s / (1 + args.rtol):.6g} would not meet it)")
    return 0
