"""``dpbounds plan``: the noise multiplier and rounds per epoch with the least noise for a target."""
from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from dpbounds._errors import DPBoundsError
from dpbounds.cli._numbers import count, real
from dpbounds.cli._options import add_coefficient, add_json_flag, add_sigma, flag
from dpbounds.cli._output import EXIT_NOT_VALID, EXIT_OK, emit_json
from dpbounds.planner import plan

__all__ = ["parse_sigma", "register"]

_DESCRIPTION = """\
The inverse problem of Section 5 of "Trade-off Functions for DP-SGD with Subsampling based on
Random Allocation: Tight Upper and Lower Bounds": given the dataset size N, the epochs E, the
clipping norm C and a privacy target, the front over the noise multiplier sigma -- for each
sigma the smallest number of rounds per epoch M <= N that meets the target, the expected batch
N / M and the noise C sigma M / N on the averaged clipped gradient -- and the sigma with the
least noise (or, with --objective batch_size, the largest batch), refined between grid points.

Targets: by default f(a) >= 1 - a - delta over the epochs by Theorem 3.1 (--coefficient exact is
the package default; the paper's Table 1 uses --coefficient simplified, which gives its
M = 1140369 at sigma = 1, delta = 0.01). With --accountant exact --epsilon EPS: (EPS, delta)-DP
by the exact random-allocation accountant (EPS = 0 is Theorem 3.1's form f >= 1 - a - delta);
the table then shows the M Theorem 3.1 needs at the same delta and how many times larger a
batch the exact accountant allows. The exact accountant takes about a second per sigma (up to a
minute for the default grid)."""


def parse_sigma(text: str | None) -> Any:
    """``--sigma``: None (the default grid), ``1`` / ``0.5,1,2`` (a list) or ``START:STOP:NUM[:log|lin]``."""
    if text is None:
        return None
    if ":" in text:
        parts = text.split(":")
        scale = parts.pop() if len(parts) == 4 else "log"
        if len(parts) != 3 or scale not in ("log", "lin"):
            raise DPBoundsError(f"--sigma must be a list such as 0.5,1,2 or a range START:STOP:NUM[:log|lin], got {text!r}")
        try:
            start, stop = float(real(parts[0])), float(real(parts[1]))
        except argparse.ArgumentTypeError as exc:
            raise DPBoundsError(f"--sigma {text!r}: {exc}") from None
        try:
            num = count(parts[2])
        except argparse.ArgumentTypeError as exc:
            raise DPBoundsError(f"--sigma {text!r}: NUM {exc}") from None
        from dpbounds.planner import MAX_SIGMA_GRID
        if num > MAX_SIGMA_GRID:   # before the grid is allocated
            raise DPBoundsError(f"--sigma {text!r}: NUM must be at most {MAX_SIGMA_GRID:,} (each sigma is a search "
                                "over the rounds)")
        if scale == "log":
            if not (start > 0 and stop > 0):
                raise DPBoundsError(f"--sigma {text!r}: a log range needs START and STOP > 0")
            return np.geomspace(start, stop, num)
        return np.linspace(start, stop, num)
    try:
        return [real(t) for t in text.split(",")]
    except argparse.ArgumentTypeError as exc:
        raise DPBoundsError(f"--sigma {text!r}: {exc}") from None


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "plan", help="plan sigma and the rounds per epoch M with the least noise for a privacy target",
        description=_DESCRIPTION,
        epilog="example:\n"
               "  dpbounds plan --dataset-size 1.14e7 --delta 0.01 --epochs 1 --coefficient simplified\n"
               "  dpbounds plan --dataset-size 1.14e7 --delta 0.01 --accountant exact --epsilon 0 --sigma 0.5,1,2\n"
               "  dpbounds plan --dataset-size 1e6 --delta 1e-3 --epochs 4 --sigma 0.5:4:30:log --json")
    add_json_flag(p)
    p.add_argument("--dataset-size", type=count, required=True, help="N, number of examples, e.g. 1.14e7")
    p.add_argument("--delta", type=real, required=True, help="target delta, the total over the epochs, e.g. 0.01")
    p.add_argument("--epsilon", type=real, default=None,
                   help="target epsilon >= 0 (only with --accountant exact, where it is required)")
    p.add_argument("--epochs", type=count, default=1, help="number of epochs E")
    p.add_argument("--clip-norm", type=real, default=1.0, help="clipping norm C (scales the noise)")
    p.add_argument("--accountant", choices=("theorem31", "exact"), default="theorem31",
                   help="how the target is checked: Theorem 3.1's closed form, or the exact random-allocation "
                        "accountant")
    add_coefficient(p)
    add_sigma(p, required=False, default=None, type=None, metavar="GRID", help="the sigma grid: a list (0.5,1,2) or a range START:STOP:NUM[:log|lin]; default a log grid "
                        "from 0.316 to 19.95 that contains 1")
    p.add_argument("--objective", choices=("noise", "batch_size"), default="noise",
                   help="minimise the noise C sigma M / N, or maximise the batch N / M")
    p.add_argument("--rtol", type=real, default=1e-4, help="relative resolution of the optimum's sigma")
    p.add_argument("--tolerance", type=real, default=2e-3,
                   help="relative width of the exact accountant's brackets (their upper end decides)")
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    try:
        grid = parse_sigma(args.sigma)
    except DPBoundsError as exc:   # name the option as typed (--sigma or --noise-multiplier)
        raise DPBoundsError(str(exc).replace("--sigma", flag(args, "sigma"), 1)) from None
    result = plan(args.dataset_size, delta=args.delta, epsilon=args.epsilon, epochs=args.epochs,
                  clip_norm=args.clip_norm, accountant=args.accountant, coefficient=args.coefficient,
                  sigma=grid, objective=args.objective, rtol=args.rtol,
                  tolerance=args.tolerance)
    if getattr(args, "json", False):
        emit_json(result.to_dict())
    else:
        print(result.table())
    return EXIT_OK if result.optimum is not None else EXIT_NOT_VALID   # no sigma of the grid admits an M
