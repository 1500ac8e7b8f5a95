"""Bulk sweeps: one quantity over a grid of parameters, in memory or streamed to Parquet/CSV.

:func:`sweep` (exported as ``dpbounds.sweep``) evaluates any registered quantity -- the closed
forms through the compiled ufuncs on whole chunks, the exact accountants point by point --
over a Cartesian grid or a point list, on this process, local processes or dask.
:func:`parse_axis` turns an axis spec into its values; ``QUANTITIES`` is the registry.  See
docs/sweep.md.  The machinery is imported on the first call, so ``import dpbounds`` stays fast.

Reading order, bottom up: ``_axes`` (one axis, parsed), ``_grid`` (the points and their
chunks), ``_rdp`` and ``_quantities`` (what can be computed), ``_evaluate`` (one chunk),
``_interrupt`` and ``_engines`` (where chunks run and how they stop), ``_manifest``, ``_store``
and ``_writers`` (the files), ``_progress``, and ``_sweep``, the driver behind :func:`sweep`.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from dpbounds.sweeps._axes import INTEGER_AXES, parse_axis

if TYPE_CHECKING:   # at run time QUANTITIES is loaded on first access (__getattr__ below)
    from dpbounds.sweeps._quantities import QUANTITIES

__all__ = ["sweep", "parse_axis", "QUANTITIES", "INTEGER_AXES"]


def __getattr__(name: str) -> Any:
    if name == "QUANTITIES":
        from dpbounds.sweeps._quantities import QUANTITIES

        return QUANTITIES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sweep(quantity: str, *, out: str | os.PathLike[str] | None = None, chunk_size: int | None = None,
          progress: bool | None = None, engine: str = "local", zip: bool = False, resume: bool = False,
          overwrite: bool = False, workers: int | None = None, **axes: Any) -> Any:
    """Evaluate a quantity over a grid of parameters, in memory or streamed to a file.

    Parameters
    ----------
    quantity : str
        What to compute: a closed form (``"delta_bound"``, ``"rounds_required"``,
        ``"rounds_closed_form"``, ``"min_dataset_size"``, ``"tradeoff_clt"``,
        ``"tradeoff_edgeworth"``, ``"tradeoff_lower_bound"``, ``"gdp_epsilon"``, ``"gdp_delta"``,
        ``"gdp_mu_random_allocation"``, ``"gdp_mu_poisson"``, ``"gdp_mu_poisson_drs"``,
        ``"compose_delta"``, ``"per_epoch_delta"``), a Renyi-DP epsilon
        (``"rdp_epsilon_poisson"``, ``"rdp_epsilon_wor"``), an exact accountant
        (``"epsilon_random_allocation"``, ``"delta_random_allocation"``, ``"epsilon_poisson"``,
        ``"delta_poisson"``) or a calibration (``"noise_multiplier"``).  The axes and options
        of each: docs/sweep.md, or ``dpbounds sweep --list``.
    out : str or path, optional
        Write the long format (one row per point: axis columns, outputs, ``valid``, ``reason``)
        to a ``.parquet`` (needs pyarrow) or ``.csv`` file, chunk by chunk in constant memory,
        with a sidecar manifest ``<out>.sweep.json``.  The finished chunks are saved as they
        come in ``<out>.partial/``; ``out`` is written (atomically) only when the sweep is
        complete.  Without ``out`` the result is returned.
    chunk_size : int, optional
        Points per chunk (default: 2**20 for closed forms, a few points for the exact
        quantities).  Results do not depend on it.
    progress : bool or None
        ``None``: a progress bar on stderr when it is a terminal and the sweep runs longer
        than a second; ``True``: always (plain lines on stderr without tqdm); ``False``: never.
    engine : {"local", "processes", "dask"}
        Where the chunks are evaluated: this process, ``workers`` local processes, or dask (the
        active ``dask.distributed`` client, else dask's default scheduler).  All give the same
        results bit for bit.
    zip : bool
        False (default): the Cartesian grid of the axes in the order given (first axis
        slowest).  True: the axes are equally long point lists.
    resume : bool
        With ``out``: continue an interrupted sweep from the chunks it saved (those that still
        match their checksums; an error names what differs if the grid, quantity or options
        changed).
    overwrite : bool
        With ``out``: replace whatever is there -- a file that is not this sweep's output, a
        finished sweep of other parameters, an unfinished run.  Without it these are refused
        (naming the file) and left untouched; a finished output of the same sweep is replaced
        without asking.
    workers : int, optional
        Processes of the ``"processes"`` engine (default: the number of CPUs); threads of dask's
        default scheduler.
    **axes
        Each axis of the quantity: a number, a sequence or array, ``(start, stop, num,
        "lin"|"log")`` or ``"start:stop:num:lin|log"`` (see :func:`dpbounds.sweeps.parse_axis`);
        optional axes take their default.  Options (``coefficient="simplified"``, ...) go here
        too.

    Returns
    -------
    xarray.Dataset, dict or pathlib.Path
        Without ``out``: an ``xarray.Dataset`` when xarray is installed -- dimensions the axes
        (``point`` for ``zip=True``), coordinates their values (defaulted axes as scalar
        coordinates), data variables the outputs and ``valid``/``reason`` (and ``lower``,
        ``upper``, ``tolerance_met`` for the exact accountants) -- and otherwise a dict of numpy
        arrays with the same names and shapes.  With ``out``: its path.

    Raises
    ------
    DPBoundsError
        For an unknown quantity, axis or option, a malformed axis spec (naming the axis),
        unequal axes with ``zip=True``, a bad ``out`` suffix, a resume that does not match, an
        ``out`` that holds something else (see ``overwrite``), another sweep writing the same
        ``out`` at the same time, or a failed write (a full disk: the finished chunks are kept).
        Points outside the domain do not raise: they are kept, with ``valid`` False and the
        ``reason``.

    Notes
    -----
    The values equal those of the public functions at the same points bit for bit (the same
    compiled kernels); see docs/sweep.md for the validity rules, the file format, resuming and
    running on a dask cluster.  A sweep stopped by Ctrl-C, SIGTERM or SIGHUP saves its
    finished chunks, writes its manifest and removes its temporary files, then raises
    KeyboardInterrupt (Ctrl-C) or ends the process by that signal (SIGTERM, SIGHUP); even
    after SIGKILL, ``resume=True`` continues from the last chunks saved.

    Examples
    --------
    >>> import dpbounds
    >>> ds = dpbounds.sweep("delta_bound", sigma=[1.0, 2.0], rounds=(1e4, 1e6, 3, "log"))
    >>> ds["delta_bound"].shape
    (2, 3)
    >>> bool(ds["valid"].sel(sigma=2.0, rounds=1e6))
    True
    >>> float(ds["delta_bound"].sel(sigma=2.0, rounds=1e6)) == dpbounds.delta_bound(2.0, 1e6)
    True
    """
    from dpbounds.sweeps._sweep import run_sweep

    result, _ = run_sweep(quantity, out=out, chunk_size=chunk_size, progress=progress, engine=engine, zipped=zip,
                          resume=resume, overwrite=overwrite, workers=workers, axes=axes, count_invalid=False)
    return result
