"""The command line's number parsers: every numeric option goes through :func:`real`, :func:`count` or :func:`whole`.

The parsers turn text into numbers.  Whether a real number is allowed (sigma > 0, delta in
(0, 1), ...) and a count's own minimum (rounds >= 3, points >= 2, ...) are the API's
validators' business: such values are passed on and refused there with a message that names
the parameter.  What the parsers refuse, with argparse's one line naming the option, is text
that is not a number of the right kind: ``abc``; for a count ``1.5``, ``inf``, ``nan``, a
negative number, and (for :func:`count`, the options that count something that must happen
at least once) zero -- a count is never rounded; and literals such as ``1e400`` that overflow
a double (otherwise they would reach the API as inf, or crash ``int()``).  Counts written in
float notation (``1e6``, ``1.14e7``) are integer-valued and accepted.
"""
from __future__ import annotations

import argparse
import math
import re

__all__ = ["NEGATIVE_NUMBER", "real", "whole", "count"]

#: What argparse must read as a (negative) number rather than an option.  argparse's own pattern
#: (Python < 3.13) knows only ``-1`` and ``-.5``, so ``--delta -1e-5`` failed with "expected one
#: argument" instead of reaching the validator; this one adds exponents and -inf / -nan.
NEGATIVE_NUMBER = re.compile(
    r"^-(\d[\d_]*\.?\d*|\.\d+)([eE][+-]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)

#: Largest whole number a count may be: beyond 2^53 doubles no longer hold every integer.
_WHOLE_MAX = 2 ** 53


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if math.isinf(value) and "inf" not in text.lower():
        # a finite-looking literal such as 1e400: refuse it here rather than compute with inf
        raise argparse.ArgumentTypeError(f"{text!r} is too large: it overflows a double (max ~1.8e308)")
    return value


def real(text: str) -> float:
    """A real number: ``1.1``, ``1e-5``, ``-1`` (refused later by the validator), ``inf``, ``nan``."""
    return _float(text)


def whole(text: str) -> int:
    """A whole number >= 0 written as ``60000``, ``6e4`` or ``6.0e4`` (not ``60000.5``, ``-1``, ``inf``).

    For counts where 0 means something (``--optimal-points 0``: none); see :func:`count`.
    """
    return _integer(text, 0)


def count(text: str) -> int:
    """A whole number >= 1 (a count of epochs, rounds, examples, points, workers, ...), as :func:`whole`."""
    return _integer(text, 1)


def _integer(text: str, minimum: int) -> int:
    value = _float(text)
    if not math.isfinite(value) or value != math.floor(value) or value < minimum:
        raise argparse.ArgumentTypeError(
            f"must be a whole number >= {minimum} (such as 100 or 1e4), got {text!r}")
    if value > _WHOLE_MAX:
        raise argparse.ArgumentTypeError(f"{text!r} is too large: whole numbers must be <= 2^53")
    return int(value)
