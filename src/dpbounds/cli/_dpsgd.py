"""``dpbounds dpsgd`` (what epsilon do I get?) and ``dpbounds calibrate`` (what noise do I need?)."""
from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from typing import Any, Callable, Mapping

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
from dpbounds._errors import DPBoundsError, NoAnswer
from dpbounds.cli._numbers import count, real
from dpbounds.cli._options import add_json_flag, add_sigma, flag, in_flags
from dpbounds.cli._output import EXIT_NOT_VALID, EXIT_OK, EXIT_TOLERANCE_MISSED, Column, emit_json, print_table
from dpbounds.rdp import PoissonGaussian, RDPAccountant, SubsampledGaussianWOR
from dpbounds.sampling import poisson_steps, random_allocation_steps

__all__ = ["register"]


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset-size", type=count, required=True, metavar="N",
                   help="number of training examples N, e.g. 60000 or 6e4")
    p.add_argument("--batch-size", type=count, required=True, metavar="B",
                   help="(expected) batch size B, e.g. 256")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--epochs", type=real, metavar="E",
                   help="passes over the data, e.g. 10: floor(E * (N // B)) steps of random allocation, "
                        "floor(E * N / B) steps of Poisson sampling and sampling without replacement")
    g.add_argument("--steps", type=count, metavar="T", help="training steps instead of epochs, e.g. 2340")
    p.add_argument("--delta", type=real, default=1e-5, help="target delta")
    add_json_flag(p)


