"""``dpbounds dpsgd`` (what epsilon do I get?) and ``dpbounds calibrate`` (what noise do I need?)."""
from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from typing import Any, Mapping

from dpbounds import (
    PoissonAccountant,
    PrecisionWarning,
    RandomAllocationAccountant,
    calibrate_noise,
    gdp_epsilon,
    gdp_mu_poisson,
    gdp_mu_random_allocation,
)
from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds.cli._numbers import count, real
from dpbounds.cli._options import add_json_flag
from dpbounds.cli._output import EXIT_OK, EXIT_TOLERANCE_MISSED, Column, emit_json, print_table
from dpbounds.rdp import PoissonGaussian, RDPAccountant, SubsampledGaussianWOR

__all__ = ["register"]


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset-size", type=count, required=True, metavar="N",
                   help="number of training examples N, e.g. 60000 or 6e4")
    p.add_argument("--batch-size", type=count, required=True, metavar="B",
                   help="(expected) batch size B, e.g. 256")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--epochs", type=real, metavar="E", help="passes over the data, e.g. 10")
    g.add_argument("--steps", type=count, metavar="T", help="training steps instead of epochs, e.g. 2340")
    p.add_argument("--delta", type=real, default=1e-5, help="target delta")
    add_json_flag(p)


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "dpsgd", help="epsilon of one DP-SGD run under every sampling scheme (start here)",
        description="epsilon(delta) of one DP-SGD configuration: random allocation (exact, certified),\n"
                    "Poisson (exact PLD and RDP), sampling without replacement (RDP), Theorem 3.1's\n"
                    "closed form and the Gaussian-DP approximation, with the steps each scheme counts.",
        epilog="example:\n  dpbounds dpsgd --dataset-size 60000 --batch-size 256 --epochs 10 "
               "--noise-multiplier 1.1 --delta 1e-5")
    p.add_argument("--noise-multiplier", type=real, required=True, metavar="SIGMA",
                   help="noise std / clipping norm, e.g. 1.1")
    _common(p)
    p.set_defaults(func=_dpsgd)

    c = sub.add_parser(
        "calibrate", help="the smallest noise multiplier that meets a target epsilon",
        description="The smallest noise multiplier whose certified epsilon(delta) meets the target\n"
                    "(certified on both sides).",
        epilog="example:\n  dpbounds calibrate --target-epsilon 3 --delta 1e-5 --dataset-size 60000 "
               "--batch-size 256 --epochs 10")
    c.add_argument("--target-epsilon", type=real, required=True, help="target epsilon, e.g. 3")
    _common(c)
    c.add_argument("--sampling", choices=("random_allocation", "poisson", "without_replacement"),
                   default="random_allocation", help="sampling scheme")
    c.add_argument("--accountant", choices=("exact", "rdp"), default=None,
                   help="exact (random allocation, Poisson) or rdp (Poisson, without replacement); "
                        "default: exact where available, else rdp")
    c.add_argument("--rtol", type=real, default=1e-3, help="relative resolution of sigma")
    c.set_defaults(func=_calibrate)


def _rows(sigma: float, N: int, B: int, epochs: float | None, steps: int | None,
          delta: float) -> list[dict[str, Any]]:
    if B < 1:
        raise DPBoundsError(f"batch-size must be >= 1, got {B}")
    if B > N:
        raise DPBoundsError(f"batch-size must be <= dataset-size, got {B} > {N}")
    if steps is not None and steps < 1:
        raise DPBoundsError(f"steps must be >= 1, got {steps}")
    M = N // B
    q = B / N
    ra_steps = steps if steps is not None else None
    if ra_steps is None:
        assert epochs is not None
        if epochs != int(epochs):
            raise DPBoundsError(f"epochs must be a whole number for random allocation, got {epochs!r} (give --steps)")
        ra_steps = int(epochs) * M
    po_steps = steps if steps is not None else int(float(epochs or 0) / q)
    if po_steps < 1:
        raise DPBoundsError(f"epochs / (batch-size / dataset-size) gives no step: {epochs} / {q}")
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
    E_ra = ra_steps / M
    if ra_steps % M:
        row("random allocation", "add/remove", 1.0 / M, ra_steps, None, None,
            "Theorem 3.1 closed form: not applicable (a partial epoch)")
    else:
        row("random allocation", "add/remove", 1.0 / M, ra_steps, None, *_closed_form(sigma, M, int(E_ra), delta))
    mu_ra = float(gdp_mu_random_allocation(sigma, float(M), E_ra))
    mu_po = float(gdp_mu_poisson(sigma, q, float(po_steps)))
    row("random allocation", "add/remove", 1.0 / M, ra_steps, None, float(gdp_epsilon(delta, mu_ra)),
        f"Gaussian-DP approximation, mu = {mu_ra:.4g} (NOT a bound)")
    row("Poisson", "add/remove", q, po_steps, None, float(gdp_epsilon(delta, mu_po)),
        f"Gaussian-DP CLT approximation, mu = {mu_po:.4g} (NOT a bound)")
    for w in caught:
        sys.stderr.write(f"dpbounds: warning: {w.message}\n")
    return rows


