"""Options that several commands share, declared once so their names, help and defaults agree."""
from __future__ import annotations

import argparse

__all__ = ["COEFFICIENTS", "add_coefficient", "add_json_flag"]

#: Berry-Esseen coefficient of Theorem 3.1; the first one is the command line's default.
COEFFICIENTS = ("exact", "simplified")


def add_json_flag(p: argparse.ArgumentParser) -> None:
    """Accept ``--json`` after the command too (``dpbounds --json COMMAND`` also works)."""
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="machine-readable JSON output (non-finite numbers as null)")


def add_coefficient(p: argparse.ArgumentParser) -> None:
    """``--coefficient``: which Berry-Esseen coefficient Theorem 3.1 uses."""
    p.add_argument("--coefficient", choices=COEFFICIENTS, default=COEFFICIENTS[0],
                   help="Berry-Esseen coefficient of Theorem 3.1: 'exact' uses the exact third absolute "
                        "moment (smaller and equally valid); 'simplified' is the paper's statement, "
                        "coefficient (w^3 + 4)/(w - 1)^2")