_STEPS_RULE = ("Steps: random allocation takes M = N // B steps per epoch (each example in exactly one), "
               "floor(E * M) in all; Poisson sampling and sampling without replacement take the rate "
               "q = B / N and floor(E * N / B) steps (Opacus' int(E / q)); --steps T gives every scheme T.")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "dpsgd", help="epsilon of one DP-SGD run under every sampling scheme (start here)",
        description="epsilon(delta) of one DP-SGD configuration: random allocation (exact, certified),\n"
                    "Poisson (exact PLD and RDP), sampling without replacement (RDP), Theorem 3.1's\n"
                    "closed form and the Gaussian-DP approximation, with the steps each scheme counts.\n"
                    "A row whose method cannot answer at these parameters says why, naming the option;\n"
                    "the other rows still answer.\n\n" + _STEPS_RULE,
        epilog="example:\n  dpbounds dpsgd --dataset-size 60000 --batch-size 256 --epochs 10 "
               "--sigma 1.1 --delta 1e-5")
    add_sigma(p, "noise multiplier: noise std / clipping norm, e.g. 1.1")
    _common(p)
    p.set_defaults(func=_dpsgd)

    c = sub.add_parser(
        "calibrate", help="the smallest noise multiplier that meets a target epsilon",
        description="The smallest noise multiplier sigma whose certified epsilon(delta) meets the target\n"
                    "(certified on both sides).  When no sigma up to the accountant's largest meets it,\n"
                    "the smallest epsilon reachable is printed and the exit status is 1.\n\n" + _STEPS_RULE,
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


class _Rows:
    """The table's rows; each method answers on its own or gives the reason it cannot."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rows: list[dict[str, Any]] = []
        # the API's parameter names as this command line spells them (M is derived, not an option)
        self.names = {"rounds_per_epoch": "M = --dataset-size // --batch-size",
                      "rounds": "M = --dataset-size // --batch-size",
                      "sample_rate": "the rate --batch-size / --dataset-size"}

    def reason(self, exc: Exception) -> str:
        return in_flags(str(exc), self.args, self.names)

    def add(self, scheme: str, neigh: str, rate: float, nsteps: int | None, method: str,
            compute: Callable[[], tuple[float | None, float | None, dict[str, Any]]]) -> None:
        try:
            lo, hi, extra = compute()
            why = ""
        except (ValueError, ArithmeticError) as exc:   # this method cannot answer here: say why
            lo, hi, extra, why = None, None, {}, self.reason(exc)
        self.rows.append({"scheme": scheme, "neighbouring": neigh, "sample_rate": rate, "steps": nsteps,
                          "epsilon_lower": lo, "epsilon_upper": hi, "method": extra.pop("method", method),
                          **extra, "reason": why})


def _steps(compute: Callable[[], int]) -> tuple[int | None, str]:
    try:
        return compute(), ""
    except (ValueError, ArithmeticError) as exc:
        return None, str(exc)


def _rows(args: argparse.Namespace, sigma: float, N: int, B: int, epochs: float | None, steps: int | None,
          delta: float) -> list[dict[str, Any]]:
    if B > N:
        raise DPBoundsError(f"{flag(args, 'batch_size')} must be <= {flag(args, 'dataset_size')}, got {B} > {N}")
    M = N // B
    q = B / N
    table = _Rows(args)
    E = 0.0 if epochs is None else epochs   # exactly one of epochs and steps is given
    ra_steps, ra_why = _steps(lambda: steps if steps is not None else random_allocation_steps(E, M))
    po_steps, po_why = _steps(lambda: steps if steps is not None else poisson_steps(E, q))

    def need(nsteps: int | None, why: str) -> int:
        if nsteps is None:
            raise DPBoundsError(why)
        return nsteps

    def ra_exact() -> tuple[float | None, float | None, dict[str, Any]]:
        r = RandomAllocationAccountant(sigma, M, steps=need(ra_steps, ra_why)).get_epsilon_bracket(delta)
        return r.lower, r.upper, {"tolerance_met": r.tolerance_met}

    def po_exact() -> tuple[float | None, float | None, dict[str, Any]]:
        r = PoissonAccountant(sigma, q, need(po_steps, po_why)).get_epsilon_bracket(delta)
        return r.lower, r.upper, {"tolerance_met": r.tolerance_met}

    def po_rdp() -> tuple[float | None, float | None, dict[str, Any]]:
        acc = RDPAccountant().compose(PoissonGaussian(sigma, q), need(po_steps, po_why))
        return None, acc.get_epsilon_bracket(delta).upper, {}

    def wor_rdp() -> tuple[float | None, float | None, dict[str, Any]]:
        acc = RDPAccountant().compose(SubsampledGaussianWOR(sigma / 2.0, q), need(po_steps, po_why))
        return None, acc.get_epsilon_bracket(delta).upper, {}

    def closed_form() -> tuple[float | None, float | None, dict[str, Any]]:
        T = need(ra_steps, ra_why)
        eps, method = _closed_form(sigma, M, -(-T // M), delta, partial=T % M != 0)
        return None, eps, {"method": method}

    def ra_gdp() -> tuple[float | None, float | None, dict[str, Any]]:
        mu = float(gdp_mu_random_allocation(sigma, float(M), need(ra_steps, ra_why) / M))
        return None, float(gdp_epsilon(delta, mu)), {"method": f"Gaussian-DP approximation, mu = {mu:.4g} (NOT a bound)"}

    def po_gdp() -> tuple[float | None, float | None, dict[str, Any]]:
        mu = float(gdp_mu_poisson(sigma, q, float(need(po_steps, po_why))))
        return None, float(gdp_epsilon(delta, mu)), {"method": f"Gaussian-DP CLT approximation, mu = {mu:.4g} (NOT a bound)"}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrecisionWarning)
        table.add("random allocation", "add/remove", 1.0 / M if M else math.nan, ra_steps,
                  f"exact, certified bracket (M = N // B = {M} steps per epoch)", ra_exact)
        table.add("Poisson", "add/remove", q, po_steps, "exact PLD, certified bracket (steps = floor(E N / B))",
                  po_exact)
    table.add("Poisson", "add/remove", q, po_steps, "RDP upper bound (improved conversion)", po_rdp)
    table.add("without replacement", "replace-one (sensitivity 2C: RDP at sigma/2)", q, po_steps,
              "RDP upper bound (improved bound, improved conversion)", wor_rdp)
    table.add("random allocation", "add/remove", 1.0 / M if M else math.nan, ra_steps,
              "Theorem 3.1 closed form", closed_form)
    table.add("random allocation", "add/remove", 1.0 / M if M else math.nan, ra_steps,
              "Gaussian-DP approximation (NOT a bound)", ra_gdp)
    table.add("Poisson", "add/remove", q, po_steps, "Gaussian-DP CLT approximation (NOT a bound)", po_gdp)
    for w in caught:
        sys.stderr.write(f"dpbounds: warning: {w.message}\n")
    return table.rows


def _closed_form(sigma: float, M: int, epochs: int, delta: float, partial: bool = False) -> tuple[float | None, str]:
    """Theorem 3.1's (0, delta)-DP over whole epochs, from the closed-form accountant: (epsilon, method text).

    A trailing partial epoch is covered by the whole epoch it is part of (dropping the epoch's
    remaining steps is post-processing), so ``epochs`` is the count rounded up."""
    over = f"{epochs} epochs" + (" (the partial epoch counted whole)" if partial else "")
    try:
        dE = RandomAllocationAccountant(sigma, M, epochs, method="closed_form").get_delta_bracket(0.0).upper
    except ValueError:  # the theorem does not apply (or (sigma, M) is outside its range)
        return None, (f"Theorem 3.1 closed form: does not apply at sigma = {sigma:g}, M = {M} "
                      "(needs M >= 3, sigma >= sqrt(3 / ln M) and its condition (2))")
    if dE <= delta:
        return 0.0, f"Theorem 3.1 closed form: (0, {dE:.3g})-DP over {over}"
    return None, (f"Theorem 3.1 closed form: (0, {dE:.3g})-DP over {over}"
                  f" -- no epsilon at delta = {delta:g} (its delta is larger)")


def _fmt(v: float | None) -> str:
    return "-" if v is None else ("inf" if not math.isfinite(v) else f"{v:.5g}")


def _eps(r: Mapping[str, Any]) -> str:
    lo, hi = r["epsilon_lower"], r["epsilon_upper"]
    return f"[{_fmt(lo)}, {_fmt(hi)}]" if lo is not None else _fmt(hi)


def _method(r: Mapping[str, Any]) -> str:
    return str(r["method"]) + (f": NOT AVAILABLE: {r['reason']}" if r.get("reason") else "")


_COLUMNS = (
    Column("scheme", lambda r: r["scheme"], 20, "<"),
    Column("rate", lambda r: f"{r['sample_rate']:.5g}", 10),
    Column("steps", lambda r: "-" if r["steps"] is None else str(r["steps"]), 7),
    Column("epsilon", _eps, 21),
    Column("method", _method, 0, "<", gap=2),
)


def _dpsgd(args: argparse.Namespace) -> int:
    # what no row can be computed without: refused for the whole command (exit 2)
    sigma = float(V.check_finite_positive("sigma", args.sigma))
    delta = float(V.check_open_unit("delta", args.delta))
    if args.epochs is not None:
        V.check_finite_positive("epochs", args.epochs)
    rows = _rows(args, sigma, args.dataset_size, args.batch_size, args.epochs, args.steps, delta)
    if getattr(args, "json", False):
        emit_json({"sigma": sigma, "dataset_size": args.dataset_size,
                   "batch_size": args.batch_size, "epochs": args.epochs, "steps": args.steps,
                   "delta": delta, "rows": rows})
    else:
        n_e = f"epochs={args.epochs:g}" if args.epochs is not None else f"steps={args.steps}"
        print(f"DP-SGD: sigma={sigma:g}, N={args.dataset_size}, B={args.batch_size}, {n_e}, delta={delta:g}")
        print_table(rows, _COLUMNS)
        print("note: without replacement uses replace-one neighbours; the other rows add/remove. "
              "A shuffled loader with fixed-size batches is none of these schemes (see docs/sampling.md).")
    if all(r["epsilon_upper"] is None and r["reason"] for r in rows):
        return EXIT_NOT_VALID    # no method could answer: nothing to use
    missed = [r for r in rows if r.get("tolerance_met") is False]
    return EXIT_TOLERANCE_MISSED if missed else EXIT_OK


def _calibrate(args: argparse.Namespace) -> int:
    acc = args.accountant or ("rdp" if args.sampling == "without_replacement" else "exact")
    t0 = time.perf_counter()
    try:
        s = calibrate_noise(args.target_epsilon, args.delta, dataset_size=args.dataset_size,
                            batch_size=args.batch_size, epochs=args.epochs, steps=args.steps,
                            sampling=args.sampling, accountant=acc, rtol=args.rtol)
    except NoAnswer as exc:   # valid input, no answer: say the best reached, exit 1
        if not getattr(args, "json", False):
            raise
        emit_json({"sigma": None, "reason": str(exc), "target_epsilon": args.target_epsilon, "delta": args.delta,
                   "sampling": args.sampling, "accountant": acc, "rtol": args.rtol})
        return EXIT_NOT_VALID
    dt = time.perf_counter() - t0
    if getattr(args, "json", False):
        emit_json({"sigma": s, "target_epsilon": args.target_epsilon, "delta": args.delta,
                   "sampling": args.sampling, "accountant": acc, "rtol": args.rtol,
                   "seconds": round(dt, 3)})
    else:
        print(f"sigma = {s:.6g}  ({args.sampling}, {acc} accountant: certified epsilon <= "
              f"{args.target_epsilon:g} at delta = {args.delta:g}; {s / (1 + args.rtol):.6g} would not meet it)")
    return EXIT_OK
