"""``dpbounds rdp``: eps(delta) of one DP-SGD configuration under three subsampling schemes."""
from __future__ import annotations

import argparse
import math
from typing import Any, Callable, Mapping

from dpbounds import RandomAllocationAccountant
from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds.cli._numbers import count, real
from dpbounds.cli._options import add_json_flag, add_sigma, flag, in_flags
from dpbounds.cli._output import EXIT_OK, Column, emit_json, print_table
from dpbounds.rdp import PoissonGaussian, RDPAccountant, SubsampledGaussianWOR
from dpbounds.sampling import poisson_steps, random_allocation_steps

__all__ = ["register"]

_DESCRIPTION = """\
eps(delta) of one DP-SGD configuration under three subsampling schemes:

  Poisson sampling          Renyi DP, add/remove neighbours, exact at fractional orders;
  sampling without          Renyi DP, replace-one neighbours ("Subsampled Renyi Differential
  replacement               Privacy and Analytical Moments Accountant"): the clipped sum's
                            sensitivity is 2C, so the mechanism's sigma is noise_multiplier / 2;
  random allocation         Theorem 3.1's closed form (the package's closed-form accountant): an
                            (eps = 0, delta) guarantee per epoch, composed over the epochs.

Steps: Poisson and without replacement take the rate q = B / N and floor(E * N / B) steps
(Opacus' int(E / q)); random allocation takes M = N // B steps per epoch, floor(E * M) in all,
a trailing partial epoch counted as a whole one by the closed form.  A row that cannot be
computed at these parameters says why; the other rows still answer.

For random allocation's exact epsilon use 'dpbounds dpsgd' or 'dpbounds epsilon'."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rdp",
        help="eps(delta) for DP-SGD under Poisson, without-replacement and random-allocation sampling",
        description=_DESCRIPTION,
        epilog="example:\n  dpbounds rdp --sigma 1.1 --dataset-size 60000 --batch-size 256 --epochs 10 --delta 1e-5")
    add_json_flag(p)
    add_sigma(p, "noise multiplier (noise std / clip norm C), e.g. 1.1")
    p.add_argument("--dataset-size", type=count, required=True, help="N, number of records, e.g. 60000 or 6e4")
    p.add_argument("--batch-size", type=count, required=True, help="expected batch size B (rate B/N), e.g. 256")
    p.add_argument("--epochs", type=real, default=1.0,
                   help="E passes over the data (Poisson and without replacement: floor(E N / B) steps; "
                        "random allocation: floor(E * (N // B)) steps, epochs of N // B rounds)")
    p.add_argument("--delta", type=real, default=1e-5, help="target delta")
    p.add_argument("--conversion", choices=("improved", "classic"), default="improved",
                   help="RDP -> (eps, delta) conversion")
    p.add_argument("--wor-bound", choices=("improved", "theorem9"), default="improved",
                   help="bound for sampling without replacement: the improved one or Theorem 9 of "
                        "\"Subsampled Renyi Differential Privacy and Analytical Moments Accountant\"")
    p.set_defaults(func=handler)


_NAMES = {"rounds_per_epoch": "M = --dataset-size // --batch-size", "rounds": "M = --dataset-size // --batch-size"}


def _random_allocation(args: argparse.Namespace, sigma: float, rounds: int, delta: float) -> dict[str, Any]:
    """The closed-form (Theorem 3.1) row: the accountant's composed delta, or why there is none."""
    steps: int | None = None
    try:
        steps = random_allocation_steps(args.epochs, rounds)
        # a trailing partial epoch is covered by the whole epoch (dropping steps is post-processing)
        acc = RandomAllocationAccountant(sigma, rounds, -(-steps // rounds), method="closed_form")
        d_total = acc.get_delta_bracket(0.0).upper
        why = ""
    except ValueError as exc:  # Theorem 3.1 does not apply here, or (sigma, M) is outside its range
        d_total, why = math.nan, in_flags(str(exc), args, _NAMES)
        if "does not apply" in why:
            why = (f"Theorem 3.1 does not apply at sigma = {sigma:g}, M = {rounds} (needs M >= 3, "
                   "sigma >= sqrt(3 / ln M) and its condition (2))")
    ok = d_total <= delta  # False for NaN
    return {"scheme": "random-allocation", "neighbouring": "add/remove", "rate": 1.0 / rounds if rounds else math.nan,
            "steps": steps, "epsilon": 0.0 if ok else math.inf, "delta": d_total, "order": None,
            "method": "Theorem 3.1 bound (coef exact), (0, delta)-DP per epoch composed over epochs"
                      + ("" if not why else "; NOT AVAILABLE here (see the reason)"),
            "reason": why}


def _rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    sigma = float(V.check_finite_positive("sigma", args.sigma))
    V.check_finite_positive("epochs", args.epochs)
    delta = float(V.check_open_unit("delta", args.delta))
    n, b = args.dataset_size, args.batch_size
    if b > n:
        raise DPBoundsError(f"{flag(args, 'batch_size')} must be <= {flag(args, 'dataset_size')}, got {b} > {n}")
    rate = b / n
    rows: list[dict[str, Any]] = []
    mechanisms: list[tuple[str, Callable[[], Any], str]] = [
        ("poisson", lambda: PoissonGaussian(sigma, rate, "exact"), "add/remove"),
        ("without-replacement", lambda: SubsampledGaussianWOR(sigma / 2.0, rate, args.wor_bound),
         "replace-one (sensitivity 2C)"),
    ]
    for name, mech, rel in mechanisms:
        method = f"RDP ({'WBK19 ' + args.wor_bound if name != 'poisson' else 'MTZ exact'}, {args.conversion} conversion)"
        steps: int | None = None
        try:
            steps = poisson_steps(args.epochs, rate)
            acc = RDPAccountant(conversion=args.conversion).compose(mech(), steps)
            eps, order = acc.get_epsilon(delta, return_order=True)  # type: ignore[misc]
            why = ""
        except (ValueError, ArithmeticError) as exc:   # this row cannot answer here: say why
            eps, order, why = math.inf, None, in_flags(str(exc), args, _NAMES)
            method += "; NOT AVAILABLE here (see the reason)"
        rows.append({"scheme": name, "neighbouring": rel, "rate": rate, "steps": steps,
                     "epsilon": eps, "delta": delta, "order": order, "method": method, "reason": why})
    rows.append(_random_allocation(args, sigma, n // b, delta))
    return rows


def _eps(r: Mapping[str, Any]) -> str:
    return "inf" if math.isinf(r["epsilon"]) else f"{r['epsilon']:.6g}"


def _delta(r: Mapping[str, Any]) -> str:
    return "n/a" if math.isnan(r["delta"]) else f"{r['delta']:.4g}"


_COLUMNS = (
    Column("scheme", lambda r: r["scheme"], 20, "<"),
    Column("neighbouring", lambda r: r["neighbouring"], 30, "<"),
    Column("rate", lambda r: f"{r['rate']:.4g}", 10),
    Column("steps", lambda r: "-" if r["steps"] is None else f"{r['steps']:d}", 9),
    Column("epsilon", _eps, 12),
    Column("delta", _delta, 11),
    Column("method", lambda r: r["method"], 0, "<", gap=2),
)


def handler(args: argparse.Namespace) -> int:
    rows = _rows(args)
    if getattr(args, "json", False):
        emit_json(rows)
        return EXIT_OK
    print(f"DP-SGD: sigma={args.sigma:g}, N={args.dataset_size:g}, B={args.batch_size:g}, epochs={args.epochs:g}, "
          f"target delta={args.delta:g}")
    print_table(rows, _COLUMNS)
    for r in rows[:-1]:
        if r["reason"]:
            print(f"{r['scheme']}: not available here: {r['reason']}")
    ra = rows[-1]
    if ra["reason"]:
        print(f"random allocation: no closed-form guarantee here: {ra['reason']}")
    elif math.isinf(ra["epsilon"]):
        print(f"random allocation: Theorem 3.1 certifies (0, {ra['delta']:.4g})-DP, which does not meet delta={args.delta:g}.")
    else:
        print(f"random allocation: Theorem 3.1 certifies (0, {ra['delta']:.4g})-DP <= target delta, so eps = 0 at delta={args.delta:g}.")
    if ra["epsilon"] != 0.0:
        if args.epochs == int(args.epochs):
            print(f"random allocation, exact accountant: dpbounds epsilon --sigma {args.sigma:g} --rounds "
                  f"{args.dataset_size // args.batch_size} --epochs {int(args.epochs)} --delta {args.delta:g}")
        else:   # a partial epoch: the exact accountant through dpsgd (steps = floor(E M))
            print(f"random allocation, exact accountant: dpbounds dpsgd --sigma {args.sigma:g} --dataset-size "
                  f"{args.dataset_size} --batch-size {args.batch_size} --epochs {args.epochs:g} "
                  f"--delta {args.delta:g}")
    print("note: WOR uses replace-one neighbours (sigma/2 per replace-one sensitivity); Poisson and random allocation use add/remove.")
    return EXIT_OK
