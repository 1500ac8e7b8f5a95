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
from dpbounds._ufunc_table import by_name
from dpbounds._validation import check_args, scalar_or_array

__all__ = ["call"]


def call(name: str, **args: Any) -> Any:
    """Validate ``args`` against the declaration of ufunc ``name``, then evaluate it.

    The keyword names must be exactly the declared argument names (in any order).
    """
    spec = by_name(name)
    names = [a.name for a in spec.args]
    if sorted(args) != sorted(names):
        raise TypeError(f"{name} takes {names}, got {sorted(args)}")
    arrays = check_args({a.name: a.constraint for a in spec.args}, **{k: args[k] for k in names})
    result = getattr(_ufuncs, name)(*arrays)
    if spec.nout > 1:
        return tuple(scalar_or_array(r) for r in result)
    return scalar_or_array(result)
