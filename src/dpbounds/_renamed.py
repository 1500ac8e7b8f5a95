"""Old public names that broke the one naming rule, kept working with a DeprecationWarning.

The rule: C ``dpb_<name>`` -> ufunc ``<name>`` -> Python ``<name>`` (see
``src/dpbounds/_ufunc_table.py``).  A module lists its renamed names and installs the
module-level ``__getattr__`` this factory builds.
"""
from __future__ import annotations

from typing import Any, Callable

from dpbounds._errors import warn

__all__ = ["RENAMED", "renamed_getattr"]

#: old name -> new name, for every module that exported the old name
RENAMED = {
    "rho3": "lognormal_rho3",
    "max_gap_gaussian": "gaussian_max_gap",
    "mu_random_allocation": "gdp_mu_random_allocation",
    "mu_poisson": "gdp_mu_poisson",
    "mu_poisson_drs": "gdp_mu_poisson_drs",
}


def renamed_getattr(module: str, namespace: dict[str, Any], names: tuple[str, ...]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves the old ``names`` from ``namespace`` with a warning."""
    def __getattr__(name: str) -> Any:
        if name in names:
            new = RENAMED[name]
            warn(f"{module}.{name} is deprecated; use {module}.{new} (the same function)", DeprecationWarning)
            return namespace[new]
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__
