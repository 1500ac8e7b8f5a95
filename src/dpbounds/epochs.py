"""Multi-epoch composition of f_{0,delta} guarantees (docs/epochs.md).

f_{0,d1} (x) f_{0,d2} = f_{0, 1-(1-d1)(1-d2)}, so E epochs that are each
f >= 1 - a - delta compose to f^{xE}(a) >= (1 - delta)^E - a.
"""
from __future__ import annotations

from typing import Any

from dpbounds._dispatch import call

__all__ = ["compose_delta", "per_epoch_delta"]


def compose_delta(delta: Any, epochs: Any) -> Any:
    """delta after E epochs: 1 - (1 - delta)^E, computed as -expm1(E log1p(-delta)).

    Parameters
    ----------
    delta : float or array_like
        Per-epoch delta in [0, 1].
    epochs : int or array_like
        Number of epochs E >= 1 (integer).

    Notes
    -----
    Relative error <= 1e-15 (tests/special/test_epochs.py), including delta = 1e-300.
    """
    return call("compose_delta", delta=delta, epochs=epochs)


def per_epoch_delta(delta_total: Any, epochs: Any) -> Any:
    """Per-epoch delta whose E-fold composition is delta_total: 1 - (1 - delta_total)^(1/E).

    Inverse of :func:`compose_delta` (computed as -expm1(log1p(-delta_total)/E)).
    """
    return call("per_epoch_delta", delta_total=delta_total, epochs=epochs)
