"""The package's error and warning vocabulary, and the one table of status bits.

* :class:`DPBoundsError` -- the one error type (a ``ValueError``, so ``except ValueError``
  keeps working): bad arguments, and results that cannot be certified.
* :class:`PrecisionWarning` -- the one warning class: a valid result less precise than asked.
* :func:`warn` -- how the package issues every warning: attributed to the caller's line, the
  first frame outside dpbounds (never to a line inside the package).
* :data:`STATUS_BITS` -- the meaning of every bit a compiled status output can set.  The C
  core reads the same table (``csrc/dpb_status.h`` is generated from it by
  ``tools/gen_ufuncs.py``), so a bit means one thing everywhere; :func:`status_reasons`
  and :func:`describe_status` are the only decoders (pyerfa's ``check_errwarn`` style:
  "N of M elements ...").
"""
from __future__ import annotations

import contextlib
import os
import sys
import warnings
from dataclasses import dataclass
from types import FrameType
from typing import Any, Iterator

import numpy as np

__all__ = ["DPBoundsError", "PrecisionWarning", "NoAnswer", "Status", "STATUS_BITS", "status_reasons", "describe_status",
           "warn", "numpy_warnings_at_caller"]


class DPBoundsError(ValueError):
    """An argument is outside its domain, or a requested guarantee cannot be certified.

    The message names the parameter and the rule it breaks (for arrays: how many elements
    break it and where the first one is), or says why no finite bound exists and what would
    give one.  A subclass of ``ValueError``.
    """


DPBoundsError.__module__ = "dpbounds"  # tracebacks show the public name, dpbounds.DPBoundsError


class NoAnswer(DPBoundsError):
    """The arguments are valid, but the question has no answer at them (a :class:`DPBoundsError`).

    No noise multiplier up to the accountant's largest meets the target epsilon (the message
    says the best epsilon reached), not even one epoch does, Theorem 3.1 does not apply at the
    (sigma, M) asked about, ...  The command line exits with status 1 for it (no answer), not 2
    (bad input).
    """


class PrecisionWarning(UserWarning):
    """A result is valid but less precise than requested.

    Raised as a warning (never silently) when, for example, an exact accountant's certified
    bracket is wider than its ``tolerance`` because the lattice that would meet it needs more
    memory than the cap.  The result object's ``tolerance_met`` field says the same.  Turn it
    into an error with ``warnings.simplefilter("error", dpbounds.PrecisionWarning)``.
    """


@dataclass(frozen=True)
class Status:
    """One bit of the shared status vocabulary (C enum ``DPB_STATUS_<name>``)."""

    name: str
    bit: int
    reason: str


# Bit 1 always means "an argument is outside its domain"; the others name the reason a
# certified value is not returned.  Append only: the values are part of the raw ufuncs' API.
STATUS_BITS: tuple[Status, ...] = (
    Status("BAD_INPUT", 1, "an argument is outside its domain"),
    Status("ROUNDS_BELOW_3", 2, "M < 3"),
    Status("SIGMA_BELOW_EDGE", 4, "sigma < sqrt(3/ln M)"),
    Status("CONDITION2", 8, "condition (2) fails: B*coef*mu + delta > 1/2 - Phi(-kappa)"),
    Status("DELTA_BELOW_MIN", 16, "target delta < delta_min"),
    Status("NOT_MONOTONE_AT_0", 32, "the Edgeworth polynomial is not increasing at 0"),
    Status("OUT_OF_RANGE", 64, "Phi^{-1}(1 - a) lies outside the monotone range of the Edgeworth polynomial"),
)


def status_reasons(bits: int) -> list[str]:
    """The reasons encoded in one status value, in bit order ([] for 0)."""
    return [s.reason for s in STATUS_BITS if int(bits) & s.bit]


def describe_status(status: Any) -> str:
    """Summarise a status array: "N of M elements: reason (count); ..." ("" if all are 0)."""
    st = np.asarray(status).astype(np.int64, copy=False)
    bad = int(np.count_nonzero(st))
    if bad == 0:
        return ""
    parts = [f"{s.reason} ({int(np.count_nonzero(st & s.bit))})" for s in STATUS_BITS if (st & s.bit).any()]
    return f"{bad} of {st.size} elements: " + "; ".join(parts)


#: Every module of the package has a ``co_filename`` under this folder (the same import path
#: produced both strings, so a plain prefix test is exact).
_PACKAGE_PREFIX = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PACKAGE_PREFIX_RAW = os.path.dirname(__file__) + os.sep


def _inside_package(frame: FrameType) -> bool:
    name = frame.f_code.co_filename
    return name.startswith(_PACKAGE_PREFIX) or name.startswith(_PACKAGE_PREFIX_RAW)


def _internal_importlib(frame: FrameType) -> bool:
    # the frames the warnings machinery itself skips when it counts stacklevel
    name = frame.f_code.co_filename
    return "importlib" in name and "_bootstrap" in name


def warn(message: str, category: type[Warning]) -> None:
    """Issue ``message`` as a ``category`` warning attributed to the caller's line.

    The line shown (and matched by ``warnings.filterwarnings(module=...)``) is that of the
    first frame outside the dpbounds package, however deep in the package the warning arises,
    so a user sees where *their* code asked for the result.  The ``stacklevel`` is counted as
    the warnings machinery counts it (importlib's internal frames are skipped), so the same
    frame is found on every Python version.  When no frame outside the package exists (the
    command line run as ``python -m dpbounds``) the outermost frame is used.
    """
    frame: FrameType | None = sys._getframe(1)   # the caller of warn(), inside the package
    level = 1
    while frame is not None and _inside_package(frame):
        frame = frame.f_back
        while frame is not None and _internal_importlib(frame):
            frame = frame.f_back
        level += 1
    if frame is None:
        level -= 1   # every frame is the package's: the outermost one
    warnings.warn(message, category, stacklevel=level + 1)   # + 1: this function's own frame


def _numpy_callback(name: str) -> Any:
    def callback(kind: str, flag: int) -> None:
        warn(f"{kind} encountered in {name}", RuntimeWarning)
    return callback


@contextlib.contextmanager
def numpy_warnings_at_caller(name: str) -> Iterator[None]:
    """numpy's floating-point warnings ("overflow encountered in ...") raised inside the block are
    issued by :func:`warn`, at the caller's line, instead of at the package line that called the
    ufunc.  Every other floating-point policy the caller set with ``np.errstate`` (ignore, raise,
    print, log, call) is kept as it is."""
    current = np.geterr()
    if "warn" not in current.values() or "call" in current.values():
        yield   # nothing to redirect, or the caller's own callback is in charge
        return
    modes: dict[str, Any] = {k: ("call" if v == "warn" else v) for k, v in current.items()}
    with np.errstate(call=_numpy_callback(name), **modes):
        yield
