"""The command line's number parsers: every numeric option goes through :func:`real` or :func:`whole`.

The parsers only turn text into numbers.  Whether a number is allowed (sigma > 0, delta in
(0, 1), rounds >= 3, ...) is the API's validators' business, so a negative or zero value is
passed on and refused there with a message that names the parameter.  What the parsers refuse
is text that is not a number of the right kind: ``abc``, ``1.5`` where a count is wanted, and
literals such as ``1e400`` that overflow a double (otherwise they would reach the API as inf,
or crash ``int()``).
"""
from __future__ import annotations

import argparse
import math
import re

__all__ = ["NEGATIVE_NUMBER", "real", "whole"]

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
    """A whole number written as ``60000``, ``6e4`` or ``6.0e4`` (not ``60000.5``).

    Zero and negative whole numbers are passed on: the API's validators say what the minimum is.
    """
    value = _float(text)
    if not math.isfinite(value) or value != math.floor(value):
        raise argparse.ArgumentTypeError(f"must be a whole number (such as 100 or 1e4), got {text!r}")
    if abs(value) > _WHOLE_MAX:
        raise argparse.ArgumentTypeError(f"{text!r} is too large: whole numbers must be <= 2^53")
    return int(value)
