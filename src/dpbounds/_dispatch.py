"""Call a ufunc of the declaration table with the validation the table declares.

The validated wrappers of the public API call :func:`call` instead of checking their
arguments by hand: each argument is checked against the constraint its ufunc declares in
:mod:`dpbounds._ufunc_table` (one vocabulary, :class:`dpbounds._validation.Constraint`),
the arrays are broadcast with an error naming the mismatched parameters, and a Python
float comes back for scalar input.
"""
from __future__ import annotations

from typing import Any

from dpbounds import _ufuncs  # type: ignore[attr-defined, unused-ignore]
from dpbounds._errors import numpy_warnings_at_caller
from dpbounds._validation import Constraint, broadcast, check_constraint, scalar_or_array

__all__ = ["call"]


#: The ufuncs that can raise a floating-point flag at all: only a genuine overflow, where the true
#: value is finite but beyond the double range (tests/contract/test_fp_flags.py checks every other ufunc
#: raises none).  numpy's warning for it is issued at the caller's line, not this module's.
MAY_OVERFLOW = frozenset({"min_dataset_size", "rdp_laplace"})

_Plan = tuple[Any, tuple[tuple[str, Constraint], ...], int]
_PLANS: dict[str, _Plan] = {}


def _plan(name: str) -> _Plan:
    # a deterministic function of the (immutable) table: memoising it cannot change an answer
    plan = _PLANS.get(name)
    if plan is None:
        # the table is imported on first use: `import dpbounds` need not build 62 declarations
        from dpbounds._ufunc_table import by_name
        spec = by_name(name)
        # the stricter rule of the Python API where an argument declares one (Arg.validated)
        plan = (getattr(_ufuncs, name), tuple((a.name, a.validated or a.constraint) for a in spec.args), spec.nout)
        _PLANS[name] = plan
    return plan


def call(name: str, **args: Any) -> Any:
    """Validate ``args`` against the declaration of ufunc ``name``, then evaluate it.

    The keyword names must be exactly the declared argument names (in any order).  The
    ufunc broadcasts; only when the shapes do not broadcast is the error rebuilt so that it
    names the parameters and their shapes.
    """
    f, spec_args, nout = _plan(name)
    if len(args) != len(spec_args) or any(n not in args for n, _ in spec_args):
        raise TypeError(f"{name} takes {[n for n, _ in spec_args]}, got {sorted(args)}")
    arrays = [check_constraint(n, args[n], c) for n, c in spec_args]
    try:
        if name in MAY_OVERFLOW:
            with numpy_warnings_at_caller(name):
                result = f(*arrays)
        else:
            result = f(*arrays)
    except ValueError:
        broadcast(**{n: a for (n, _), a in zip(spec_args, arrays)})  # raises the named error
        raise
    if nout > 1:
        return tuple(scalar_or_array(r) for r in result)
    return scalar_or_array(result)