def _closed_form(sigma: float, M: int, epochs: int, delta: float) -> tuple[float | None, str]:
    """Theorem 3.1's (0, delta)-DP over whole epochs, from the closed-form accountant: (epsilon, method text)."""
    try:
        dE = RandomAllocationAccountant(sigma, M, epochs, method="closed_form").get_delta_bracket(0.0).upper
    except ValueError:  # (sigma, M) passed the exact accountant above, so: the theorem does not apply
        return None, (f"Theorem 3.1 closed form: does not apply at sigma = {sigma:g}, M = {M} "
                      "(needs M >= 3, sigma >= sqrt(3 / ln M) and its condition (2))")
    if dE <= delta:
        return 0.0, f"Theorem 3.1 closed form: (0, {dE:.3g})-DP over {epochs} epochs"
    return None, (f"Theorem 3.1 closed form: (0, {dE:.3g})-DP over {epochs} epochs"
                  f" -- no epsilon at delta = {delta:g} (its delta is larger)")


def _fmt(v: float | None) -> str:
    return "-" if v is None else ("inf" if not math.isfinite(v) else f"{v:.5g}")


def _eps(r: Mapping[str, Any]) -> str:
    lo, hi = r["epsilon_lower"], r["epsilon_upper"]
    return f"[{_fmt(lo)}, {_fmt(hi)}]" if lo is not None else _fmt(hi)


_COLUMNS = (
    Column("scheme", lambda r: r["scheme"], 20, "<"),
    Column("rate", lambda r: f"{r['sample_rate']:.5g}", 10),
    Column("steps", lambda r: str(r["steps"]), 7),
    Column("epsilon", _eps, 21),
    Column("method", lambda r: r["method"], 0, "<", gap=2),
)


def _dpsgd(args: argparse.Namespace) -> int:
    sigma = float(V.check_finite_positive("noise-multiplier", args.noise_multiplier))
    delta = float(V.check_open_unit("delta", args.delta))
    if args.epochs is not None:
        V.check_finite_positive("epochs", args.epochs)
    rows = _rows(sigma, args.dataset_size, args.batch_size, args.epochs, args.steps, delta)
    if getattr(args, "json", False):
        emit_json({"noise_multiplier": sigma, "dataset_size": args.dataset_size,
                   "batch_size": args.batch_size, "epochs": args.epochs, "steps": args.steps,
                   "delta": delta, "rows": rows})
    else:
        n_e = f"epochs={args.epochs:g}" if args.epochs is not None else f"steps={args.steps}"
        print(f"DP-SGD: noise_multiplier={sigma:g}, N={args.dataset_size}, B={args.batch_size}, {n_e}, delta={delta:g}")
        print_table(rows, _COLUMNS)
        print("note: without replacement uses replace-one neighbours; the other rows add/remove. "
              "A shuffled loader with fixed-size batches is none of these schemes (see docs/sampling.md).")
    missed = [r for r in rows if r.get("tolerance_met") is False]
    return EXIT_TOLERANCE_MISSED if missed else EXIT_OK


def _calibrate(args: argparse.Namespace) -> int:
    acc = args.accountant or ("rdp" if args.sampling == "without_replacement" else "exact")
    t0 = time.perf_counter()
    s = calibrate_noise(args.target_epsilon, args.delta, dataset_size=args.dataset_size,
                        batch_size=args.batch_size, epochs=args.epochs, steps=args.steps,
                        sampling=args.sampling, accountant=acc, rtol=args.rtol)
    dt = time.perf_counter() - t0
    if getattr(args, "json", False):
        emit_json({"noise_multiplier": s, "target_epsilon": args.target_epsilon, "delta": args.delta,
                   "sampling": args.sampling, "accountant": acc, "rtol": args.rtol,
                   "seconds": round(dt, 3)})
    else:
        print(f"noise_multiplier = {s:.6g}  ({args.sampling}, {acc} accountant: certified epsilon <= "
              f"{args.target_epsilon:g} at delta = {args.delta:g}; {s / (1 + args.rtol):.6g} would not meet it)")
    return EXIT_OK
