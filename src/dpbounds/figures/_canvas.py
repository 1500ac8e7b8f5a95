"""A matplotlib Figure on its own Agg canvas, and saving it by the output's suffix (private).

Figures are built on :class:`matplotlib.figure.Figure` objects directly: no pyplot, so no
global state, nothing to close and nothing shared between threads.  matplotlib is imported
here, on first use, because it is an optional extra.
"""
from __future__ import annotations

import os
from typing import Any

from dpbounds._errors import DPBoundsError

__all__ = ["FORMATS", "new_figure", "save_figure"]

#: Output suffixes and the matplotlib format each one is written in.
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def new_figure(width: float, height: float) -> Any:
    """A ``matplotlib.figure.Figure`` of the given size in inches, with an Agg canvas."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError('dpbounds figures need matplotlib: pip install "dpbounds[plot]"') from None
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def output_format(path: str | os.PathLike[str], option: str = "output") -> str:
    """The format of ``path`` from its suffix (.png, .svg, .pdf); DPBoundsError naming ``option``."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMATS:
        raise DPBoundsError(f"{option} must end in {', '.join(FORMATS)} (the format is taken from the "
                            f"suffix), got {os.fspath(path)!r}")
    return FORMATS[suffix]


def save_figure(fig: Any, path: str | os.PathLike[str], dpi: float = 100.0, option: str = "output") -> None:
    """Write a figure to ``path`` in the format of its suffix.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or path-like
        Ends in ``.png``, ``.svg`` or ``.pdf``; anything else is a :class:`dpbounds.DPBoundsError`
        naming ``option``.
    dpi : float
        Resolution of PNG output (default 100).
    option : str
        The name the error message gives the path (the command line passes ``--output``).

    Notes
    -----
    The files carry no creation date or software version, so the same figure gives the same
    bytes on the same matplotlib.

    Examples
    --------
    >>> from dpbounds.figures import rounds_figure, save_figure
    >>> save_figure(rounds_figure(deltas=[0.01]), "rounds.svg")  # doctest: +SKIP
    """
    fmt = output_format(path, option)
    # a fixed creation date and no software version keep SVG/PDF output reproducible
    metadata: dict[str, Any] = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                                "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}[fmt]
    fig.savefig(path, format=fmt, dpi=dpi, metadata=metadata)
